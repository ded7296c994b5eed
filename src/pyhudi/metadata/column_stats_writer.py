"""Keeping the metadata table's `column_stats` partition in step with the data table's writes.

As Hudi 0.14 does for table version 6 (`initializeColumnStatsPartition`,
`convertMetadataToColumnStatsRecords`, `convertMetadataToColumnStatsRecords` of a clean):

* initialisation: one record per (committed parquet base file, indexed column) from its footer, in
  `hoodie.metadata.index.column.stats.file.group.count` file groups (`col-stats-NNNN-0`, Hudi's
  default 2), one base HFile each (empty ones too);
* every data instant: the records of each parquet base file it wrote, from the column ranges its
  write task took from the footer the parquet writer returned (`collect_column_ranges`; a write
  that returns none, as services and bootstrap, has the footer read on the driver), and of each log
  file a write appended, from the records appended (Hudi 0.14's `HoodieAppendHandle` with column
  stats on: every indexed column, sizes 0, keyed by the log file's name; pyhudi writes one data
  block per log file, so no ranges merge across blocks); a log file written by a service
  (log compaction) gets no record: readers keep a slice whose log files have no statistics;
* a clean: a tombstone per indexed column of each deleted data file (log files too).

Indexed columns: `hoodie.metadata.index.column.stats.column.list`, else every top-level column.

Table versions 8 and 9 (Hudi 1.2's `ColumnStatsIndexer`): on by default with the metadata table;
the indexed columns are always `_hoodie_commit_time`, `_hoodie_partition_path`,
`_hoodie_record_key` (with meta fields populated), then the listed columns or, by default, the
first `hoodie.metadata.index.column.stats.max.columns.to.index` (32) top-level columns of the
writer schema whose type Hudi indexes (not structs, arrays, maps; decimals within
decimal(30, 15)); values carry their 1.x `valueType`; the list is registered in the table's index
definitions (`.hoodie/.index_defs/index.json`, `column_stats_definition`).
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.metadata_keys import file_group_index
from pyhudi.codec.metadata_records import V1_VALUE_TYPE, ColumnStats, MetadataRecord
from pyhudi.codec.schema import META_FIELDS, avro_to_arrow
from pyhudi.config import metadata as mkeys
from pyhudi.file_group.index_results import FileIndexResult
from pyhudi.metadata.column_stats_records import (
    base_file_column_stats,
    column_stats_record,
    deleted_file_column_stats,
    log_ranges_column_stats,
    ranges_column_stats,
)
from pyhudi.metadata.deltacommit import GroupWrite
from pyhudi.metadata.files_records import written_parquet_files
from pyhudi.metadata.index_records import COLUMN_STATS_PARTITION
from pyhudi.model.commit import CommitMetadata
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema

#: `MetadataPartitionType.COLUMN_STATS.getFileIdPrefix()`.
COLUMN_STATS_FILE_ID_PREFIX = "col-stats-"
_PARQUET = ".parquet"


def column_stats_setting(options: Mapping[str, str]) -> bool | None:
    """`hoodie.metadata.index.column.stats.enable` as the write sets it, None when it does not."""
    key = mkeys.COLUMN_STATS_ENABLE
    return key.get(options) if key.is_set(options) else None


def maintains_column_stats(ctx: TableContext, options: Mapping[str, str]) -> bool:
    """Explicitly enabled, or unset on a table that has a `column_stats` partition (versions 8
    and 9: unset is enabled, Hudi 1.2's default)."""
    setting = column_stats_setting(options)
    if setting is not None:
        return setting
    return ctx.config.version >= 8 or COLUMN_STATS_PARTITION in ctx.config.metadata_partitions


#: Hudi 1.x `META_COLS_TO_ALWAYS_INDEX`, in the order its index definition lists them.
META_COLUMNS_ALWAYS_INDEXED = (
    "_hoodie_commit_time",
    "_hoodie_partition_path",
    "_hoodie_record_key",
)
#: `DECIMAL_MAX_PRECISION`, `DECIMAL_MAX_SCALE` of Hudi's column stats.
_DECIMAL_MAX_PRECISION, _DECIMAL_MAX_SCALE = 30, 15


def columns_to_index_1x(
    ctx: TableContext, options: Mapping[str, str], schema: pa.Schema | None
) -> tuple[str, ...]:
    """Versions 8 and 9: the columns `column_stats` (and `partition_stats`) index for a writer
    `schema` (Hudi 1.2's `getColumnsToIndex`)."""
    fields = [f for f in (schema or []) if f.name not in META_FIELDS]
    indexable = [f.name for f in fields if _indexable(f.type)]
    listed = indexed_columns(options)
    if listed is not None:
        chosen = [c for c in listed if c not in META_FIELDS and c in indexable]
    else:
        chosen = indexable[: mkeys.COLUMN_STATS_MAX_COLUMNS.get(options)]
    meta = META_COLUMNS_ALWAYS_INDEXED if ctx.config.populate_meta_fields else ()
    return tuple(dict.fromkeys([*meta, *chosen]))


def _indexable(kind: pa.DataType) -> bool:
    if pa.types.is_nested(kind) or pa.types.is_dictionary(kind):
        return False
    if pa.types.is_decimal(kind):
        precision, scale = kind.precision, kind.scale
        too_wide = precision + (_DECIMAL_MAX_SCALE - scale) > _DECIMAL_MAX_PRECISION
        return not too_wide and scale <= _DECIMAL_MAX_SCALE
    return True


def commit_schema(ctx: TableContext, metadata: CommitMetadata | None) -> pa.Schema | None:
    """The writer schema of a commit (its `schema` entry), else the table's latest."""
    text = metadata.schema if metadata is not None else None
    if text:
        return avro_to_arrow(text)
    return table_arrow_schema(ctx, None)


def write_columns(
    ctx: TableContext, options: Mapping[str, str], metadata: CommitMetadata | None
) -> tuple[str, ...] | None:
    """The columns a commit's `column_stats` records cover (None: every footer column, v6)."""
    if ctx.config.version >= 8:
        return columns_to_index_1x(ctx, options, commit_schema(ctx, metadata))
    return indexed_columns(options)


def column_stats_definition(columns: Sequence[str]) -> dict[str, Any]:
    """Hudi 1.2's index definition of `column_stats` (an entry of `index.json`)."""
    return {
        "indexName": COLUMN_STATS_PARTITION,
        "indexType": COLUMN_STATS_PARTITION,
        "indexFunction": COLUMN_STATS_PARTITION,
        "sourceFields": list(columns),
        "indexOptions": {},
        "version": "V2",
    }


def column_stats_file_group_id(index: int) -> str:
    return f"{COLUMN_STATS_FILE_ID_PREFIX}{index:04d}-0"


def indexed_columns(options: Mapping[str, str]) -> tuple[str, ...] | None:
    """The configured column list (None: every top-level column)."""
    key = mkeys.COLUMN_STATS_COLUMN_LIST
    return key.get(options) if key.is_set(options) else None


def initial_column_stats(
    ctx: TableContext,
    options: Mapping[str, str],
    listed: Mapping[str, Mapping[str, int]],
    columns: Sequence[str] | None = None,
) -> list[GroupWrite]:
    """The base file contents of a new `column_stats` over the committed files `listed`
    (`columns`: those indexed, else `indexed_columns`)."""
    columns = columns if columns is not None else indexed_columns(options)
    records: list[MetadataRecord] = []
    for partition, files in sorted(listed.items()):
        for name in sorted(n for n in files if n.endswith(_PARQUET)):
            records += _file_records(ctx, partition, name, columns)
    count = max(1, mkeys.COLUMN_STATS_FILE_GROUP_COUNT.get(options))
    return group_writes(records, count)


def column_stats_updates(
    ctx: TableContext,
    metadata: CommitMetadata,
    options: Mapping[str, str],
    count: int,
    results: Mapping[tuple[str, str], FileIndexResult] | None = None,
) -> list[GroupWrite]:
    """The records of the parquet base files (from the column ranges their write tasks returned,
    else from their footers) and of the log files whose write tasks returned column ranges that a
    data instant wrote; `results`: the tasks' side results per (partition, file name)."""
    records = written_files_column_stats(ctx, metadata, options, results)
    return [g for g in group_writes(records, count) if g.records]


def written_files_column_stats(
    ctx: TableContext,
    metadata: CommitMetadata,
    options: Mapping[str, str],
    results: Mapping[tuple[str, str], FileIndexResult] | None = None,
) -> list[MetadataRecord]:
    """The `column_stats` records of the data files a data instant wrote."""
    columns = write_columns(ctx, options, metadata)
    results = results or {}
    records: list[MetadataRecord] = []
    for partition, name in written_parquet_files(metadata):
        result = results.get((partition, name))
        if result is not None and result.column_ranges is not None:
            records += ranges_column_stats(partition, result.column_ranges, columns)
        else:
            records += _file_records(ctx, partition, name, columns)
    for partition, name in _written_log_files(metadata):
        result = results.get((partition, name))
        if result is not None and result.column_ranges is not None:
            records += log_ranges_column_stats(partition, result.column_ranges, columns)
    if ctx.config.version >= 8 and columns:
        records += _delete_only_log_stats(metadata, columns)
        if index_version(ctx) == "V1":
            return _as_v1(records)
        records = _retyped(records, commit_schema(ctx, metadata))
    return records


#: Where Hudi 1.x keeps the table's index definitions (`hoodie.table.index.defs.path`).
INDEX_DEFS_PATH_KEY = "hoodie.table.index.defs.path"


def index_version(ctx: TableContext) -> str:
    """The version of the table's `column_stats` index definition: `V2` (Hudi 1.2 builds new
    indexes at it) unless `index.json` says `V1` (an index Hudi built on an upgraded table, whose
    records keep Hudi 0.14's values and have no value type)."""
    relative = ctx.config.props.get(INDEX_DEFS_PATH_KEY)
    if not relative:
        return "V2"
    path = posixpath.join(ctx.base_path, relative)
    if not ctx.storage.exists(path):
        return "V2"
    document = json.loads(ctx.storage.read_bytes(path))
    definition = (document.get("indexDefinitions") or {}).get(COLUMN_STATS_PARTITION) or {}
    return str(definition.get("version") or "V2")


def _as_v1(records: list[MetadataRecord]) -> list[MetadataRecord]:
    out = []
    for record in records:
        stats = record.column_stats
        if stats is None:
            out.append(record)
            continue
        out.append(replace(record, column_stats=replace(stats, value_type=V1_VALUE_TYPE)))
    return out


def _retyped(records: list[MetadataRecord], schema: pa.Schema | None) -> list[MetadataRecord]:
    """Versions 8 and 9: each range's `valueType` as the writer schema says (a log file's ranges
    are taken over its Avro-ready columns, where a timestamp is a raw long and a date an int),
    its values as a decoded record holds them, as Hudi 1.2's append handle types them."""
    if schema is None:
        return records
    kinds = {f.name: f.type for f in schema}
    out = []
    for record in records:
        stats = record.column_stats
        kind = kinds.get((stats.column_name or "") if stats is not None else "")
        if stats is None or kind is None:
            out.append(record)
            continue
        out.append(replace(record, column_stats=typed_by_schema(stats, kind)))
    return out


def typed_by_schema(stats: ColumnStats, kind: pa.DataType) -> ColumnStats:
    """`stats` of a column of Arrow type `kind` with the `valueType` that type means (Hudi 1.x),
    dates and decimals as Python values; timestamps keep their numbers."""
    if pa.types.is_timestamp(kind):
        ordinal = {"ms": 15, "us": 16}.get(kind.unit, 17) + (0 if kind.tz is not None else 3)
        return replace(stats, value_type=(ordinal, None), value_wrapper="LongWrapper")
    if pa.types.is_date32(kind):
        low, high = (
            dt.date(1970, 1, 1) + dt.timedelta(days=v) if isinstance(v, int) else v
            for v in (stats.min_value, stats.max_value)
        )
        return replace(stats, min_value=low, max_value=high, value_type=(12, None))
    if pa.types.is_decimal(kind):
        low, high = (
            Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-kind.scale)
            if isinstance(v, bytes | bytearray)
            else v
            for v in (stats.min_value, stats.max_value)
        )
        info = f"{kind.precision},{kind.scale}"
        return replace(stats, min_value=low, max_value=high, value_type=(10, info))
    return stats


