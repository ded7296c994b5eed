"""A version-6 table's archived timeline moved into the LSM history, as Hudi 1.2's upgrade to
version 8 does it (`SevenToEightUpgradeHandler.upgradeToLSMTimeline` with
`LegacyArchivedMetaEntryReader`).

Hudi reads the archive files `.hoodie/archived/.commits_.archive.<N>_<token>` from the highest
version down, each in file order, groups consecutive entries of one instant time into an action
(its requested, inflight and completed entries), and writes the actions in batches of
`hoodie.commits.archival.batch` as layer-0 files of the history (`<first>_<last>_0.parquet`, named
by the batch's first and last instant in that order, not sorted), each followed by the history's
compaction and cleaning. One row per action:

| column           | value                                                                    |
|------------------|--------------------------------------------------------------------------|
| instantTime      | the entries' `commitTime`                                                 |
| completionTime   | the completed entry's `stateTransitionTime`                               |
| action           | the completed entry's action (`commit` for a compaction)                  |
| metadata         | the completed entry's member for its action, re-encoded as Hudi 1.2's Avro |
| plan             | a compaction's: the requested entry's compaction plan                    |

A member is looked up by the entry's action alone (`hoodieCleanMetadata` for every clean entry,
`hoodieReplaceCommitMetadata` for every replacecommit entry), so a clean's plan and a clustering's
plan are not carried over: they are null in Hudi's history too. Hudi leaves the archive files in
place; so does pyhudi.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyhudi.codec.archived_entry import decode_archive_log
from pyhudi.codec.avro_schemas import encode_container_1x
from pyhudi.codec.file_names import parse_log_file
from pyhudi.codec.lsm_timeline import LsmInstant
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import CorruptFileError
from pyhudi.services.archival.lsm import LsmHistory
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import archive_files

log = logging.getLogger(__name__)

#: The member an archived entry's metadata is read from, by the entry's action
#: (`LegacyArchivedMetaEntryReader.getMetadataKey`), and the record it holds.
_MEMBERS = {
    "clean": ("hoodieCleanMetadata", "HoodieCleanMetadata"),
    "commit": ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    "deltacommit": ("hoodieCommitMetadata", "HoodieCommitMetadata"),
    "rollback": ("hoodieRollbackMetadata", "HoodieRollbackMetadata"),
    "savepoint": ("hoodieSavePointMetadata", "HoodieSavepointMetadata"),
    "compaction": ("hoodieCompactionPlan", "HoodieCompactionPlan"),
    "logcompaction": ("hoodieCompactionPlan", "HoodieCompactionPlan"),
    "replacecommit": ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    "clustering": ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata"),
    "indexing": ("hoodieIndexCommitMetadata", "HoodieIndexCommitMetadata"),
}
_PLAN_FROM_REQUESTED = ("clean", "compaction", "logcompaction")
Entry = Mapping[str, Any]


def migrate_archived_timeline(ctx: TableContext, config: ArchivalConfig) -> int:
    """Write the archived instants of the version-6 table `ctx` into its LSM history
    (`.hoodie/timeline/history/`, cleared first: only an interrupted upgrade wrote there);
    returns how many instants moved."""
    history = LsmHistory(ctx, config)
    for status in ctx.storage.list_dir(history.folder):  # left by an upgrade that crashed
        if not status.is_dir:
            ctx.storage.delete(status.path)
    moved = 0
    batch: list[LsmInstant] = []
    for group in _actions(ctx):
        batch.append(_row(group))
        if len(batch) == config.batch_size:
            moved += _write(history, batch)
            batch = []
    if batch:
        moved += _write(history, batch)
    if moved:
        log.info("%s: %d archived instants moved into the LSM history", ctx.uri, moved)
    return moved


def _write(history: LsmHistory, rows: Sequence[LsmInstant]) -> int:
    history.write_rows(rows)
    history.compact_and_clean()
    return len(rows)


def _entries(ctx: TableContext) -> Iterator[Entry]:
    """Every archived entry: the archive files from the highest version down (Hudi's
    `ArchiveLogVersionComparator`; equal versions in listing order), each in file order."""
    files = archive_files(ctx)
    versions = {
        status.path: parsed.version
        for status in files
        if (parsed := parse_log_file("", status.name, status.size_bytes)) is not None
    }
    for status in sorted(files, key=lambda s: -versions.get(s.path, 0)):
        yield from decode_archive_log(ctx.storage.read_bytes(status.path), what=status.path)


def _actions(ctx: TableContext) -> Iterator[list[Entry]]:
    """Consecutive entries of one instant time."""
    group: list[Entry] = []
    for entry in _entries(ctx):
        if group and str(entry["commitTime"]) != str(group[0]["commitTime"]):
            yield group
            group = []
        group.append(entry)
    if group:
        yield group


def _row(group: Sequence[Entry]) -> LsmInstant:
    by_state = {str(e["actionState"]).upper(): e for e in group}
    completed = by_state.get("COMPLETED")
    time = str(group[0]["commitTime"])
    if completed is None or len(group) > 3:
        states = ", ".join(str(e["actionState"]) for e in group)
        raise CorruptFileError(
            f"archived instant {time} has the entries {states}, not at most one requested, "
            "inflight and completed: Hudi's upgrade fails on it too"
        )
    return LsmInstant(
        instant_time=time,
        completion_time=_text(completed.get("stateTransitionTime")),
        action=str(completed["actionType"]),
        metadata=_details(completed),
        plan=_plan(by_state.get("REQUESTED"), by_state.get("INFLIGHT")),
    )


def _plan(requested: Entry | None, inflight: Entry | None) -> bytes | None:
    """The plan of `MetadataConversionUtils.createLSMTimelineInstant`, from the details the
    reader keeps: the requested entry's for a clean or a compaction, the inflight's (else the
    requested's) for a replace commit."""
    pending = requested or inflight
    if pending is None:
        return None
    kind = str(pending["actionType"])
    if kind in _PLAN_FROM_REQUESTED:
        return None if requested is None else _details(requested)
    if kind in ("replacecommit", "clustering"):
        plans = [_details(e) for e in (inflight, requested) if e is not None]
        return next((p for p in plans if p), None)
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _details(entry: Entry) -> bytes | None:
    """The entry's metadata bytes as Hudi 1.2 re-encodes them: the member record in an Avro
    container of Hudi 1.2's schema; a JSON commit metadata (Hudi before 0.13) as its text."""
    member = _MEMBERS.get(str(entry["actionType"]))
    if member is None:
        return None
    value = entry.get(member[0])
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    return encode_container_1x(member[1], dict(value))


__all__ = ["migrate_archived_timeline"]
