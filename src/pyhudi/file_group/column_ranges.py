"""Column ranges of a written data file (Hudi's `HoodieColumnRangeMetadata`), as `ColumnStats`.

Computed where the data is (the write task that wrote the file, or the driver reading a footer)
and turned into `column_stats` records by `pyhudi.metadata.column_stats_records`:

* a **parquet base file**: from its footer (`ParquetUtils.readRangeFromParquetMetadata`), per
  top-level column folded over row groups: min of mins, max of maxes, null and value counts, total
  (compressed) and uncompressed sizes. Values keep the Java type Hudi's footer conversion gives,
  which picks the Avro wrapper: INT32 `IntWrapper`, INT64 (timestamps too, raw) `LongWrapper`,
  FLOAT/DOUBLE, BOOLEAN, UTF8 strings `StringWrapper`, other binaries `BytesWrapper`, DATE
  `DateWrapper`, DECIMAL `DecimalWrapper` (stored at scale 15). Columns Hudi cannot wrap (INT96,
  non-decimal fixed, decimals beyond decimal(30, 15)) get no range;
* a **log file**: from the records appended to it (`HoodieAppendHandle.processAppendResult` with
  column stats on: `collectColumnRangeMetadata` over the records with their meta fields): Arrow
  min/max per column, value count = records, sizes 0; timestamps stay raw longs in their unit.

Nested leaves never get a range (their footer path `a.b` names no top-level field).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.metadata_hfile import DECIMAL_WRAPPER_SCALE, VALUE_TYPE_OF_WRAPPER
from pyhudi.codec.metadata_records import ColumnStats

#: Hudi 1.x `ValueType.DECIMAL`.
_DECIMAL_TYPE = 10
#: decimal(30, 15): the widest value a `DecimalWrapper` holds.
_DECIMAL_MAX = Decimal(10) ** (30 - DECIMAL_WRAPPER_SCALE)


def footer_column_ranges(file_name: str, footer: pq.FileMetaData) -> list[ColumnStats]:
    """The ranges of every top-level column of a parquet file, in footer order."""
    ranges = []
    for index in range(footer.num_columns):
        if "." in footer.schema.column(index).path:
            continue
        stats = _footer_column(file_name, footer, index)
        if stats is not None:
            ranges.append(stats)
    return ranges


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
    if wrapper == "DecimalWrapper" and not fits_decimal_wrapper(low, high):
        return None
    return ColumnStats(
        file_name,
        column.path,
        low,
        high,
        values,
        nulls,
        size,
        raw_size,
        False,
        wrapper,
        _footer_value_type(column, wrapper),
    )


def _footer_value_type(column: Any, wrapper: str) -> tuple[int, str | None]:
    """Hudi 1.x's `ValueType` (ordinal, info) of a footer column: what its logical type says."""
    logical = column.logical_type.type
    if wrapper == "DecimalWrapper":
        return _DECIMAL_TYPE, f"{column.precision},{column.scale}"
    if logical == "TIMESTAMP":
        meta = json.loads(column.logical_type.to_json())
        return _timestamp_type(meta.get("timeUnit", ""), bool(meta.get("isAdjustedToUTC", True)))
    return VALUE_TYPE_OF_WRAPPER[wrapper], None


def _timestamp_type(unit: str, utc: bool) -> tuple[int, None]:
    base = {"ms": 15, "milliseconds": 15, "us": 16, "microseconds": 16}.get(unit, 17)
    return (base if utc else base + 3), None


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


def fits_decimal_wrapper(*values: Decimal | None) -> bool:
    """Whether every value fits decimal(30, 15) (Hudi 0.14 fails the commit on others)."""
    for value in values:
        if value is None:
            continue
        exponent = value.as_tuple().exponent
        if (isinstance(exponent, int) and exponent < -DECIMAL_WRAPPER_SCALE) or abs(
            value
        ) >= _DECIMAL_MAX:
            return False
    return True


def table_column_ranges(file_name: str, records: pa.Table) -> list[ColumnStats]:
    """The ranges of every column of the records appended to a log file, in column order."""
    ranges = []
    for name in records.column_names:
        column = records.column(name)
        wrapper = _arrow_wrapper(column.type)
        if wrapper is None:
            continue
        low, high = _arrow_min_max(column)
        if wrapper == "DecimalWrapper" and not fits_decimal_wrapper(low, high):
            continue
        ranges.append(
            ColumnStats(
                file_name,
                name,
                low,
                high,
                len(column),
                column.null_count,
                0,
                0,
                False,
                wrapper,
                _arrow_value_type(column.type, wrapper),
            )
        )
    return ranges


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


def _arrow_value_type(kind: pa.DataType, wrapper: str) -> tuple[int, str | None]:
    """Hudi 1.x's `ValueType` (ordinal, info) of an Arrow column's values."""
    if pa.types.is_decimal(kind):
        return _DECIMAL_TYPE, f"{kind.precision},{kind.scale}"
    if pa.types.is_timestamp(kind):
        return _timestamp_type(kind.unit, kind.tz is not None)
    return VALUE_TYPE_OF_WRAPPER[wrapper], None


def _arrow_min_max(column: pa.ChunkedArray) -> tuple[Any, Any]:
    if column.null_count == len(column):
        return None, None
    if pa.types.is_timestamp(column.type):
        column = column.cast(pa.int64())  # the raw long in the column's unit
    result = pc.min_max(column).as_py()
    return result["min"], result["max"]
