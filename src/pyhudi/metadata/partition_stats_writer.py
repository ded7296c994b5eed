"""Keeping the metadata table's `partition_stats` partition in step with the data table's writes
(table versions 8 and 9, as Hudi 1.2's `PartitionStatsIndexer` does).

* enabled with `column_stats` on partitioned tables (`hoodie.metadata.index.partition.stats.enable`,
  default true; Hudi 1.2 builds none for a non-partitioned table), in
  `hoodie.metadata.index.partition.stats.file.group.count` file groups (`partition-stats-NNNN-0`,
  default 1); it indexes the columns `column_stats` indexes;
* a record per (data partition, column): key `ColumnIndexID + PartitionIndexID`, the partition
  path in `fileName`, the range folded over the files of the partition's latest file slices (min
  of mins, max of maxes, sums of counts and sizes), `isTightBound` true;
* every data instant: the partitions it wrote get their records again, folded over the ranges of
  the files it wrote (the same ones its `column_stats` records hold) and the `column_stats`
  records of the other files of their latest slices (Hudi's "tight bound" path, taken because
  `column_stats` is there); a clean changes nothing (as Hudi 1.2);
* initialisation: from the `column_stats` records of the latest slices' files.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import pyarrow as pa

from pyhudi.codec.metadata_keys import column_index_id, file_group_index, partition_index_id
from pyhudi.codec.metadata_records import (
    ColumnStats,
    MetadataRecord,
    MetadataRecordType,
    merge_records,
    typed_stat_value,
)
from pyhudi.config import metadata as mkeys
from pyhudi.metadata.column_stats_writer import maintains_column_stats, typed_by_schema
from pyhudi.metadata.deltacommit import GroupWrite
from pyhudi.metadata.index_records import COLUMN_STATS_PARTITION
from pyhudi.metadata.reader import MetadataTable
from pyhudi.model.commit import CommitMetadata
from pyhudi.table.context import TableContext

PARTITION_STATS_PARTITION = "partition_stats"
#: `MetadataPartitionType.PARTITION_STATS.getFileIdPrefix()`.
PARTITION_STATS_FILE_ID_PREFIX = "partition-stats-"


def maintains_partition_stats(ctx: TableContext, options: Mapping[str, str]) -> bool:
    """Versions 8 and 9, a partitioned table, `column_stats` maintained, and not disabled."""
    if ctx.config.version < 8 or not ctx.config.partition_fields:
        return False
    key = mkeys.PARTITION_STATS_ENABLE
    if key.is_set(options) and not key.get(options):
        return False
    return maintains_column_stats(ctx, options)


def partition_stats_file_group_id(index: int) -> str:
    """The id of `partition_stats` file group `index`."""
    return f"{PARTITION_STATS_FILE_ID_PREFIX}{index:04d}-0"


def partition_stats_key(partition: str, column: str) -> str:
    """The `partition_stats` record key of (data partition, column)."""
    return column_index_id(column) + partition_index_id(partition)


def partition_stats_records(
    partition: str, ranges: Iterable[ColumnStats], columns: Sequence[str]
) -> list[MetadataRecord]:
    """The records of one data partition: each indexed column's ranges folded into one."""
    folded: dict[str, MetadataRecord] = {}
    wanted = set(columns)
    for stats in ranges:
        name = stats.column_name or ""
        if name not in wanted or stats.is_deleted:
            continue
        record = MetadataRecord(
            partition_stats_key(partition, name),
            MetadataRecordType.PARTITION_STATS,
            column_stats=_as_decoded(replace(stats, file_name=partition, is_tight_bound=False)),
        )
        previous = folded.get(name)
        folded[name] = record if previous is None else _fold(previous, record)
    return [_tight(folded[c]) for c in columns if c in folded]


def _tight(record: MetadataRecord) -> MetadataRecord:
    assert record.column_stats is not None
    return replace(record, column_stats=replace(record.column_stats, is_tight_bound=True))


def _as_decoded(stats: ColumnStats) -> ColumnStats:
    """Ranges a writer took (timestamps as raw longs in their unit) as the values a decoded 1.x
    record holds, so the ranges of written and of stored files compare."""
    if stats.value_type is None:
        return stats
    ordinal, info = stats.value_type
    low, high = stats.min_value, stats.max_value
    if ordinal not in _RAW_LONG_TYPES or not isinstance(low or high, int):
        return stats
    return replace(
        stats,
        min_value=None if low is None else typed_stat_value(low, ordinal, info),
        max_value=None if high is None else typed_stat_value(high, ordinal, info),
    )


#: `ValueType` ordinals of times and timestamps (a writer's ranges keep their raw numbers).
_RAW_LONG_TYPES = frozenset(range(13, 21))


def _fold(older: MetadataRecord, newer: MetadataRecord) -> MetadataRecord:
    merged = merge_records(older, newer)
    assert merged.column_stats is not None
    # Keep what the values mean: a file without values (`ValueType.NULL`) says nothing.
    sides = (merged.column_stats, older.column_stats, newer.column_stats)
    types = [s.value_type for s in sides if s is not None and s.value_type is not None]
    meaning = next((t for t in types if t[0] != _NULL_TYPE), types[0] if types else None)
    return replace(merged, column_stats=replace(merged.column_stats, value_type=meaning))


#: `ValueType.NULL`: the ordinal of a range without values.
_NULL_TYPE = 1


