"""Keeping the metadata table's `record_index` partition in step with the data table's writes.

As Hudi 0.14's `HoodieBackedTableMetadataWriter` does for table version 6:

* initialisation (`initializeRecordIndexPartition`): every record key of the latest snapshot, at
  its partition, file group and slice instant, spread over `record_index_file_group_count(keys)`
  file groups (`record-index-NNNN-0`, bounded by `hoodie.metadata.record.index.{min,max}.filegroup
  .count`), one base HFile each (empty ones too: the file group count is the number of groups);
* every data instant (`getRecordIndexUpdates`): the keys the instant wrote to a new location (an
  insert, a key moved by clustering or a partition change) as records, and the keys it removed
  (deleted, or in a file group it replaced and not written again) as a DELETE block, in the
  record-index file groups the keys hash to; compaction moves no key and writes nothing.

Where the keys come from: the write task that wrote a new base file returns the keys it added to
its file group and the keys it dropped (`pyhudi.file_group.index_results`: it holds the old base
file's rows and the new file's in memory), when the write asks for them (`collect_keys`). A task
appending a log file returns them when the write's index located its records exactly (the record
index: upserts of keys not located in the group are new to it, deletes of located keys leave it;
an update-only upsert changes nothing). Every other file group (a log file appended under a
file-based or bucket index, a service's or bootstrap's write, a file group an insert_overwrite
or clustering replaced, a slice the task did not merge over) is read on the driver: the record keys of the file group before and after the instant are compared (the
`_hoodie_record_key` column of base files, a projection of one column; a slice with log files is
merged), which is exact for every action (inserts into small files, global index partition moves).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.file_names import parse_log_file
from pyhudi.codec.metadata_keys import file_group_indexes
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.codec.schema import RECORD_KEY, with_meta_fields
from pyhudi.config import metadata as mkeys
from pyhudi.file_group.index_results import FileIndexResult
from pyhudi.file_group.slice_reader import read_slice
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import resolve_merge_config
from pyhudi.metadata.deltacommit import GroupWrite
from pyhudi.metadata.index_records import (
    RECORD_INDEX_PARTITION,
    RecordIndexSizing,
    record_index_delete_records,
    record_index_file_group_count,
    record_index_file_group_id,
    record_index_records,
)
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.file import FileSlice, LogFile
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema

Location = tuple[str, str, str]  # (partition, file id, instant time)
_NO_KEY_CHANGES = (WriteOperationType.COMPACT, WriteOperationType.LOG_COMPACT)


def record_index_setting(options: Mapping[str, str]) -> bool | None:
    """`hoodie.metadata.record.index.enable` as the write sets it, None when it does not."""
    key = mkeys.RECORD_INDEX_ENABLE
    return key.get(options) if key.is_set(options) else None


def maintains_record_index(ctx: TableContext, options: Mapping[str, str]) -> bool:
    """Explicitly enabled, or unset on a table that has a record index."""
    setting = record_index_setting(options)
    if setting is not None:
        return setting
    return RECORD_INDEX_PARTITION in ctx.config.metadata_partitions


def initial_record_index(ctx: TableContext, options: Mapping[str, str]) -> list[GroupWrite]:
    """The base file contents of a new record index over the table's latest snapshot."""
    visible = frozenset(ctx.active.reload().timeline.commits().completed().times())
    located: dict[str, Location] = {}
    for piece in ctx.view().latest_merged_file_slices():
        where = (piece.partition_path, piece.file_id, str(piece.base_instant_time))
        for key in slice_keys(ctx, piece, visible):
            located[key] = where
    sizing = RecordIndexSizing(
        min_file_group_count=mkeys.RECORD_INDEX_MIN_FILE_GROUP_COUNT.get(options),
        max_file_group_count=mkeys.RECORD_INDEX_MAX_FILE_GROUP_COUNT.get(options),
    )
    count = record_index_file_group_count(len(located), sizing)
    return _group_writes(ctx, count, located, set())


