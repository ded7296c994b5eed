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
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow.parquet as pq

from pyhudi.codec.metadata_keys import file_group_index
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.codec.schema import META_FIELDS
from pyhudi.config import metadata as mkeys
from pyhudi.file_group.index_results import FileIndexResult
from pyhudi.metadata.column_stats_records import (
    base_file_column_stats,
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
    """Explicitly enabled, or unset on a table that has a `column_stats` partition."""
    setting = column_stats_setting(options)
    if setting is not None:
        return setting
    return COLUMN_STATS_PARTITION in ctx.config.metadata_partitions


def column_stats_file_group_id(index: int) -> str:
    return f"{COLUMN_STATS_FILE_ID_PREFIX}{index:04d}-0"


def indexed_columns(options: Mapping[str, str]) -> tuple[str, ...] | None:
    """The configured column list (None: every top-level column)."""
    key = mkeys.COLUMN_STATS_COLUMN_LIST
    return key.get(options) if key.is_set(options) else None


def initial_column_stats(
    ctx: TableContext, options: Mapping[str, str], listed: Mapping[str, Mapping[str, int]]
) -> list[GroupWrite]:
    """The base file contents of a new `column_stats` over the committed files `listed`."""
    columns = indexed_columns(options)
    records: list[MetadataRecord] = []
    for partition, files in sorted(listed.items()):
        for name in sorted(n for n in files if n.endswith(_PARQUET)):
            records += _file_records(ctx, partition, name, columns)
    count = max(1, mkeys.COLUMN_STATS_FILE_GROUP_COUNT.get(options))
    return _group_writes(records, count)


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
    columns = indexed_columns(options)
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
    return [g for g in _group_writes(records, count) if g.records]


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
    columns = indexed_columns(options) or _all_columns(ctx)
    records: list[MetadataRecord] = []
    for partition, info in (clean_metadata.get("partitionMetadata") or {}).items():
        for pattern in info.get("deletePathPatterns") or ():
            records += deleted_file_column_stats(partition, posixpath.basename(pattern), columns)
    return [g for g in _group_writes(records, count) if g.records]


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


def _group_writes(records: Sequence[MetadataRecord], count: int) -> list[GroupWrite]:
    grouped: dict[int, list[MetadataRecord]] = {i: [] for i in range(count)}
    for record in records:
        grouped[file_group_index(record.key, count)].append(record)
    return [
        GroupWrite(COLUMN_STATS_PARTITION, column_stats_file_group_id(i), tuple(grouped[i]))
        for i in range(count)
    ]
