"""Timeline archival: move old instants out of the active timeline.

Table version 6 (Hudi 0.14 `HoodieTimelineArchiver`): from `.hoodie/` into the next archive log
file `.hoodie/archived/.commits_.archive.<N>_1-0-1`. Table versions 8 and 9 (Hudi 1.2
`TimelineArchiverV2`): from `.hoodie/timeline/` into the LSM history (`archive_lsm`,
`pyhudi.services.archival.lsm`).

What is archived is `pyhudi.services.archival.plan`'s business (`plan_archival`).

How (`archive`): every timeline file of the chosen instants (requested, inflight, completed) becomes
one `HoodieArchivedMetaEntry`, written as a new archive file (never appended, as Hudi does on
storage without append), one AVRO_DATA_BLOCK per `hoodie.commits.archival.batch` entries. Only
then are the timeline files deleted: requested, then inflight, then completed files in ascending
time (HUDI-7207). A crash before the deletes leaves the instants active (archived twice at worst,
which readers collapse); a crash during them never leaves a pending file whose completed file
is gone while the pending one remains.

Versions 8 and 9 (`archive_lsm`): the instants' rows are written as one layer-0 parquet file of
the history and a new manifest (`LsmHistory.write_instants`), then the timeline files are deleted
in the same order, then the history's layers are compacted and cleaned. A crash before the
manifest leaves the instants active (the file is rewritten next time); after it, they are in both
places until the next archival deletes them, which writes nothing again for a file the manifest
lists. The `hoodie.metadata.*` keys are not applied there: pyhudi does not maintain a version 8/9
metadata table yet, so archival leaves it as it is (and stops at its latest compaction).
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

from pyhudi.codec.archived_entry import (
    ARCHIVE_EXTENSION,
    ARCHIVE_FILE_ID,
    archive_file_name,
    build_entry,
    encode_archive_log,
)
from pyhudi.codec.file_names import (
    instant_file_name,
    parse_instant_file,
    parse_log_file,
)
from pyhudi.config.archival import ArchivalConfig
from pyhudi.config.metadata import METADATA_ENABLE
from pyhudi.exceptions import CommitConflictError, UnsupportedVersionError
from pyhudi.metadata.writer import metadata_enabled, prepare_metadata_table
from pyhudi.model.instant import Action, Instant, State
from pyhudi.model.results import ArchiveResult
from pyhudi.services.archival.lsm import ArchivedAction, LsmHistory
from pyhudi.services.archival.plan import plan_archival
from pyhudi.storage import FileStatus
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.lock import table_transaction
from pyhudi.timeline.archived import archive_files, archive_folder
from pyhudi.timeline.instant_time import format_instant

log = logging.getLogger(__name__)
TimelineFile = tuple[Instant, FileStatus]


def archive(
    ctx: TableContext, config: ArchivalConfig, *, lock_options: Mapping[str, str] | None = None
) -> ArchiveResult:
    """Archive what `plan_archival` chooses; see the module docstring for the order of writes.

    Under the table lock when `lock_options` configure one (Hudi's archiver takes the transaction
    lock too), so a concurrent writer's conflict check never reads a timeline half archived. Their
    `hoodie.metadata.*` keys apply first, as Hudi's write client applies them (false deletes the
    metadata table, a disabled index drops its partition); on versions 8 and 9 they do not (the
    module docstring).
    """
    if ctx.config.version >= 8:
        check_lsm_archival(ctx)
        with table_transaction(ctx, lock_options):
            _warn_metadata_table_kept(ctx, lock_options)
            return archive_lsm(ctx, config)
    ctx.config.check_writable(ctx.base_path)
    with table_transaction(ctx, lock_options):
        if lock_options is not None:
            prepare_metadata_table(ctx, lock_options)
        return _archive(ctx, config)


#: The table versions whose archival pyhudi writes as Hudi 1.2 does (the LSM history).
LSM_ARCHIVAL_VERSIONS = (8, 9)


def check_lsm_archival(ctx: TableContext) -> None:
    """Archival's own check on version 8/9 tables (writes there are not all open yet)."""
    ctx.config.check_readable(ctx.base_path)
    if ctx.config.version not in LSM_ARCHIVAL_VERSIONS or ctx.config.timeline_layout_version < 2:
        raise UnsupportedVersionError(
            f"pyhudi archives tables of version 6, 8 and 9 (timeline layout 2); {ctx.base_path} "
            f"has version {ctx.config.version}, timeline layout "
            f"{ctx.config.timeline_layout_version}"
        )


def _warn_metadata_table_kept(ctx: TableContext, options: Mapping[str, str] | None) -> None:
    if options is None or metadata_enabled(options):
        return
    if "files" in ctx.config.metadata_partitions:
        log.warning(
            "%s=false: pyhudi leaves the metadata table of version %d table %s as it is (Hudi's "
            "next write deletes it)",
            METADATA_ENABLE.key,
            ctx.config.version,
            ctx.base_path,
        )