def record_index_updates(
    ctx: TableContext,
    instant_time: str,
    metadata: CommitMetadata,
    file_group_count: int,
    results: Mapping[tuple[str, str], FileIndexResult] | None = None,
) -> list[GroupWrite]:
    """The record-index changes of data instant `instant_time` (not completed yet); `results`:
    the write tasks' key changes per (partition, file name), used where they are exact."""
    if metadata.operation_type in _NO_KEY_CHANGES:
        return []
    before = frozenset(ctx.active.reload().timeline.commits().completed().times())
    after = before | {instant_time}
    previous = {(s.partition_path, s.file_id): s for s in ctx.view().latest_merged_file_slices()}
    located: dict[str, Location] = {}
    removed: set[str] = set()
    for (partition, file_id), written in _written_files(metadata).items():
        old = previous.get((partition, file_id))
        changes = _task_key_changes(old, written.stat_paths, results or {})
        if changes is None:
            old_keys = slice_keys(ctx, old, before) if old is not None else set()
            new_keys = slice_keys(ctx, _new_slice(partition, file_id, old, written.paths), after)
            inserted, deleted = new_keys - old_keys, old_keys - new_keys
        else:
            inserted, deleted = set(changes[0]), set(changes[1])
        for key in inserted:
            located[key] = (partition, file_id, instant_time)
        removed |= deleted
    for partition, file_ids in (metadata.partition_to_replace_file_ids or {}).items():
        for file_id in file_ids:
            if (old := previous.get((partition, file_id))) is not None:
                removed |= slice_keys(ctx, old, before)
    groups = _group_writes(ctx, file_group_count, located, removed - located.keys())
    return [g for g in groups if g.records or g.deleted]


def _task_key_changes(
    old: FileSlice | None,
    files: Sequence[str],
    results: Mapping[tuple[str, str], FileIndexResult],
) -> tuple[frozenset[str], frozenset[str]] | None:
    """(inserted, deleted) keys of a file group as its write task returned them, when that is
    exact: one file written into the group, a new base file over no slice or over the base-only
    slice it merged (its previous commit), or a log file appended to an existing group (its task
    returns keys only when the index located them exactly, relative to the group's keys when the
    write tagged them: the same keys at commit, as a write into the same file group in between is
    a conflict); None sends the file group to the driver's read of its keys."""
    if len(files) != 1:
        return None
    partition, name = posixpath.dirname(files[0]), posixpath.basename(files[0])
    result = results.get((partition, name))
    if result is None or result.inserted_keys is None or result.deleted_keys is None:
        return None
    if parse_log_file(partition, name) is not None:
        return (result.inserted_keys, result.deleted_keys) if old is not None else None
    if old is not None and (
        old.log_files or old.base_file is None or old.base_instant_time != result.prev_commit
    ):
        return None
    if old is None and result.deleted_keys:
        return None
    return result.inserted_keys, result.deleted_keys


@dataclass(frozen=True)
class _WrittenFiles:
    """What an instant wrote into one file group (relative paths)."""

    stat_paths: list[str] = field(default_factory=list)  # the file of each write stat
    paths: list[str] = field(default_factory=list)  # every file, log files of a stat included


def _written_files(metadata: CommitMetadata) -> dict[tuple[str, str], _WrittenFiles]:
    """(partition, file id) -> the files the instant wrote into it, in one pass over the stats."""
    written: dict[tuple[str, str], _WrittenFiles] = {}
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if not stat.path or not stat.file_id:
                continue
            files = written.setdefault((partition, stat.file_id), _WrittenFiles())
            files.stat_paths.append(stat.path)
            names = {posixpath.basename(stat.path), *(stat.log_files or ())}
            folder = posixpath.dirname(stat.path)
            files.paths.extend(posixpath.join(folder, n) for n in sorted(names))
    return written


def _new_slice(
    partition: str, file_id: str, old: FileSlice | None, paths: Sequence[str]
) -> tuple[str | None, tuple[str, ...]]:
    """(base file, log files) of the file group after the instant: a new base file starts a new
    slice; log files are appended to the old one."""
    logs = [(p, parse_log_file(partition, posixpath.basename(p))) for p in paths]
    bases = [p for p, parsed in logs if parsed is None]
    if bases:
        return bases[-1], ()
    new_logs = sorted({p: lf for p, lf in logs if lf is not None}.items(), key=_log_order)
    old_base = old.base_file.relative_path if old is not None and old.base_file else None
    old_logs = tuple(lf.relative_path for lf in old.log_files) if old is not None else ()
    return old_base, old_logs + tuple(p for p, _ in new_logs)


