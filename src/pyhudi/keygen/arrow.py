"""Record keys and partition paths in Arrow, for writes without a SparkSession (the Python Data
Source writer runs in tasks only). Same strings as `pyhudi.keygen.spark`'s Spark expressions."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.exceptions import ConfigError, InvalidRecordError, SchemaMismatchError
from pyhudi.keygen.spark import ESCAPED_CHARS, escape_path_value
from pyhudi.keygen.spec import (
    DEFAULT_PARTITION_PATH,
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    KeyGenSpec,
    PartitionFieldType,
    TimestampOptions,
)

_JAVA_TO_STRFTIME = [
    ("yyyy", "%Y"),
    ("yy", "%y"),
    ("MM", "%m"),
    ("dd", "%d"),
    ("HH", "%H"),
    ("mm", "%M"),
    ("ss", "%S"),
]
_UNIT_MICROS = {
    "MICROSECONDS": 1,
    "MILLISECONDS": 1_000,
    "SECONDS": 1_000_000,
    "MINUTES": 60_000_000,
    "HOURS": 3_600_000_000,
    "DAYS": 86_400_000_000,
}


def _column(table: pa.Table, name: str) -> pa.Array:
    parts = name.split(".")
    if parts[0] not in table.column_names:
        raise SchemaMismatchError(
            f"field {name!r} is not in the data (columns: {', '.join(table.column_names)})"
        )
    column = table.column(parts[0]).combine_chunks()
    for part in parts[1:]:
        column = pc.struct_field(column, part)
    return column


def column_values(table: pa.Table, name: str) -> pa.Array:
    """The values of a (possibly nested, `a.b`) field; `SchemaMismatchError` when missing."""
    return _column(table, name)


def _as_string(column: pa.Array) -> pa.Array:
    if pa.types.is_timestamp(column.type):
        return pc.cast(
            pc.cast(column.cast(pa.timestamp("us", tz=column.type.tz)), pa.int64()), pa.string()
        )
    return pc.cast(column, pa.string())


def record_keys(table: pa.Table, spec: KeyGenSpec) -> pa.Array:
    if not spec.uses_complex_record_key:
        name = spec.record_key_fields[0]
        values = _as_string(_column(table, name))
        # Kleene `or`: a null key is null or empty (`or_` would make it null, which `any` skips).
        if pc.any(pc.or_kleene(pc.is_null(values), pc.equal(values, ""))).as_py():
            raise InvalidRecordError(f"recordKey value for field {name!r} is null or empty")
        return values
    parts, all_missing = [], None
    for name in spec.record_key_fields:
        values = _as_string(_column(table, name))
        missing = pc.fill_null(pc.or_(pc.is_null(values), pc.equal(values, "")), True)
        rendered = pc.if_else(
            pc.is_null(values),
            NULL_RECORDKEY_PLACEHOLDER,
            pc.if_else(pc.equal(values, ""), EMPTY_RECORDKEY_PLACEHOLDER, values),
        )
        parts.append(pc.binary_join_element_wise(f"{name}:", rendered, ""))
        all_missing = missing if all_missing is None else pc.and_(all_missing, missing)
    if pc.any(all_missing).as_py():
        raise InvalidRecordError(
            f"all record key fields {list(spec.record_key_fields)} are null or empty"
        )
    return pc.binary_join_element_wise(*parts, ",")


def partition_paths(table: pa.Table, spec: KeyGenSpec) -> pa.Array:
    if not spec.partition_fields:
        return pa.repeat("", table.num_rows).cast(pa.string())
    segments = [column for _, column in partition_segments(table, spec)]
    return segments[0] if len(segments) == 1 else pc.binary_join_element_wise(*segments, "/")


def partition_segments(table: pa.Table, spec: KeyGenSpec) -> list[tuple[str, pa.Array]]:
    """(field, its part of the partition path) per partition field, in path order."""
    return [(name, _segment(table, name, kind, spec)) for name, kind in spec.partition_fields]


def _segment(table: pa.Table, name: str, kind: PartitionFieldType, spec: KeyGenSpec) -> pa.Array:
    column = _column(table, name)
    if kind is PartitionFieldType.TIMESTAMP:
        assert spec.timestamp is not None
        values = _timestamp_value(column, spec.timestamp)
    else:
        values = _as_string(column)
    if spec.url_encode:
        for char in ESCAPED_CHARS:
            values = pc.replace_substring(values, char, f"%{ord(char):02X}")
    values = pc.if_else(pc.fill_null(pc.equal(values, ""), True), DEFAULT_PARTITION_PATH, values)
    return pc.binary_join_element_wise(f"{name}=", values, "") if spec.hive_style else values


def _timestamp_value(column: pa.Array, options: TimestampOptions) -> pa.Array:
    micros = _epoch_micros(column, options)
    instants = pc.cast(micros, pa.timestamp("us", tz="UTC"))
    local = pc.cast(
        pc.local_timestamp(instants.cast(pa.timestamp("us", tz=options.output_timezone))),
        pa.timestamp("us"),
    )
    return pc.strftime(local, format=_strftime(options.output_format))


def _epoch_micros(column: pa.Array, options: TimestampOptions) -> pa.Array:
    if pa.types.is_timestamp(column.type):
        return pc.cast(column.cast(pa.timestamp("us", tz=column.type.tz or "UTC")), pa.int64())
    kind = options.timestamp_type
    factors = {"UNIX_TIMESTAMP": 1_000_000, "EPOCHMILLISECONDS": 1_000, "EPOCHMICROSECONDS": 1}
    if kind in factors:
        return pc.multiply(pc.cast(column, pa.int64()), factors[kind])
    if kind == "SCALAR":
        return pc.cast(
            pc.multiply(
                pc.cast(column, pa.float64()), _UNIT_MICROS.get(options.scalar_unit, 1_000_000)
            ),
            pa.int64(),
        )
    raise ConfigError(
        f"timestamp type {kind} is not available through df.write.format('hudi'); use pyhudi.write"
    )


def _strftime(pattern: str) -> str:
    out = re.sub(r"'([^']*)'", r"\1", pattern)
    for java, c in _JAVA_TO_STRFTIME:
        out = out.replace(java, c)
    return out


__all__ = [
    "column_values",
    "escape_path_value",
    "partition_paths",
    "partition_segments",
    "record_keys",
]
