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

The way back, Hudi 1.2's downgrade to version 6 (`EightToSevenDowngradeHandler
.downgradeFromLSMTimeline`, `MetadataConversionUtils.createMetaWrapper`): the rows of the latest
snapshot's files (sorted by file name, each in file order) become one completed
`HoodieArchivedMetaEntry` each, flushed in batches of `hoodie.commits.archival.batch` into new
archive files `.hoodie/archived/.commits_.archive.<next version>_1-0-1` (after those the upgrade
left), one Avro data block each, written with Hudi 1.2's schema text:

| field               | value                                                                 |
|---------------------|-----------------------------------------------------------------------|
| commitTime          | the row's instant time                                                |
| actionType          | its action (`replacecommit` for a `clustering`)                       |
| actionState         | `COMPLETED`                                                           |
| stateTransitionTime | its completion time                                                   |
| member              | by action: clean (and its plan when the row has one), commit and     |
|                     | deltacommit (and a compaction's plan), replace commit metadata (also |
|                     | as `HoodieInflightReplaceMetadata`), rollback, savepoint              |

Hudi reads commit metadata into its Java `HoodieCommitMetadata` and maps that back to Avro: a
write stat keeps the fields that class has, its `long` ones 0 when null (`numUpdates`,
`totalLogReadTimeMs`, ...), and loses the delta-write fields (`logVersion`, `logOffset`,
`baseFile`, `logFiles`) and `totalLogFiles`; the metadata's `version` is null.

Hudi's flusher drops the row that arrives when its buffer is full (the 11th, 22nd, ... with the
default batch of 10): pyhudi writes every row. The history stays in place (a version-6 reader
ignores `.hoodie/timeline/`). The files are written before `hoodie.properties` switches (a reader
at version 8/9 ignores `.hoodie/archived/`); the marker `.hoodie/archived/.pyhudi-downgrade`
records the highest archive version before them, so a rerun after a crash deletes what the
failed run wrote instead of archiving its instants twice (fault point
`downgrade.after_archive_file`, after each file). A commit row without metadata, or with JSON
metadata (an archive of Hudi before 0.13, upgraded), is written as Hudi's empty or JSON-read
metadata would map; Hudi's downgrade fails on both.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyhudi.codec.archived_entry import (
    ARCHIVED_ENTRY_WRITTEN_1X,
    archive_file_name,
    archived_entry_schema_json,
    commit_metadata_to_avro,
    decode_archive_log,
    encode_archive_log,
)
from pyhudi.codec.avro_schemas import decode_container, encode_container_1x
from pyhudi.codec.commit_metadata import decode_commit_metadata
from pyhudi.codec.file_names import parse_log_file
from pyhudi.codec.lsm_timeline import LsmInstant, decode_lsm_file
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError
from pyhudi.services.archival.lsm import LsmHistory
from pyhudi.table.context import TableContext
from pyhudi.table.downgrade import ARCHIVE_MARKER, delete_archive_marker
from pyhudi.table.faults import fault_point
from pyhudi.timeline.archived import archive_files, lsm_history_files

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
    delete_archive_marker(ctx)  # left by a downgrade that crashed after its switch
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


# ---- the way back: LSM history -> archive files ------------------------------------------------

#: Where Hudi's downgrade writes the archive files (`new StoragePath(metaPath, "archived")`).
_ARCHIVE_FOLDER = "archived"
#: The write token of every archive file Hudi's log writer rolls over to.
_ROLLOVER_TOKEN = "1-0-1"
#: Fields of Hudi 1.2's Java `HoodieWriteStat` (with `HoodieReadStats`) a stat keeps: `long`
#: ones (null becomes 0) and the others (null stays null). Any other Avro field comes back null.
_STAT_LONGS = frozenset(
    {
        "numWrites",
        "numDeletes",
        "numUpdateWrites",
        "numInserts",
        "numUpdates",
        "totalWriteBytes",
        "totalWriteErrors",
        "totalLogRecords",
        "totalLogFilesCompacted",
        "totalLogSizeCompacted",
        "totalLogReadTimeMs",
        "totalUpdatedRecordsCompacted",
        "totalLogBlocks",
        "totalCorruptLogBlock",
        "totalRollbackBlocks",
        "fileSizeInBytes",
    }
)
_STAT_OBJECTS = frozenset(
    {
        "fileId",
        "path",
        "prevCommit",
        "partitionPath",
        "tempPath",
        "cdcStats",
        "minEventTime",
        "maxEventTime",
        "prevBaseFile",
    }
)
_RUNTIME_LONGS = ("totalScanTime", "totalUpsertTime", "totalCreateTime")


def downgrade_lsm_history(ctx: TableContext, config: ArchivalConfig) -> int:
    """Write the instants of the LSM history of the version-8/9 table `ctx` as version-6 archive
    files (the module docstring); returns how many. Every row is converted before any file is
    written: a row Hudi cannot convert either fails the downgrade with the table as it was."""
    rows = [row for path in _history_files(ctx) for row in _decode(ctx, path)]
    folder = posixpath.join(ctx.meta_path, _ARCHIVE_FOLDER)
    marker = posixpath.join(folder, ARCHIVE_MARKER)
    entries = [_legacy_entry(row) for row in rows]
    if not entries:
        return 0
    before = _marked_version(ctx, marker)
    if before is None:
        before = _highest_version(ctx, folder)
        ctx.storage.write_bytes(marker, f"{before}\n".encode())
    else:  # a downgrade that crashed before its switch wrote the files after `before`
        for version, path in _archive_versions(ctx, folder):
            if version > before:
                log.info("deleting %s, written by a downgrade that did not finish", path)
                ctx.storage.delete(path)
    schema_json = archived_entry_schema_json(ARCHIVED_ENTRY_WRITTEN_1X)
    size = config.batch_size
    for number, start in enumerate(range(0, len(entries), size), start=before + 1):
        data = encode_archive_log(
            entries[start : start + size], batch_size=size, schema_json=schema_json
        )
        ctx.storage.create_new(
            posixpath.join(folder, archive_file_name(number, _ROLLOVER_TOKEN)), data
        )
        fault_point("downgrade.after_archive_file")
    log.info("%s: %d instants of the LSM history written as archive files", ctx.uri, len(entries))
    return len(entries)


def _history_files(ctx: TableContext) -> list[str]:
    """The latest snapshot's files, by file name (the order Hudi's `ArchivedTimelineLoaderV2`
    hands the rows on)."""
    return sorted(lsm_history_files(ctx), key=posixpath.basename)


def _decode(ctx: TableContext, path: str) -> list[LsmInstant]:
    return decode_lsm_file(ctx.storage.read_bytes(path), what=f"LSM timeline file {path}")


def _archive_versions(ctx: TableContext, folder: str) -> list[tuple[int, str]]:
    found = []
    for status in ctx.storage.list_dir(folder) if ctx.storage.is_dir(folder) else []:
        parsed = None if status.is_dir else parse_log_file("", status.name, status.size_bytes)
        if parsed is not None and parsed.extension == "archive":
            found.append((parsed.version, status.path))
    return found


def _highest_version(ctx: TableContext, folder: str) -> int:
    return max((version for version, _ in _archive_versions(ctx, folder)), default=0)


def _marked_version(ctx: TableContext, marker: str) -> int | None:
    """The version the marker records; None without one (or a torn one: written before any
    archive file, so nothing is to undo)."""
    try:
        return int(ctx.storage.read_text(marker).strip())
    except (OSError, ValueError):
        return None


def _legacy_entry(row: LsmInstant) -> dict[str, Any]:
    """`MetadataConversionUtils.createMetaWrapper(metaClient, lsmRecord)` of one row."""
    what = f"archived instant {row.instant_time} ({row.action})"
    entry: dict[str, Any] = {
        "commitTime": row.instant_time,
        "actionType": row.action,
        "actionState": "COMPLETED",
        "stateTransitionTime": row.completion_time,
        "version": None,
    }
    action = row.action
    if action == "clean":
        entry["hoodieCleanMetadata"] = _record(row.metadata, what)
        if row.plan is not None:
            entry["hoodieCleanerPlan"] = _record(row.plan, f"clean plan of {what}")
    elif action in ("commit", "deltacommit"):
        entry["hoodieCommitMetadata"] = _commit_metadata(row.metadata, what, replace=False)
        if row.plan is not None:
            entry["hoodieCompactionPlan"] = _record(row.plan, f"plan of {what}")
    elif action in ("replacecommit", "clustering"):
        entry["actionType"] = "replacecommit"
        entry["hoodieReplaceCommitMetadata"] = _commit_metadata(row.metadata, what, replace=True)
        if row.metadata:
            entry["HoodieInflightReplaceMetadata"] = _commit_metadata(
                row.metadata, what, replace=False
            )
    elif action == "rollback":
        entry["hoodieRollbackMetadata"] = _record(row.metadata, what)
    elif action == "savepoint":
        entry["hoodieSavePointMetadata"] = _record(row.metadata, what)
    elif action in ("compaction", "logcompaction"):
        entry["hoodieCompactionPlan"] = _record(row.plan, f"plan of {what}")
    else:
        raise UnsupportedOperationError(
            f"{what} cannot be written to a version-6 archive: Hudi 1.2's downgrade fails on it too"
        )
    return entry


def _record(data: bytes | None, what: str) -> dict[str, Any]:
    if not data:
        raise CorruptFileError(f"the LSM history holds no metadata for the {what}")
    return decode_container(data, what=what)


def _commit_metadata(data: bytes | None, what: str, *, replace: bool) -> dict[str, Any]:
    """The commit metadata as Hudi maps its Java object back to Avro (the module docstring)."""
    if data and data.startswith(b"Obj\x01"):
        record = decode_container(data, what=what)
    else:  # JSON (an archive of Hudi before 0.13 upgraded), or empty: Hudi's empty object
        record = commit_metadata_to_avro(
            decode_commit_metadata(data or b"", what=what), replace=replace
        )
        record["extraMetadata"].pop("ROLLING_STAT", None)
    out: dict[str, Any] = {
        "partitionToWriteStats": {
            partition: [_write_stat(stat) for stat in stats or ()]
            for partition, stats in (record.get("partitionToWriteStats") or {}).items()
        },
        "compacted": record.get("compacted"),
        "extraMetadata": record.get("extraMetadata"),
        "operationType": record.get("operationType"),
        "version": None,
    }
    if replace:
        out["partitionToReplaceFileIds"] = record.get("partitionToReplaceFileIds") or {}
    return out


def _write_stat(stat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {name: stat.get(name) or 0 for name in _STAT_LONGS}
    out.update({name: stat.get(name) for name in _STAT_OBJECTS})
    runtime = stat.get("runtimeStats")
    if runtime is not None:
        out["runtimeStats"] = {name: runtime.get(name) or 0 for name in _RUNTIME_LONGS}
    return out


__all__ = ["downgrade_lsm_history", "migrate_archived_timeline"]
