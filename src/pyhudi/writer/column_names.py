"""Incoming column names made Avro-valid before anything is written (`pyhudi.codec.avro_names`).

Without sanitizing, an invalid name anywhere in the schema (nested fields too) is a
`SchemaMismatchError` naming it. With `hoodie.streamer.source.sanitize.invalid.schema.field.names`
the names are rewritten as Hudi does and the data follows: Spark casts a struct to a struct of
the same shape by position; Arrow batches are re-labelled with `Array.view` (same layout, new
names; `cast` would match struct fields by name and silently produce nulls).
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.avro_names import (
    check_unique,
    invalid_names_error,
    is_valid_name,
    sanitize_name,
    sanitized_schema,
)
from pyhudi.config import sanitize as skeys
from pyhudi.keygen.spark_sql import sql_identifier


def _renamed(data_type: T.DataType, mask: str | None, path: str, bad: list[str]) -> T.DataType:
    """`data_type` with sanitized field names (`mask`), collecting invalid paths in `bad`."""
    if isinstance(data_type, T.StructType):
        fields = []
        for f in data_type.fields:
            child = f"{path}{f.name}"
            if not is_valid_name(f.name):
                bad.append(child)
            name = sanitize_name(f.name, mask) if mask is not None else f.name
            inner = _renamed(f.dataType, mask, f"{child}.", bad)
            fields.append(T.StructField(name, inner, f.nullable, f.metadata))
        where = f" of {path.rstrip('.')!r}" if path else ""
        check_unique([f.name for f in fields], [f.name for f in data_type.fields], where)
        return T.StructType(fields)
    if isinstance(data_type, T.ArrayType):
        element = _renamed(data_type.elementType, mask, f"{path.rstrip('.')}[].", bad)
        return T.ArrayType(element, data_type.containsNull)
    if isinstance(data_type, T.MapType):
        value = _renamed(data_type.valueType, mask, f"{path.rstrip('.')}{{}}.", bad)
        return T.MapType(data_type.keyType, value, data_type.valueContainsNull)
    return data_type


def conformed_schema(schema: T.StructType, options: Mapping[str, str]) -> T.StructType:
    """`schema` with Avro-valid names: sanitized when asked, else an error naming the columns."""
    mask = sanitize_mask(options)
    bad: list[str] = []
    renamed = _renamed(schema, mask, "", bad)
    if bad and mask is None:
        raise invalid_names_error(bad)
    assert isinstance(renamed, T.StructType)
    return renamed


def conform_column_names(df: DataFrame, options: Mapping[str, str]) -> DataFrame:
    """`df` with Avro-valid column names (see `conformed_schema`)."""
    target = conformed_schema(df.schema, options)
    if target == df.schema:
        return df
    return df.select(
        *[
            F.col(sql_identifier(old.name)).cast(new.dataType).alias(new.name)
            if new.dataType != old.dataType
            else F.col(sql_identifier(old.name)).alias(new.name)
            for old, new in zip(df.schema.fields, target.fields, strict=True)
        ]
    )


def relabel(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` with the (same-shaped) `schema`'s names, nested ones included, data untouched."""
    if table.schema.names == schema.names and table.schema.equals(schema):
        return table
    columns = [
        pa.chunked_array([chunk.view(field.type) for chunk in column.chunks], type=field.type)
        for column, field in zip(table.columns, schema, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def sanitize_mask(options: Mapping[str, str]) -> str | None:
    """The mask when sanitizing is on, else None."""
    return skeys.INVALID_CHAR_MASK.get(options) if skeys.SANITIZE_FIELD_NAMES.get(options) else None


def sanitized_batch(table: pa.Table, mask: str | None) -> pa.Table:
    """An incoming Arrow batch with the names `conformed_schema` gave its Spark schema."""
    return table if mask is None else relabel(table, sanitized_schema(table.schema, mask))
