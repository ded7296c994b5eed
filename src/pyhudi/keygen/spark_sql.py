"""Record keys as Spark SQL text: the same values as `pyhudi.keygen.spark.record_key_column`.

A Column built in Python costs one py4j round trip per call (a complex key: dozens); SQL text goes
to the JVM inside one `selectExpr` with the rest of a select. `values` lets a caller say what SQL
stands for a field that is not a column of the frame (a hive folder value, for instance).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from pyspark.sql import types as T

from pyhudi.exceptions import SchemaMismatchError
from pyhudi.keygen.spark import KEY_ERROR_PREFIX
from pyhudi.keygen.spec import EMPTY_RECORDKEY_PLACEHOLDER, NULL_RECORDKEY_PLACEHOLDER, KeyGenSpec


def sql_string(value: str) -> str:
    """`value` as a Spark SQL string literal (backslash escapes, the parser's default)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_json_constant(value: object, type_sql: str) -> str:
    """A constant of Spark SQL type `type_sql` (`map<string,array<bigint>>`, ...) from a JSON-able
    value: one string literal that `from_json` parses and the optimizer folds once (the same value
    built from Column calls costs a py4j round trip per element)."""
    return f"from_json({sql_string(json.dumps(value))}, {sql_string(type_sql)})"


def sql_identifier(name: str) -> str:
    """`name` as one back-quoted SQL identifier (dots and back-quotes in it kept)."""
    return "`" + name.replace("`", "``") + "`"


def sql_name(name: str) -> str:
    """A (possibly nested, dotted) field name as SQL: each part back-quoted."""
    return ".".join(sql_identifier(part) for part in name.split("."))


def sql_type(data_type: T.DataType) -> str:
    """A Spark type as SQL type text; struct field names back-quoted (they may hold anything)."""
    if isinstance(data_type, T.StructType):
        fields = ",".join(f"{sql_name(f.name)}:{sql_type(f.dataType)}" for f in data_type)
        return f"struct<{fields}>"
    if isinstance(data_type, T.ArrayType):
        return f"array<{sql_type(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"map<{sql_type(data_type.keyType)},{sql_type(data_type.valueType)}>"
    return data_type.simpleString()


def record_key_sql(
    spec: KeyGenSpec, schema: T.StructType, values: Mapping[str, str] | None = None
) -> str:
    """The key generator's record key over a frame of `schema` (dotted names reach nested
    fields); `values`: SQL standing for fields that are not columns of the frame."""
    strings = {name: _as_string(name, schema, values or {}) for name in spec.record_key_fields}
    if not spec.uses_complex_record_key:
        name = spec.record_key_fields[0]
        value = strings[name]
        message = f"{KEY_ERROR_PREFIX} recordKey value for field {name!r} is null or empty"
        return (
            f"CASE WHEN {value} IS NULL OR {value} = '' "
            f"THEN raise_error({sql_string(message)}) ELSE {value} END"
        )
    parts = []
    for name, value in strings.items():
        rendered = (
            f"CASE WHEN {value} IS NULL THEN {sql_string(NULL_RECORDKEY_PLACEHOLDER)} "
            f"WHEN {value} = '' THEN {sql_string(EMPTY_RECORDKEY_PLACEHOLDER)} ELSE {value} END"
        )
        parts.append(f"concat({sql_string(name + ':')}, {rendered})")
    missing = " AND ".join(f"({v} IS NULL OR {v} = '')" for v in strings.values())
    message = (
        f"{KEY_ERROR_PREFIX} all record key fields {list(spec.record_key_fields)} are null or empty"
    )
    return (
        f"CASE WHEN {missing} THEN raise_error({sql_string(message)}) "
        f"ELSE concat_ws(',', {', '.join(parts)}) END"
    )


def _as_string(name: str, schema: T.StructType, values: Mapping[str, str]) -> str:
    if name in values:
        return f"CAST({values[name]} AS STRING)"
    data_type: T.DataType = schema
    for part in name.split("."):
        if not isinstance(data_type, T.StructType) or part not in data_type.fieldNames():
            raise SchemaMismatchError(
                f"field {name!r} is not in the data (columns: {', '.join(schema.names)})"
            )
        data_type = data_type[part].dataType
    column = sql_name(name)
    if isinstance(data_type, T.TimestampType | T.TimestampNTZType):
        return f"CAST(unix_micros(CAST({column} AS TIMESTAMP)) AS STRING)"
    return f"CAST({column} AS STRING)"