def _log_order(item: tuple[str, LogFile | None]) -> tuple[str, int, str, str]:
    assert item[1] is not None
    return item[1].sort_key()


def slice_keys(
    ctx: TableContext,
    piece: FileSlice | tuple[str | None, tuple[str, ...]],
    visible: frozenset[str],
) -> set[str]:
    """The record keys of a slice (a `FileSlice`, or (base file, log files) relative paths)."""
    if isinstance(piece, FileSlice):
        base = piece.base_file.relative_path if piece.base_file else None
        logs = tuple(lf.relative_path for lf in piece.log_files)
        partition, file_id = piece.partition_path, piece.file_id
    else:
        (base, logs), partition, file_id = piece, "", ""
    if base is not None and not logs and base.endswith(".parquet"):
        with ctx.storage.open_input(ctx.path(base)) as handle:
            column = pq.read_table(handle, columns=[RECORD_KEY]).column(RECORD_KEY)
        return set(column.to_pylist())
    if base is None and not logs:
        return set()
    if not partition:
        partition = posixpath.dirname(base or logs[0])
    return set(_merged_keys(ctx, partition, file_id, base, logs, visible))


def _merged_keys(
    ctx: TableContext,
    partition: str,
    file_id: str,
    base: str | None,
    logs: tuple[str, ...],
    visible: frozenset[str],
) -> list[str]:
    schema = with_meta_fields(table_arrow_schema(ctx, None) or pa.schema([]))
    merge = resolve_merge_config(ctx.config, ctx.base_path)
    first = ctx.active.timeline.first
    task = SliceTask(
        storage=ctx.storage,
        base_path=ctx.base_path,
        partition_path=partition,
        file_id=file_id,
        base_file=base,
        log_files=logs,
        file_schema=schema,
        visible_instants=visible,
        as_of=None,
        merge_mode=merge.mode.value,
        ordering_field=",".join(merge.ordering_fields) or None,
        timeline_start=first.time if first else None,
        ordered_deletes=ctx.config.version >= 8,
    )
    keys: list[str] = read_slice(task).column(RECORD_KEY).to_pylist()
    return keys


def _group_writes(
    ctx: TableContext, count: int, located: Mapping[str, Location], removed: Iterable[str]
) -> list[GroupWrite]:
    """Records of `located` keys and deletes of `removed` keys, per record-index file group."""
    utc = ctx.config.timeline_timezone_utc
    keys = list(located)
    by_location: dict[tuple[int, Location], list[str]] = {}
    for key, index in zip(keys, _file_group_indexes(keys, count), strict=True):
        by_location.setdefault((index, located[key]), []).append(key)
    records: dict[int, list[MetadataRecord]] = {i: [] for i in range(count)}
    for (index, (partition, file_id, instant)), group in by_location.items():
        records[index] += record_index_records(partition, file_id, instant, group, utc=utc)
    gone = list(removed)
    deleted: dict[int, list[str]] = {}
    for key, index in zip(gone, _file_group_indexes(gone, count), strict=True):
        deleted.setdefault(index, []).append(key)
    return [
        GroupWrite(
            RECORD_INDEX_PARTITION,
            record_index_file_group_id(i),
            tuple(records[i]),
            tuple(record_index_delete_records(sorted(deleted.get(i, ())))),
        )
        for i in range(count)
    ]


def _file_group_indexes(keys: Sequence[str], count: int) -> list[int]:
    """`file_group_index` of each key (vectorised: Java's `String.hashCode` over 10^5 keys in
    Python is a second of the driver's time)."""
    if not keys:
        return []
    indexes: list[int] = file_group_indexes(pa.array(keys, pa.string()), count).to_pylist()
    return indexes
