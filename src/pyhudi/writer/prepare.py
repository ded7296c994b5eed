"""Incoming records made ready to write: normalised types, key columns, delete flags, de-duplication."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pyhudi.codec.arrow_compute import field_values
from pyhudi.codec.schema import IS_DELETED_FIELD, PARTITION_PATH, RECORD_KEY
from pyhudi.exceptions import InvalidRecordError, SchemaMismatchError
from pyhudi.file_group.control_columns import DELETE
from pyhudi.keygen.spark import KEY_ERROR_PREFIX, field_type, with_key_columns
from pyhudi.keygen.spark_sql import sql_identifier, sql_name
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import ordering_columns
from pyhudi.merge.partial import precombine, spark_field_ops
from pyhudi.model.enums import WriteOperationType
from pyhudi.writer import schema as wschema
from pyhudi.writer.column_names import conform_column_names
from pyhudi.writer.config import WriteConfig


def required_fields(cfg: WriteConfig) -> list[str]:
    fields = [*cfg.keygen.record_key_fields, *cfg.keygen.partition_field_names]
    return list(dict.fromkeys(fields))


def check_required_fields(df: DataFrame, cfg: WriteConfig) -> None:
    for name in required_fields(cfg):
        field_type(df, name)  # raises SchemaMismatchError naming the field
    if not needs_ordering(cfg):
        return
    for field in ordering_columns(cfg.precombine_field):
        try:
            field_type(df, field)
        except SchemaMismatchError:
            raise SchemaMismatchError(
                f"precombine field {field!r} (hoodie.datasource.write.precombine.field) is not "
                f"in the data (columns: {', '.join(df.columns)}); set it to an ordering column, or set "
                "hoodie.combine.before.upsert=false to skip de-duplication"
            ) from None


def needs_ordering(cfg: WriteConfig) -> bool:
    return (
        cfg.combine_before_write
        and cfg.operation is not WriteOperationType.DELETE
        and cfg.operation
        in (
            WriteOperationType.UPSERT,
            WriteOperationType.INSERT,
            WriteOperationType.BULK_INSERT,
            WriteOperationType.INSERT_OVERWRITE,
            WriteOperationType.INSERT_OVERWRITE_TABLE,
        )
    )


def prepare_records(
    df: DataFrame,
    cfg: WriteConfig,
    table_schema: pa.Schema | None,
    *,
    delete_flags: bool = False,
) -> tuple[DataFrame, pa.Schema]:
    """Normalise, reconcile with the table schema, add keys and the delete flag.

    `delete_flags`: `df` carries each record's delete flag, computed by the caller (MERGE INTO),
    in the control column `__pyhudi_delete`; it stays out of the data schema."""
    if delete_flags and DELETE not in df.columns:
        raise SchemaMismatchError(f"the records carry no delete flag column {DELETE!r}")
    normalized = wschema.normalize(conform_column_names(df, cfg.options))
    check_required_fields(normalized, cfg)
    if cfg.operation is WriteOperationType.DELETE:
        data_schema = (
            table_schema
            if table_schema is not None
            else wschema.arrow_data_schema(normalized.schema)
        )
        keyed = with_key_columns(normalized, cfg.keygen, RECORD_KEY, PARTITION_PATH)
        return keyed.withColumn(DELETE, F.lit(True)), data_schema
    fitted, data_schema = wschema.reconcile(
        normalized,
        table_schema,
        key_fields=tuple(required_fields(cfg)),
        fill_missing=cfg.reconcile_schema,
    )
    keyed = with_key_columns(fitted, cfg.keygen, RECORD_KEY, PARTITION_PATH)
    if delete_flags:
        data_schema = pa.schema([f for f in data_schema if f.name != DELETE])
        deleted = F.coalesce(F.col(DELETE).cast("boolean"), F.lit(False))
    elif IS_DELETED_FIELD in fitted.columns:
        deleted = F.coalesce(F.col(IS_DELETED_FIELD).cast("boolean"), F.lit(False))
    else:
        deleted = F.lit(False)
    for ordering in checked_ordering_fields(cfg, fitted.columns):
        # Evaluated with the record's other columns, in the first job that reads the records.
        message = F.concat(
            F.lit(f"{KEY_ERROR_PREFIX} {null_ordering_text(ordering)} '"),
            F.col(RECORD_KEY),
            F.lit("'"),
        )
        deleted = F.when(F.col(sql_name(ordering)).isNull(), F.raise_error(message)).otherwise(
            deleted
        )
    return keyed.withColumn(DELETE, deleted), data_schema


def checked_ordering_fields(cfg: WriteConfig, columns: list[str]) -> list[str]:
    """The ordering fields whose values must not be null: as in Hudi 0.14, whose payloads
    refuse a null ordering value ("Ordering value is null for record") on the writes that
    combine records by it (upserts unless `hoodie.combine.before.upsert=false`; inserts and
    overwrites with `hoodie.combine.before.insert` or `hoodie.datasource.write.insert.drop.duplicates`).
    A `bulk_insert` never checks them (Hudi's row writer makes no payloads). Several ordering
    fields (table versions 8 and 9): each of them."""
    fields = [f for f in ordering_columns(cfg.precombine_field) if f.split(".", 1)[0] in columns]
    if cfg.operation is WriteOperationType.UPSERT:
        return fields if cfg.combine_before_write else []
    inserts = (
        WriteOperationType.INSERT,
        WriteOperationType.INSERT_OVERWRITE,
        WriteOperationType.INSERT_OVERWRITE_TABLE,
    )
    if cfg.operation in inserts and (cfg.combine_before_write or cfg.drop_duplicates):
        return fields
    return []


def null_ordering_text(field: str) -> str:
    return (
        f"ordering field {field!r} (hoodie.datasource.write.precombine.field) is null, which "
        "Hudi refuses on a write that combines records by it; record key"
    )


def check_ordering_values(table: pa.Table, keys: pa.Array, cfg: WriteConfig) -> None:
    """`checked_ordering_fields`'s rule on an Arrow batch (`format("hudi")` tasks)."""
    for field in checked_ordering_fields(cfg, table.column_names):
        values = field_values(table, field)  # `a.b`: null where struct `a` is null, as in Hudi
        if values is None:  # not a field of this batch: the schema checks name it
            continue
        nulls = pc.indices_nonzero(pc.is_null(values))
        if len(nulls):
            key = keys[nulls[0].as_py()].as_py()
            raise InvalidRecordError(f"{null_ordering_text(field)} {key!r}")


def deduplicate(df: DataFrame, cfg: WriteConfig) -> DataFrame:
    """One record per key (and partition, unless the index is global): the greatest ordering value wins."""
    keys = [RECORD_KEY] if cfg.is_global_index else [RECORD_KEY, PARTITION_PATH]
    others = [c for c in df.columns if c not in keys]
    if not others:
        return df.dropDuplicates(keys)
    if cfg.merge_mode is MergeMode.PARTIAL_UPDATE:
        return _fold_partial(df, cfg, keys, others)
    record = F.struct(*[F.col(sql_identifier(c)) for c in others])
    # `a.b`: field b of struct column a. Several fields: a struct compares as the tuple.
    ordering = [f for f in ordering_columns(cfg.precombine_field) if f.split(".")[0] in df.columns]
    if ordering:
        winner = F.max_by(record, F.struct(*[F.col(sql_name(f)) for f in ordering]))
    else:
        winner = F.any_value(record)
    return (
        df.groupBy(*keys)
        .agg(winner.alias("__pyhudi_r"))
        .select(*keys, "__pyhudi_r.*")
        .select(*df.columns)
    )


_SEQ = "__pyhudi_seq"


def _fold_partial(df: DataFrame, cfg: WriteConfig, keys: list[str], others: list[str]) -> DataFrame:
    """`PartialUpdateAvroPayload` de-duplication: each key's records, in input order, fold by
    `pyhudi.merge.partial.precombine` (Spark's `aggregate`, no Python per record). The delete flag
    column becomes the result's."""
    ops = spark_field_ops(F)
    names = [c for c in others if c != DELETE]
    fields = [f for f in ordering_columns(cfg.precombine_field) if f.split(".")[0] in df.columns]
    layout = [_SEQ, *others]
    numbered = df.withColumn(_SEQ, F.monotonically_increasing_id())
    record = F.struct(*[F.col(sql_identifier(c)).alias(c) for c in layout])
    versions = F.array_sort(
        F.collect_list(record),
        lambda a, b: F.when(a[_SEQ] < b[_SEQ], -1).when(a[_SEQ] > b[_SEQ], 1).otherwise(0),
    )

    def step(acc: Column, new: Column) -> Column:
        def flag(row: Column) -> Column:
            return F.coalesce(row[DELETE], F.lit(False)) if DELETE in others else F.lit(False)

        merged, gone = precombine(
            ops,
            names,
            {n: acc[n] for n in names},
            {n: new[n] for n in names},
            ([_nested(acc, f) for f in fields], [_nested(new, f) for f in fields]),
            (flag(acc), flag(new)),
        )
        values = {**merged, _SEQ: new[_SEQ]}
        if DELETE in others:
            values[DELETE] = gone
        return F.struct(*[values[c].alias(c) for c in layout])

    folded = F.aggregate(F.slice(versions, 2, F.size(versions)), F.element_at(versions, 1), step)
    return (
        numbered.groupBy(*keys)
        .agg(folded.alias("__pyhudi_r"))
        .select(*keys, *[F.col("__pyhudi_r").getField(c).alias(c) for c in others])
        .select(*df.columns)
    )


def _nested(row: Column, name: str) -> Column:
    """Field `name` of a struct Column (`a.b`: field b of its struct field a)."""
    value = row
    for part in name.split("."):
        value = value[part]
    return value