def archive_lsm(ctx: TableContext, config: ArchivalConfig) -> ArchiveResult:
    """Table versions 8 and 9: archive into the LSM history (module docstring), under the caller's
    lock."""
    ctx.active.reload()
    instants = plan_archival(ctx, config)
    if not instants:
        return ArchiveResult()
    files = _timeline_files_of(ctx, instants)
    actions = _archived_actions(files)
    if not actions:
        return ArchiveResult()
    for action in actions:  # Hudi deletes an instant's markers before writing its row
        ctx.storage.delete_dir(ctx.marker_folder(action.time))
    history = LsmHistory(ctx, config)
    path = history.write_instants(actions)
    _delete_timeline_files(ctx, files)
    history.compact_and_clean()
    ctx.active.reload()
    archived = tuple(a.completed[0] for a in actions)
    return ArchiveResult(archived, path, len(files))


def _archived_actions(files: list[TimelineFile]) -> list[ArchivedAction]:
    """One `ArchivedAction` per instant with a completed file, by instant time (Hudi's order)."""
    grouped: dict[tuple[str, Action], list[TimelineFile]] = {}
    for instant, status in files:
        grouped.setdefault((instant.time, instant.action.completed_action), []).append(
            (instant, status)
        )
    actions = []
    for key in sorted(grouped):
        group = grouped[key]
        if any(i.state is State.COMPLETED for i, _ in group):
            actions.append(ArchivedAction.of(group))
    return actions


def _archive(ctx: TableContext, config: ArchivalConfig) -> ArchiveResult:
    ctx.active.reload()
    instants = plan_archival(ctx, config)
    if not instants:
        return ArchiveResult()
    files = _timeline_files_of(ctx, instants)
    entries = [_entry(ctx, instant, status) for instant, status in files]
    path = _next_archive_path(ctx)
    try:
        ctx.storage.create_new(path, encode_archive_log(entries, batch_size=config.batch_size))
    except FileExistsError as err:
        raise CommitConflictError(
            f"archive file already exists (concurrent archival?): {path}"
        ) from err
    for time in sorted({i.time for i in instants}):
        ctx.storage.delete_dir(ctx.marker_folder(time))
    _delete_timeline_files(ctx, files)
    ctx.active.reload()
    return ArchiveResult(tuple(instants), path, len(files))


def _timeline_files_of(ctx: TableContext, instants: Iterable[Instant]) -> list[TimelineFile]:
    """Every state file of the instants (Hudi's raw active timeline, grouped by comparable action)."""
    wanted = {(i.time, i.action.completed_action) for i in instants}
    files = []
    for status in ctx.storage.list_dir(ctx.active.timeline_path):
        instant = None if status.is_dir else parse_instant_file(status.name)
        if instant is not None and (instant.time, instant.action.completed_action) in wanted:
            files.append((instant, status))
    return sorted(files, key=lambda item: item[0].sort_key())


def _entry(ctx: TableContext, instant: Instant, status: FileStatus) -> dict[str, object]:
    source = status.path
    if instant.is_pending and instant.action in (Action.COMPACTION, Action.LOG_COMPACTION):
        # CompactionUtils.getCompactionPlan reads the plan from the requested file for both states.
        requested = Instant(instant.time, instant.action, State.REQUESTED)
        source = posixpath.join(ctx.active.timeline_path, instant_file_name(requested))
    content = ctx.storage.read_bytes(source) if ctx.storage.exists(source) else b""
    return build_entry(instant, content, state_transition_time=_transition_time(ctx, status))


def _transition_time(ctx: TableContext, status: FileStatus) -> str | None:
    """The file's modification time as an instant time, in the table's timeline time zone."""
    if status.mtime_ns is None:
        return None
    seconds = status.mtime_ns / 1e9
    if ctx.config.timeline_timezone_utc:
        return format_instant(datetime.fromtimestamp(seconds, tz=timezone.utc))
    return format_instant(datetime.fromtimestamp(seconds))


def _next_archive_path(ctx: TableContext) -> str:
    """`.commits_.archive.<max version + 1>_1-0-1`: Hudi's rollover on storage without append."""
    latest = 0
    for status in archive_files(ctx):
        parsed = parse_log_file("", status.name)
        if parsed and parsed.file_id == ARCHIVE_FILE_ID and parsed.extension == ARCHIVE_EXTENSION:
            latest = max(latest, parsed.version)
    return posixpath.join(archive_folder(ctx), archive_file_name(latest + 1))


def _delete_timeline_files(ctx: TableContext, files: list[TimelineFile]) -> None:
    """Requested, then inflight, then completed files in ascending time (Hudi's order)."""
    for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
        if state is State.COMPLETED:
            fault_point("archival.after_pending_files_deleted")
        for instant, status in files:
            if instant.state is state:
                ctx.storage.delete(status.path)
