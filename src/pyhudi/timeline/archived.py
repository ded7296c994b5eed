"""The archived timeline: instants archival moved out of the active timeline (§1.5, §8).

| table version | location                                   | content                                   |
|---------------|--------------------------------------------|-------------------------------------------|
| 6             | `.hoodie/<hoodie.archivelog.folder>/.commits_.archive.<N>_<token>` | log files of `HoodieArchivedMetaEntry` records, one per archived timeline file (`codec.archived_entry`) |
| 8             | `.hoodie/timeline/history/`                | LSM timeline: `_version_` names the live `manifest_<N>` (JSON `{"files": [{"fileName", "fileLen"}]}`), whose parquet files hold `HoodieLSMTimelineInstant` rows (one per completed instant) |

Table version 6 archives every state file of an instant, so an instant appears up to three times
(requested, inflight, completed). Like the active timeline, the readers here keep one instant per
(time, completed action) with its highest state, unless `all_states=True`. Duplicates (an archival
that crashed after writing its file but before deleting the timeline files is archived again) are
collapsed the same way; such instants are also still in the active timeline, which wins when the
two are merged (`whole_timeline`).
"""

from __future__ import annotations

import json
import logging
import posixpath
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from pyhudi.codec.archived_entry import (
    ARCHIVE_EXTENSION,
    ARCHIVE_FILE_ID,
    ArchivedMetadata,
    decode_archive_log,
    entry_to_instant,
)
from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.commit_metadata import decode_commit_metadata
from pyhudi.codec.file_names import parse_log_file
from pyhudi.config import archival as keys
from pyhudi.exceptions import CorruptFileError, HudiError
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.storage import FileStatus
from pyhudi.timeline.timeline import COMMIT_ACTIONS

if TYPE_CHECKING:  # the table layer sits above the timeline layer
    from pyhudi.table.context import TableContext

log = logging.getLogger(__name__)
ArchivedEntry = tuple[Instant, ArchivedMetadata]
_LSM_VERSION_FILE = "_version_"
_LSM_MANIFEST_PREFIX = "manifest_"


def archive_folder(ctx: TableContext) -> str:
    """Table version 6: `.hoodie/<hoodie.archivelog.folder>` (`.hoodie` itself when empty)."""
    folder = ctx.config.archivelog_folder
    return posixpath.join(ctx.meta_path, folder) if folder else ctx.meta_path


def archive_files(ctx: TableContext) -> list[FileStatus]:
    """The archive log files of a version 6 table, by ascending version."""
    found = []
    for status in ctx.storage.list_dir(archive_folder(ctx)):
        parsed = None if status.is_dir else parse_log_file("", status.name, status.size_bytes)
        if parsed and parsed.file_id == ARCHIVE_FILE_ID and parsed.extension == ARCHIVE_EXTENSION:
            found.append((parsed.version, parsed.write_token or "", status))
    return [status for _, _, status in sorted(found, key=lambda item: item[:2])]


def read_archived_entries(ctx: TableContext, *, all_states: bool = False) -> list[ArchivedEntry]:
    """Archived instants with their metadata (`CommitMetadata`, an Avro dict, or None), sorted."""
    # Table version 8 replaced the archive log files with the LSM history.
    entries = _read_lsm_history(ctx) if ctx.config.version >= 8 else _read_archive_logs(ctx)
    if not all_states:
        entries = _highest_states(entries)
    return sorted(entries, key=lambda entry: entry[0].sort_key())


def read_archived_instants(ctx: TableContext, *, all_states: bool = False) -> list[Instant]:
    """The archived instants, sorted as timelines are (time, action, state)."""
    return [instant for instant, _ in read_archived_entries(ctx, all_states=all_states)]


def whole_timeline(ctx: TableContext) -> list[Instant]:
    """Archived then active instants: the table's history in order (the active copy wins)."""
    active = list(ctx.active.timeline)
    live = {(i.time, i.action.completed_action) for i in active}
    archived = [
        i for i in read_archived_instants(ctx) if (i.time, i.action.completed_action) not in live
    ]
    return sorted([*archived, *active], key=Instant.sort_key)