def _delete_only_log_stats(
    metadata: CommitMetadata, columns: Sequence[str]
) -> list[MetadataRecord]:
    """Versions 8 and 9: a log file holding deletes only gets a record per indexed column with no
    values (no range, counts 0), as Hudi 1.2's append handle collects over no records."""
    records: list[MetadataRecord] = []
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            name = posixpath.basename(stat.path or "")
            if not name or name.endswith(_PARQUET) or stat.num_deletes <= 0:
                continue
            if stat.num_inserts or stat.num_update_writes:
                continue
            records += [
                column_stats_record(partition, ColumnStats(name, c, None, None, 0, 0, 0, 0, False))
                for c in columns
            ]
    return records


def _written_log_files(metadata: CommitMetadata) -> list[tuple[str, str]]:
    return [
        (partition, name)
        for partition, stats in metadata.partition_to_write_stats.items()
        for name in (posixpath.basename(stat.path or "") for stat in stats)
        if name and not name.endswith(_PARQUET)
    ]


def clean_column_stats_updates(
    ctx: TableContext, clean_metadata: Mapping[str, Any], options: Mapping[str, str], count: int
) -> list[GroupWrite]:
    """Tombstones of the data files a clean deleted (base and log files: Hudi 0.14 stubs every
    deleted file, and log files have entries since the append handle writes them)."""
    columns = write_columns(ctx, options, None) or _all_columns(ctx)
    records: list[MetadataRecord] = []
    for partition, info in (clean_metadata.get("partitionMetadata") or {}).items():
        for pattern in info.get("deletePathPatterns") or ():
            records += deleted_file_column_stats(partition, posixpath.basename(pattern), columns)
    if ctx.config.version >= 8 and index_version(ctx) == "V1":
        records = _as_v1(records)
    return [g for g in group_writes(records, count) if g.records]


def _all_columns(ctx: TableContext) -> tuple[str, ...]:
    schema = table_arrow_schema(ctx, None)
    from_schema = tuple(schema.names) if schema is not None else ()
    return tuple(dict.fromkeys((*META_FIELDS, *from_schema)))


def _file_records(
    ctx: TableContext, partition: str, name: str, columns: Iterable[str] | None
) -> list[MetadataRecord]:
    path = ctx.path(posixpath.join(partition, name) if partition else name)
    with ctx.storage.open_input(path) as handle:
        footer = pq.ParquetFile(handle).metadata
    return base_file_column_stats(partition, name, footer, columns)


def group_writes(records: Sequence[MetadataRecord], count: int) -> list[GroupWrite]:
    grouped: dict[int, list[MetadataRecord]] = {i: [] for i in range(count)}
    for record in records:
        grouped[file_group_index(record.key, count)].append(record)
    return [
        GroupWrite(COLUMN_STATS_PARTITION, column_stats_file_group_id(i), tuple(grouped[i]))
        for i in range(count)
    ]
