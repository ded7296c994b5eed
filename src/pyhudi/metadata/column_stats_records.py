"""`column_stats` records of data files, as Hudi 0.14 builds them (`HoodieTableMetadataUtil.
convertMetadataToColumnStatsRecords`, `HoodieMetadataPayload.createColumnStatsRecords`).

* A **base file**: from its parquet footer, one record per indexed column with a range
  (`pyhudi.file_group.column_ranges.footer_column_ranges`: the wrappers, what gets no record).
* A **log file**: from the records appended to it (`HoodieAppendHandle` with column stats on;
  `table_column_ranges`): Arrow min/max per column, sizes 0; timestamps stay raw longs in their
  unit (`LongWrapper`, as Hudi's `getNestedFieldVal` leaves them without
  `consistent.logical.timestamp.enabled`).
* A **deleted file** (clean, replaced file groups): a tombstone per column
  (`HoodieColumnRangeMetadata.stub`: no values, counts and sizes -1, `isDeleted`).

Deliberate difference: a decimal that does not fit decimal(30, 15) makes Hudi 0.14 fail the commit
(`tryUpcastDecimal`); pyhudi leaves that column of that file unindexed instead.

Which columns: `hoodie.metadata.index.column.stats.column.list`, else every top-level column of
the writer schema with the meta fields (Hudi 0.14's `getColumnsToIndex`); nested leaves are never
indexed (their footer path `a.b` names no top-level field).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.metadata_keys import column_stats_key
from pyhudi.codec.metadata_records import ColumnStats, MetadataRecord, MetadataRecordType
from pyhudi.file_group.column_ranges import footer_column_ranges, table_column_ranges


def column_stats_record(partition: str, stats: ColumnStats) -> MetadataRecord:
    """The `column_stats` record of one (file, column) entry of data partition `partition`."""
    key = column_stats_key(partition, stats.file_name or "", stats.column_name or "")
    return MetadataRecord(key, MetadataRecordType.COLUMN_STATS, column_stats=stats)


def base_file_column_stats(
    partition: str,
    file_name: str,
    footer: pq.FileMetaData,
    columns: Iterable[str] | None = None,
) -> list[MetadataRecord]:
    """Records of a parquet base file from its footer; `columns` None = every top-level column."""
    return ranges_column_stats(partition, footer_column_ranges(file_name, footer), columns)


def ranges_column_stats(
    partition: str, ranges: Iterable[ColumnStats], columns: Iterable[str] | None = None
) -> list[MetadataRecord]:
    """Records of a base file's column ranges (in footer order) restricted to `columns`."""
    wanted = None if columns is None else set(columns)
    return [
        column_stats_record(partition, stats)
        for stats in ranges
        if wanted is None or stats.column_name in wanted
    ]


def log_file_column_stats(
    partition: str,
    file_name: str,
    records: pa.Table,
    columns: Iterable[str] | None = None,
) -> list[MetadataRecord]:
    """Records of a log file from the rows appended to it (sizes 0, as Hudi's append handle)."""
    return log_ranges_column_stats(partition, table_column_ranges(file_name, records), columns)


def log_ranges_column_stats(
    partition: str, ranges: Iterable[ColumnStats], columns: Iterable[str] | None = None
) -> list[MetadataRecord]:
    """Records of a log file's column ranges, in the order of `columns` (None: as computed)."""
    by_name = {stats.column_name: stats for stats in ranges}
    names = list(by_name if columns is None else columns)
    return [column_stats_record(partition, by_name[n]) for n in names if n in by_name]


def deleted_file_column_stats(
    partition: str, file_name: str, columns: Sequence[str]
) -> list[MetadataRecord]:
    """Tombstones of a deleted (cleaned or replaced) file, one per indexed column."""
    return [
        column_stats_record(partition, ColumnStats(file_name, c, None, None, -1, -1, -1, -1, True))
        for c in columns
    ]
