"""The writer schema: incoming Spark types normalised as Hudi's Avro path sees them, checked
against the table schema (new nullable columns accepted, promotions applied, narrowing rejected)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import META_ARROW_FIELDS, META_FIELDS
from pyhudi.exceptions import SchemaMismatchError
from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.spark_compat import from_arrow_schema, to_arrow_schema

# Avro type promotions Hudi accepts when a column's type changes (narrow -> wide).
_PROMOTIONS = {
    (pa.int32(), pa.int64()),
    (pa.int32(), pa.float32()),
    (pa.int32(), pa.float64()),
    (pa.int64(), pa.float32()),
    (pa.int64(), pa.float64()),
    (pa.float32(), pa.float64()),
    (pa.string(), pa.binary()),
    (pa.binary(), pa.string()),
}


def normalize_spark_type(data_type: T.DataType) -> T.DataType:
    """Spark types as Avro can hold them: byte/short -> int, char/varchar -> string, recursively."""
    if isinstance(data_type, T.ByteType | T.ShortType):
        return T.IntegerType()
    if isinstance(data_type, T.CharType | T.VarcharType):
        return T.StringType()
    if isinstance(data_type, T.StructType):
        return T.StructType(
            [T.StructField(f.name, normalize_spark_type(f.dataType), True) for f in data_type]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(normalize_spark_type(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        if not isinstance(data_type.keyType, T.StringType):
            raise SchemaMismatchError(
                f"map keys must be strings in Hudi (Avro maps), got {data_type.keyType.simpleString()}"
            )
        return T.MapType(T.StringType(), normalize_spark_type(data_type.valueType), True)
    if isinstance(data_type, T.NullType):
        raise SchemaMismatchError(
            "a column of NullType (e.g. lit(None) without a cast) cannot be written"
        )
    return data_type


def normalize(df: DataFrame) -> DataFrame:
    """Cast columns whose types Avro cannot hold; drop incoming meta columns (Hudi recomputes them)."""
    columns = []
    for field in df.schema:
        if field.name in META_FIELDS:
            continue
        target = normalize_spark_type(field.dataType)
        column = F.col(sql_identifier(field.name))
        columns.append(
            column.cast(target).alias(field.name) if target != field.dataType else column
        )
    return df.select(*columns)


def arrow_data_schema(spark_schema: T.StructType) -> pa.Schema:
    schema = to_arrow_schema(spark_schema)
    return pa.schema([f.with_nullable(True) for f in schema if f.name not in META_FIELDS])


def file_schema(data_schema: pa.Schema) -> pa.Schema:
    return pa.schema([*META_ARROW_FIELDS, *[f for f in data_schema if f.name not in META_FIELDS]])


def reconcile(
    df: DataFrame,
    table_schema: pa.Schema | None,
    *,
    key_fields: tuple[str, ...],
    fill_missing: bool,
) -> tuple[DataFrame, pa.Schema]:
    """Fit `df` to the table schema. Returns the DataFrame to write and the new data schema."""
    incoming = arrow_data_schema(df.schema)
    schema, casts, missing = merged_schema(
        incoming, table_schema, key_fields=key_fields, fill_missing=fill_missing
    )
    return _apply(df, schema, casts, missing), schema


def merged_schema(
    incoming: pa.Schema,
    table_schema: pa.Schema | None,
    *,
    key_fields: tuple[str, ...],
    fill_missing: bool,
) -> tuple[pa.Schema, dict[str, pa.DataType], set[str]]:
    """The data schema after this write, the casts incoming columns need, and the columns filled with nulls."""
    if table_schema is None:
        return incoming, {}, set()
    table_fields = {f.name: f for f in table_schema if f.name not in META_FIELDS}
    missing = [name for name in table_fields if name not in incoming.names]
    key_roots = {k.split(".")[0] for k in key_fields}
    dropped_keys = [name for name in missing if name in key_roots]
    if dropped_keys:
        raise SchemaMismatchError(
            f"incoming data drops record key or partition field(s) {dropped_keys}"
        )
    if missing and not fill_missing:
        raise SchemaMismatchError(
            f"incoming data lacks table column(s) {missing}; Hudi rejects dropped columns "
            "(set hoodie.datasource.write.reconcile.schema=true to write them as nulls)"
        )
    result_fields, casts = [], {}
    for field in incoming:
        old = table_fields.get(field.name)
        merged = field if old is None else _merge_field(old, field, promote_incoming=fill_missing)
        if merged.type != field.type:
            casts[field.name] = merged.type
        result_fields.append(merged)
    for name in missing:
        result_fields.append(table_fields[name])
        casts[name] = table_fields[name].type
    return pa.schema(result_fields), casts, set(missing)


def _merge_field(old: pa.Field, new: pa.Field, *, promote_incoming: bool) -> pa.Field:
    merged = _merge_type(old.type, new.type, new.name, promote_incoming)
    return pa.field(new.name, merged, nullable=True)


def _merge_type(
    old: pa.DataType, new: pa.DataType, name: str, promote_incoming: bool = False
) -> pa.DataType:
    if old == new:
        return old
    if pa.types.is_struct(old) and pa.types.is_struct(new):
        fields = {f.name: f for f in old}
        merged = [
            pa.field(
                f.name,
                _merge_type(fields[f.name].type, f.type, f"{name}.{f.name}", promote_incoming)
                if f.name in fields
                else f.type,
                True,
            )
            for f in new
        ]
        merged += [f for f in old if f.name not in new.names]
        return pa.struct(merged)
    if pa.types.is_list(old) and pa.types.is_list(new):
        return pa.list_(_merge_type(old.value_type, new.value_type, f"{name}[]", promote_incoming))
    if pa.types.is_map(old) and pa.types.is_map(new):
        return pa.map_(
            old.key_type, _merge_type(old.item_type, new.item_type, f"{name}{{}}", promote_incoming)
        )
    if (
        new,
        old,
    ) in _PROMOTIONS and promote_incoming:  # reconcile: the table's type is the writer's
        return old
    if (old, new) in _PROMOTIONS:  # the column widens
        return new
    if (
        pa.types.is_decimal(old)
        and pa.types.is_decimal(new)
        and new.scale == old.scale
        and new.precision >= old.precision
    ):
        return new
    raise SchemaMismatchError(
        f"column {name!r} changes type from {old} to {new}; only widening promotions "
        "(int->long/float/double, long->float/double, float->double) are compatible "
        "(with hoodie.datasource.write.reconcile.schema=true narrower data is promoted to the table's type)"
    )


def _apply(
    df: DataFrame, schema: pa.Schema, casts: dict[str, pa.DataType], missing: set[str]
) -> DataFrame:
    if not casts:
        return df
    spark_types = {
        f.name: f.dataType for f in from_arrow_schema(pa.schema([schema.field(n) for n in casts]))
    }
    columns = []
    for field in schema:
        if field.name in missing:
            columns.append(F.lit(None).cast(spark_types[field.name]).alias(field.name))
        elif field.name in casts:
            columns.append(
                F.col(sql_identifier(field.name)).cast(spark_types[field.name]).alias(field.name)
            )
        else:
            columns.append(F.col(sql_identifier(field.name)))
    others = [F.col(sql_identifier(c)) for c in df.columns if c not in schema.names]
    return df.select(*columns, *others)
