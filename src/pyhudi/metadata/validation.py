"""Validating a metadata table against the data table's files (Hudi's `HoodieMetadataTableValidator`).

`validate(path)` runs every check that applies and returns a `ValidationReport` naming each
`Difference`:

| check              | metadata table side                        | storage side                                  |
|--------------------|--------------------------------------------|-----------------------------------------------|
| `partitions`       | `files` partition list                     | partitions holding a committed data file      |
| `files`            | per partition: file names and sizes        | committed data files (their instant completed) |
| `latest_base_files`| latest base files of a view over the listing | the same from a directory listing             |
| `latest_file_slices`| latest merged slices (base + logs), ditto | ditto                                         |
| `column_stats`     | (file, column) min/max/null/value counts   | the latest parquet base files' footers        |
| `bloom_filters`    | an entry per latest base file              | the latest base files                         |
| `record_index`     | record key -> (partition, file group)      | the keys of the latest snapshot (slices read) |

"Committed": a file whose file-name instant is a completed instant at or before `as_of`, or older
than the active timeline (archived); a log file also needs a block of a completed instant or to be
a failed write's log file that a completed rollback lists. `column_stats`, `bloom_filters` and `record_index` run when
the metadata table has that partition.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Set
from dataclasses import replace
from typing import Any

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.service_plans import clean_plan_from_avro
from pyhudi.fs_view import FileSystemView
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.metadata.column_stats_check import column_stats_differences
from pyhudi.metadata.listing import files_listing, metadata_view
from pyhudi.metadata.reader import MetadataTable
from pyhudi.metadata.record_index_check import record_index_differences
from pyhudi.metadata.report import Difference, ValidationReport
from pyhudi.metadata.rollback_records import rollback_files_records
from pyhudi.model.file import BaseFile, FileSlice
from pyhudi.model.instant import Action
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX = "column_stats", "bloom_filters", "record_index"

__all__ = [
    "Difference",
    "ValidationReport",
    "bloom_filter_differences",
    "committed_data_files",
    "file_name_id",
    "validate",
]


def validate(path: str | TableContext, as_of: str | None = None) -> ValidationReport:
    """Compare the metadata table of the table at `path` with its files, as of `as_of`."""
    ctx = path if isinstance(path, TableContext) else TableContext.open(path)
    mdt = MetadataTable.open(ctx, as_of=as_of)
    on_storage = committed_data_files(ctx.view(), as_of, ctx.storage)
    # Both views see only committed files: a log written after `as_of` is in neither.
    storage_view = replace(ctx.view(), listing_source=lambda: files_listing(ctx, on_storage))
    listed_view = metadata_view(ctx, mdt)
    differences: list[Difference] = []
    pending_deletes = _pending_clean_deletes(ctx, as_of)
    differences += _partition_and_file_differences(mdt.all_files(), on_storage, pending_deletes)
    differences += _base_file_differences(listed_view, storage_view, as_of)
    differences += _slice_differences(listed_view, storage_view, as_of)
    checks = ["partitions", "files", "latest_base_files", "latest_file_slices"]
    skipped: list[str] = []
    latest = storage_view.latest_base_files(as_of)
    for name in (COLUMN_STATS, BLOOM_FILTERS, RECORD_INDEX):
        if name not in mdt.partitions():
            skipped.append(f"{name}: the metadata table has no {name} partition")
            continue
        checks.append(name)
        if name == COLUMN_STATS:
            logs = [lf for s in storage_view.latest_merged_file_slices(as_of) for lf in s.log_files]
            found, note = column_stats_differences(ctx, mdt.records(name).values(), latest, logs)
            differences += found
            skipped += [f"{name}: {note}"] if note else []
        elif name == BLOOM_FILTERS:
            differences += bloom_filter_differences(mdt.records(name).values(), latest)
        else:
            slices = storage_view.latest_merged_file_slices(as_of)
            differences += record_index_differences(ctx, mdt.records(name).values(), slices, as_of)
    return ValidationReport(
        ctx.base_path, as_of, tuple(checks), tuple(skipped), tuple(sorted(differences))
    )


# ---- files ---------------------------------------------------------------------------------------
def committed_data_files(
    view: FileSystemView, as_of: str | None, storage: Storage | None = None
) -> dict[str, dict[str, int]]:
    """Data files on storage by partition (name -> size) whose file-name instant is committed.

    With `storage` (to read log headers), a log file also needs a block of a completed instant,
    or to be a log file of a failed write that a completed rollback covered (Hudi lists both; a
    log file holding only blocks of a failed or pending write is in no listing, as in Hudi's
    validator, which skips log files without committed blocks)."""
    writes = view.timeline.write_timeline()
    completed = set(writes.completed().up_to(as_of).times())
    # A log file of the slice a pending compaction opened is named after the compaction instant.
    compactions = set(view.timeline.with_actions(Action.COMPACTION).pending().up_to(as_of).times())
    rolled_back = _rolled_back_log_files(view, as_of) if storage is not None else set()
    every_completed = {str(t) for t in view.timeline.completed().up_to(as_of).times()}
    found: dict[str, dict[str, int]] = {}
    for partition, statuses in view.listing.files.items():
        for status in statuses:
            instant = _file_instant(partition, status.name)
            if instant is None or (as_of is not None and instant > as_of):
                continue
            is_log = status.name.startswith(".")
            if not (
                instant in completed
                or writes.is_before_start(instant)
                or (is_log and instant in compactions)
            ):
                continue
            if storage is not None and is_log:
                committed = status.name in rolled_back or _has_block_of(
                    storage, status.path, every_completed, writes.is_before_start
                )
                if not committed:
                    continue
            found.setdefault(partition, {})[status.name] = status.size_bytes
    return found


def _has_block_of(
    storage: Storage, path: str, completed: set[str], archived: Callable[[str], bool]
) -> bool:
    with storage.open_input(path) as handle:
        for block in iter_blocks(handle):
            time = None if block.is_corrupt else block.instant_time
            if time is not None and (time in completed or archived(time)):
                return True
    return False


def _rolled_back_log_files(view: FileSystemView, as_of: str | None) -> set[str]:
    """Names of the log files completed rollbacks list in the `files` partition (the failed
    writes' logs left on storage and the ROLLBACK command-block logs): `rollback_files_records`,
    the records the metadata writer commits for each rollback; a restore's rollbacks (their
    instants deleted, their metadata in the restore's) list theirs through its sync commit."""
    names: set[str] = set()
    done = view.timeline.completed().up_to(as_of)
    for instant in done.with_actions(Action.ROLLBACK, Action.RESTORE):
        content = view.active.read_content(instant)
        if not content:
            continue
        metadata = decode_container(content, what=f"{instant.action.value} {instant.time}")
        rollbacks = [metadata]
        if instant.action is Action.RESTORE:
            rollbacks = [r for rs in metadata["hoodieRestoreMetadata"].values() for r in rs if r]
        for rollback in rollbacks:
            for record in rollback_files_records(rollback):
                names.update(record.live_files)
    return names


def _file_instant(partition: str, name: str) -> str | None:
    if name.startswith("."):
        log = parse_log_file(partition, name)
        return log.base_instant_time if log is not None and log.extension == "log" else None
    base = parse_base_file(partition, name)
    return base.instant_time if base is not None else None


def _pending_clean_deletes(ctx: TableContext, as_of: str | None) -> set[tuple[str, str]]:
    """(partition, file name) of every file a pending clean plans to delete: a clean that died
    after deleting some of them lists them in the metadata table until it completes (Hudi writes
    the clean's metadata deltacommit only when the clean commits)."""
    planned: set[tuple[str, str]] = set()
    for instant in ctx.active.timeline.with_actions(Action.CLEAN).pending().up_to(as_of):
        record = read_requested_plan(ctx.active, instant)
        if record:
            plan = clean_plan_from_avro(record, ctx.uri)
            planned.update((p, n) for p, names in plan.file_names().items() for n in names)
    return planned


def _partition_and_file_differences(
    listed: dict[str, dict[str, int]],
    on_storage: dict[str, dict[str, int]],
    pending_deletes: Set[tuple[str, str]] = frozenset(),
) -> list[Difference]:
    found = [
        Difference("partitions", p, p, _side(p in listed))
        for p in sorted(set(listed) ^ set(on_storage))
    ]
    for partition in sorted(set(listed) | set(on_storage)):
        mine, theirs = listed.get(partition, {}), on_storage.get(partition, {})
        for name in sorted(set(mine) | set(theirs)):
            if name not in theirs and (partition, name) in pending_deletes:
                continue  # deleted by a clean that has not completed yet
            if name not in mine or name not in theirs:
                found.append(Difference("files", partition, name, _side(name in mine)))
            elif mine[name] != theirs[name]:
                detail = f"{mine[name]} bytes in the metadata table, {theirs[name]} on storage"
                found.append(Difference("files", partition, name, detail))
    return found


def _side(in_metadata: bool) -> str:
    return (
        "in the metadata table, not on storage"
        if in_metadata
        else "on storage, not in the metadata table"
    )


# ---- latest base files and file slices -----------------------------------------------------------
def _base_file_differences(
    listed: FileSystemView, storage: FileSystemView, as_of: str | None
) -> list[Difference]:
    def by_group(view: FileSystemView) -> dict[tuple[str, str], str]:
        return {(b.partition_path, b.file_id): b.file_name for b in view.latest_base_files(as_of)}

    return _compare("latest_base_files", by_group(listed), by_group(storage))


def _slice_differences(
    listed: FileSystemView, storage: FileSystemView, as_of: str | None
) -> list[Difference]:
    def by_group(view: FileSystemView) -> dict[tuple[str, str], str]:
        return {
            (s.partition_path, s.file_id): _describe(s)
            for s in view.latest_merged_file_slices(as_of)
        }

    return _compare("latest_file_slices", by_group(listed), by_group(storage))


def _describe(piece: FileSlice) -> str:
    base = piece.base_file.file_name if piece.base_file else "no base file"
    logs = ", ".join(log.file_name for log in piece.log_files)
    return f"{base} + logs [{logs}]" if logs else base


def _compare(
    check: str, listed: dict[tuple[str, str], str], storage: dict[tuple[str, str], str]
) -> list[Difference]:
    found = []
    for partition, file_id in sorted(set(listed) | set(storage)):
        mine, theirs = listed.get((partition, file_id)), storage.get((partition, file_id))
        if mine != theirs:
            detail = (
                f"file group {file_id}: {mine or 'absent'} from the metadata table listing, "
                f"{theirs or 'absent'} from the storage listing"
            )
            found.append(Difference(check, partition, file_id, detail))
    return found


# ---- bloom filters -------------------------------------------------------------------------------
def bloom_filter_differences(records: Iterable[Any], latest: list[BaseFile]) -> list[Difference]:
    """Each latest base file has a live `bloom_filters` entry (key: partition id + file-name id)."""
    live = {
        r.key[-24:] for r in records if r.bloom_filter is not None and not r.bloom_filter.is_deleted
    }
    return [
        Difference(BLOOM_FILTERS, b.partition_path, b.file_name, "no bloom filter entry")
        for b in latest
        if file_name_id(b.file_name) not in live
    ]


def file_name_id(file_name: str) -> str:
    """Hudi's `FileIndexID`: the base64 of the file name's MD5 (the last 24 key characters)."""
    return base64.b64encode(hashlib.md5(file_name.encode()).digest()).decode()
