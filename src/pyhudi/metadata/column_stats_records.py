"""`column_stats` records of data files, as Hudi 0.14 builds them (`HoodieTableMetadataUtil.
convertMetadataToColumnStatsRecords`, `HoodieMetadataPayload.createColumnStatsRecords`).

* A **base file**: from its parquet footer (`ParquetUtils.readRangeFromParquetMetadata`), per
  indexed column folded over row groups: min of mins, max of maxes, null and value counts, total
  (compressed) and uncompressed sizes. Values keep the Java type Hudi's footer conversion gives,
  which picks the Avro wrapper: INT32 `IntWrapper`, INT64 (timestamps too, raw) `LongWrapper`,
  FLOAT/DOUBLE, BOOLEAN, UTF8 strings `StringWrapper`, other binaries `BytesWrapper`, DATE
  `DateWrapper`, DECIMAL `DecimalWrapper` (stored at scale 15). Columns Hudi cannot wrap (INT96,
  non-decimal fixed, decimals beyond decimal(30, 15)) get no record: readers keep such files.
* A **log file**: from the records appended to it (`HoodieAppendHandle` with column stats on):
  Arrow min/max per column, sizes 0; timestamps stay raw longs in their unit (`LongWrapper`, as
  Hudi's `getNestedFieldVal` leaves them without `consistent.logical.timestamp.enabled`).
* A **deleted file** (clean, replaced file groups): a tombstone per column
  (`HoodieColumnRangeMetadata.stub`: no values, counts and sizes -1, `isDeleted`).

Deliberate difference: a decimal that does not fit decimal(30, 15) makes Hudi 0.14 fail the commit
(`tryUpcastDecimal`); pyhudi leaves that column of that file unindexed instead.

Which columns: `hoodie.metadata.index.column.stats.column.list`, else every top-level column of
the writer schema with the meta fields (Hudi 0.14's `getColumnsToIndex`); nested leaves are never
indexed (their footer path `a.b` names no top-level field).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.metadata_hfile import DECIMAL_WRAPPER_SCALE
from pyhudi.codec.metadata_keys import column_stats_key
from pyhudi.codec.metadata_records import ColumnStats, MetadataRecord, MetadataRecordType

#: decimal(30, 15): the widest value a `DecimalWrapper` holds.
_DECIMAL_MAX = Decimal(10) ** (30 - DECIMAL_WRAPPER_SCALE)


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
    wanted = None if columns is None else set(columns)
    records = []
    for index in range(footer.num_columns):
        column = footer.schema.column(index)
        if "." in column.path or (wanted is not None and column.path not in wanted):
            continue
        stats = _footer_column(file_name, footer, index)
        if stats is not None:
            records.append(column_stats_record(partition, stats))
    return records


def _footer_column(file_name: str, footer: pq.FileMetaData, index: int) -> ColumnStats | None:
    column = footer.schema.column(index)
    wrapper = _footer_wrapper(column)
    if wrapper is None:
        return None
    lows, highs, nulls, values, size, raw_size = [], [], 0, 0, 0, 0
    for group in range(footer.num_row_groups):
        chunk = footer.row_group(group).column(index)
        values += chunk.num_values
        size += chunk.total_compressed_size
        raw_size += chunk.total_uncompressed_size
        stats = chunk.statistics
        if stats is None:
            continue
        nulls += stats.null_count or 0
        if stats.has_min_max:
            lows.append(_footer_value(column, wrapper, stats.min_raw))
            highs.append(_footer_value(column, wrapper, stats.max_raw))
    low, high = min(lows, default=None), max(highs, default=None)
    if wrapper == "DecimalWrapper" and not _fits_wrapper(low, high):
        return None
    return ColumnStats(
        file_name, column.path, low, high, values, nulls, size, raw_size, False, wrapper
    )


def _footer_wrapper(column: Any) -> str | None:
    physical, logical = column.physical_type, column.logical_type.type
    if logical == "DECIMAL" and physical in (
        "INT32",
        "INT64",
        "BYTE_ARRAY",
        "FIXED_LEN_BYTE_ARRAY",
    ):
        return "DecimalWrapper"
    if physical == "INT32":
        return "DateWrapper" if logical == "DATE" else "IntWrapper"
    if physical == "BYTE_ARRAY":
        return "StringWrapper" if logical == "STRING" else "BytesWrapper"
    simple = {
        "INT64": "LongWrapper",
        "FLOAT": "FloatWrapper",
        "DOUBLE": "DoubleWrapper",
        "BOOLEAN": "BooleanWrapper",
    }
    return simple.get(physical)  # INT96 and plain fixed: Hudi has no wrapper for them


def _footer_value(column: Any, wrapper: str, raw: Any) -> Any:
    if wrapper == "DecimalWrapper":
        unscaled = (
            int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes | bytearray) else raw
        )
        return Decimal(unscaled).scaleb(-column.scale)
    if wrapper == "DateWrapper":
        return dt.date(1970, 1, 1) + dt.timedelta(days=raw)
    if wrapper == "StringWrapper":
        return raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    return raw


def _fits_wrapper(*values: Decimal | None) -> bool:
    for value in values:
        if value is None:
            continue
        exponent = value.as_tuple().exponent
        if (isinstance(exponent, int) and exponent < -DECIMAL_WRAPPER_SCALE) or abs(
            value
        ) >= _DECIMAL_MAX:
            return False
    return True


def log_file_column_stats(
    partition: str,
    file_name: str,
    records: pa.Table,
    columns: Iterable[str] | None = None,
) -> list[MetadataRecord]:
    """Records of a log file from the rows appended to it (sizes 0, as Hudi's append handle)."""
    names = list(records.column_names if columns is None else columns)
    out = []
    for name in names:
        if name not in records.column_names:
            continue
        column = records.column(name)
        wrapper = _arrow_wrapper(column.type)
        if wrapper is None:
            continue
        low, high = _arrow_min_max(column)
        if wrapper == "DecimalWrapper" and not _fits_wrapper(low, high):
            continue
        stats = ColumnStats(
            file_name, name, low, high, len(column), column.null_count, 0, 0, False, wrapper
        )
        out.append(column_stats_record(partition, stats))
    return out


def _arrow_wrapper(kind: pa.DataType) -> str | None:
    checks = (
        (pa.types.is_boolean, "BooleanWrapper"),
        (lambda t: pa.types.is_integer(t) and t.bit_width <= 32, "IntWrapper"),
        (pa.types.is_integer, "LongWrapper"),
        (pa.types.is_float32, "FloatWrapper"),
        (pa.types.is_floating, "DoubleWrapper"),
        (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "StringWrapper"),
        (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t), "BytesWrapper"),
        (pa.types.is_date32, "DateWrapper"),
        (pa.types.is_decimal, "DecimalWrapper"),
        (pa.types.is_timestamp, "LongWrapper"),
    )
    return next((name for check, name in checks if check(kind)), None)


def _arrow_min_max(column: pa.ChunkedArray) -> tuple[Any, Any]:
    if column.null_count == len(column):
        return None, None
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())  # the raw long in the column's unit
    result = pc.min_max(column).as_py()
    return result["min"], result["max"]


def deleted_file_column_stats(
    partition: str, file_name: str, columns: Sequence[str]
) -> list[MetadataRecord]:
    """Tombstones of a deleted (cleaned or replaced) file, one per indexed column."""
    return [
        column_stats_record(partition, ColumnStats(file_name, c, None, None, -1, -1, -1, -1, True))
        for c in columns
    ]