def _highest_states(entries: list[ArchivedEntry]) -> list[ArchivedEntry]:
    best: dict[tuple[str, Action], ArchivedEntry] = {}
    for entry in entries:
        instant = entry[0]
        key = (instant.time, instant.action.completed_action)
        current = best.get(key)
        if current is None or instant.state.rank >= current[0].state.rank:
            best[key] = entry
    return list(best.values())


# ---- table version 6: archive log files ------------------------------------------------------


def _read_archive_logs(ctx: TableContext) -> list[ArchivedEntry]:
    entries: list[ArchivedEntry] = []
    for status in archive_files(ctx):
        data = ctx.storage.read_bytes(status.path)
        for record in decode_archive_log(data, what=status.path):
            try:
                entries.append(entry_to_instant(record))
            except HudiError as err:  # an action this reader does not know: skip, as Hudi logs
                log.warning("skipping archived entry in %s: %s", status.path, err)
    return entries


# ---- table version 8: LSM history ------------------------------------------------------------


def history_folder(ctx: TableContext) -> str:
    """Table version 8: `.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>`."""
    props = ctx.config.props
    return posixpath.join(
        ctx.meta_path, keys.TIMELINE_PATH.get(props), keys.TIMELINE_HISTORY_PATH.get(props)
    )


def lsm_history_files(ctx: TableContext) -> list[str]:
    """The parquet files of the latest LSM snapshot (none when the history is empty)."""
    folder = history_folder(ctx)
    version = _latest_lsm_version(ctx, folder)
    if version is None:
        return []
    manifest_path = posixpath.join(folder, f"{_LSM_MANIFEST_PREFIX}{version}")
    try:
        manifest = json.loads(ctx.storage.read_bytes(manifest_path))
        names = [entry["fileName"] for entry in manifest.get("files") or []]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise CorruptFileError(f"cannot read LSM timeline manifest {manifest_path}: {err}") from err
    return [posixpath.join(folder, name) for name in names]


def _latest_lsm_version(ctx: TableContext, folder: str) -> int | None:
    """`_version_` when readable, else the highest `manifest_<N>` (Hudi's `LSMTimeline`)."""
    version_path = posixpath.join(folder, _LSM_VERSION_FILE)
    if ctx.storage.exists(version_path):
        try:
            return int(ctx.storage.read_text(version_path).strip())
        except ValueError:
            log.warning("unreadable %s; falling back to the manifest listing", version_path)
    versions = [
        int(status.name[len(_LSM_MANIFEST_PREFIX) :])
        for status in ctx.storage.list_dir(folder)
        if status.name.startswith(_LSM_MANIFEST_PREFIX)
        and status.name[len(_LSM_MANIFEST_PREFIX) :].isdigit()
    ]
    return max(versions, default=None)


def _read_lsm_history(ctx: TableContext) -> list[ArchivedEntry]:
    entries: list[ArchivedEntry] = []
    for path in lsm_history_files(ctx):
        columns = ["instantTime", "completionTime", "action", "metadata"]
        table = pq.read_table(path, columns=columns, filesystem=ctx.storage.fs)
        for row in table.to_pylist():
            entry = _lsm_entry(row, path)
            if entry is not None:
                entries.append(entry)
    return entries


def _lsm_entry(row: dict[str, Any], path: str) -> ArchivedEntry | None:
    try:
        action = Action(str(row["action"]))
        time = InstantTime(str(row["instantTime"]))
    except ValueError as err:
        log.warning("skipping LSM timeline row in %s: %s", path, err)
        return None
    completion = row.get("completionTime")
    instant = Instant(
        time, action, State.COMPLETED, InstantTime(completion) if completion else None
    )
    data = bytes(row.get("metadata") or b"")
    what = f"archived metadata of {instant}"
    if not data:
        return instant, None
    if action in COMMIT_ACTIONS:
        return instant, decode_commit_metadata(data, what=what)
    return instant, decode_container(data, what=what)