def partition_stats_updates(
    ctx: TableContext,
    metadata: CommitMetadata,
    written: Sequence[MetadataRecord],
    columns: Sequence[str],
    count: int,
    schema: pa.Schema | None = None,
) -> list[GroupWrite]:
    """The records of the data partitions a data instant wrote; `written`: the `column_stats`
    records of the files it wrote; `schema`: the writer schema, which types stored ranges that
    do not say what their values mean (Hudi 1.x writes some with the V1 value type)."""
    touched = sorted(p for p, stats in metadata.partition_to_write_stats.items() if stats)
    if not touched or not columns:
        return []
    latest = _latest_file_names(ctx, metadata, touched)
    new_ranges: dict[str, list[ColumnStats]] = {p: [] for p in touched}
    new_names: set[tuple[str, str]] = set()
    for record in written:
        stats = record.column_stats
        if stats is None or stats.is_deleted:
            continue
        partition = _partition_of(record, metadata)
        if partition in new_ranges:
            new_ranges[partition].append(stats)
            new_names.add((partition, stats.file_name or ""))
    stored = _stored_column_stats(ctx, touched, columns)
    kinds = {f.name: f.type for f in schema} if schema is not None else {}
    for partition, found in stored.items():
        stored[partition] = [
            typed_by_schema(s, kinds[s.column_name])
            if s.value_type is None and s.column_name in kinds
            else s
            for s in found
        ]
    records: list[MetadataRecord] = []
    for partition in touched:
        ranges = list(new_ranges[partition])
        ranges += [
            s
            for s in stored.get(partition, ())
            if s.file_name in latest[partition] and (partition, s.file_name) not in new_names
        ]
        records += partition_stats_records(partition, ranges, columns)
    return [g for g in group_writes(records, count) if g.records]


def initial_partition_stats(
    ctx: TableContext, column_stats: Sequence[MetadataRecord], columns: Sequence[str], count: int
) -> list[GroupWrite]:
    """The base file contents of a new `partition_stats`, from the `column_stats` records of the
    files of every partition's latest slices."""
    by_partition: dict[str, set[str]] = {}
    for piece in ctx.view().latest_file_slices():
        names = by_partition.setdefault(piece.partition_path, set())
        if piece.base_file is not None:
            names.add(piece.base_file.file_name)
        names.update(log.file_name for log in piece.log_files)
    ranges: dict[str, list[ColumnStats]] = {}
    for partition, names in by_partition.items():
        for record in column_stats:
            stats = record.column_stats
            if stats is not None and stats.file_name in names and _key_in(record, partition):
                ranges.setdefault(partition, []).append(stats)
    records = [r for p in sorted(ranges) for r in partition_stats_records(p, ranges[p], columns)]
    return group_writes(records, count)


def _key_in(record: MetadataRecord, partition: str) -> bool:
    """Whether a `column_stats` record belongs to data partition `partition` (its key's middle)."""
    return record.key[12:24] == partition_index_id(partition)


def _partition_of(record: MetadataRecord, metadata: CommitMetadata) -> str:
    for partition in metadata.partition_to_write_stats:
        if _key_in(record, partition):
            return partition
    return ""


def _latest_file_names(
    ctx: TableContext, metadata: CommitMetadata, partitions: Sequence[str]
) -> dict[str, set[str]]:
    """The file names of each partition's latest slices once the data instant is in: committed
    slices, a file group it wrote a base file to starting a new slice, its log files added."""
    slices: dict[tuple[str, str], tuple[str | None, set[str]]] = {}
    replaced = metadata.replaced_file_ids()
    for piece in ctx.view().latest_file_slices(None, partitions):
        base = piece.base_file.file_name if piece.base_file is not None else None
        logs = {log.file_name for log in piece.log_files}
        slices[(piece.partition_path, piece.file_id)] = (base, logs)
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            name = posixpath.basename(stat.path or "")
            if not name:
                continue
            key = (partition, stat.file_id)
            if name.endswith(".parquet") or name.endswith(".hfile") or name.endswith(".orc"):
                slices[key] = (name, set())
            else:
                base, logs = slices.get(key, (None, set()))
                slices[key] = (base, logs | {name})
    names: dict[str, set[str]] = {p: set() for p in partitions}
    for (partition, file_id), (base, logs) in slices.items():
        if partition not in names or (partition, file_id) in replaced:
            continue
        names[partition].update(logs)
        if base is not None:
            names[partition].add(base)
    return names


def _stored_column_stats(
    ctx: TableContext, partitions: Sequence[str], columns: Sequence[str]
) -> dict[str, list[ColumnStats]]:
    """The live `column_stats` of `columns` in `partitions`, from the metadata table."""
    if COLUMN_STATS_PARTITION not in ctx.config.metadata_partitions:
        return {}
    table = MetadataTable.open(ctx)
    prefixes = [partition_stats_key(p, c) for p in partitions for c in columns]
    found: dict[str, list[ColumnStats]] = {}
    for record in table.records_with_prefix(COLUMN_STATS_PARTITION, prefixes).values():
        if record.column_stats is None or record.column_stats.is_deleted:
            continue
        for partition in partitions:
            if _key_in(record, partition):
                found.setdefault(partition, []).append(record.column_stats)
    return found


def group_writes(records: Sequence[MetadataRecord], count: int) -> list[GroupWrite]:
    """`records` spread over the `count` file groups of `partition_stats`, by key."""
    grouped: dict[int, list[MetadataRecord]] = {i: [] for i in range(count)}
    for record in records:
        grouped[file_group_index(record.key, count)].append(record)
    return [
        GroupWrite(PARTITION_STATS_PARTITION, partition_stats_file_group_id(i), tuple(grouped[i]))
        for i in range(count)
    ]
