"""Record keys and partition paths as Spark Column expressions (no Python UDFs).

Strings follow Hudi 0.14's Avro key path: `cast(value as string)` for primitives, a timestamp
column renders as its epoch micros, complex keys as `f1:v1,f2:v2` with `__null__`/`__empty__`,
partition values `__HIVE_DEFAULT_PARTITION__` when null or empty, hive style `field=value`,
and Hive's `%XX` escaping when `urlencode` is on. A null or empty simple record key fails the
job with a message that names the field (`raise_error`), which the writer turns into a clean error.
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.exceptions import SchemaMismatchError
from pyhudi.keygen.spec import (
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    KeyGenSpec,
    PartitionFieldType,
    TimestampOptions,
)
from pyhudi.keygen.timestamps import timestamp_partition_value

#: Prefix of job-failing messages raised from key expressions (recognised by the writer).
KEY_ERROR_PREFIX = "pyhudi-invalid-record:"


def record_error_detail(text: str) -> str | None:
    """The message of a record check's `raise_error` (after `KEY_ERROR_PREFIX`) in the text of
    the Spark error it caused, without the SQL state Spark appends; None when there is none."""
    if KEY_ERROR_PREFIX not in text:
        return None
    detail = text.split(KEY_ERROR_PREFIX, 1)[1].split("\n", 1)[0]
    return re.sub(r"\s*SQLSTATE: P0001\b.*$", "", detail).strip().rstrip(".")


# Hive's `FileUtils.escapePathName` set, in the order applied ('%' first).
ESCAPED_CHARS = [
    "%",
    *[chr(c) for c in range(0, 0x20)],  # PartitionPathEncodeUtils escapes U+0000 too
    '"',
    "#",
    "'",
    "*",
    "/",
    ":",
    "=",
    "?",
    "\\",
    "\x7f",
    "{",
    "[",
    "]",
    "^",
]


def field_type(df: DataFrame, name: str) -> T.DataType:
    current: T.DataType = df.schema
    for part in name.split("."):
        if not isinstance(current, T.StructType) or part not in current.fieldNames():
            raise SchemaMismatchError(
                f"field {name!r} is not in the data (columns: {', '.join(df.columns)})"
            )
        current = current[part].dataType
    return current


def _as_string(df: DataFrame, name: str) -> Column:
    data_type = field_type(df, name)
    column = F.col(name)
    if isinstance(data_type, T.TimestampType | T.TimestampNTZType):
        return F.unix_micros(column.cast(T.TimestampType())).cast("string")
    return column.cast("string")


def record_key_column(df: DataFrame, spec: KeyGenSpec) -> Column:
    if not spec.uses_complex_record_key:
        name = spec.record_key_fields[0]
        value = _as_string(df, name)
        message = f"{KEY_ERROR_PREFIX} recordKey value for field {name!r} is null or empty"
        return F.when(value.isNull() | (value == ""), F.raise_error(F.lit(message))).otherwise(
            value
        )
    parts, all_missing = [], None
    for name in spec.record_key_fields:
        value = _as_string(df, name)
        missing = value.isNull() | (value == "")
        rendered = (
            F.when(value.isNull(), F.lit(NULL_RECORDKEY_PLACEHOLDER))
            .when(value == "", F.lit(EMPTY_RECORDKEY_PLACEHOLDER))
            .otherwise(value)
        )
        parts.append(F.concat(F.lit(f"{name}:"), rendered))
        all_missing = missing if all_missing is None else all_missing & missing
    message = (
        f"{KEY_ERROR_PREFIX} all record key fields {list(spec.record_key_fields)} are null or empty"
    )
    assert all_missing is not None  # build_spec requires at least one record key field
    return F.when(all_missing, F.raise_error(F.lit(message))).otherwise(F.concat_ws(",", *parts))


def partition_path_column(df: DataFrame, spec: KeyGenSpec) -> Column:
    if not spec.partition_fields:
        return F.lit("")
    segments = [column for _, column in partition_segments(df, spec)]
    return segments[0] if len(segments) == 1 else F.concat_ws("/", *segments)


def partition_segments(df: DataFrame, spec: KeyGenSpec) -> list[tuple[str, Column]]:
    """(field, its part of the partition path) per partition field, in path order."""
    return [(name, _segment(df, name, kind, spec)) for name, kind in spec.partition_fields]


def _segment(df: DataFrame, name: str, kind: PartitionFieldType, spec: KeyGenSpec) -> Column:
    if kind is PartitionFieldType.TIMESTAMP:
        assert spec.timestamp is not None
        value = timestamp_partition_value(F.col(name), field_type(df, name), spec.timestamp)
    else:
        value = _as_string(df, name)
    value = F.when(value.isNull() | (value == ""), F.lit(DEFAULT_PARTITION_PATH)).otherwise(
        escape_path(value) if spec.url_encode else value
    )
    return F.concat(F.lit(f"{name}="), value) if spec.hive_style else value


def escape_path(value: Column) -> Column:
    for char in ESCAPED_CHARS:
        value = F.replace(value, F.lit(char), F.lit(f"%{ord(char):02X}"))
    return value


def escape_path_value(value: str) -> str:
    """The same escaping in Python (partition pruning of literals)."""
    out = value
    for char in ESCAPED_CHARS:
        out = out.replace(char, f"%{ord(char):02X}")
    return out


def with_key_columns(
    df: DataFrame, spec: KeyGenSpec, record_key: str, partition_path: str
) -> DataFrame:
    """`df` plus the record key and partition path columns."""
    return df.withColumns(
        {record_key: record_key_column(df, spec), partition_path: partition_path_column(df, spec)}
    )


__all__ = [
    "KEY_ERROR_PREFIX",
    "TimestampOptions",
    "escape_path",
    "escape_path_value",
    "partition_path_column",
    "partition_segments",
    "record_key_column",
    "with_key_columns",
]
