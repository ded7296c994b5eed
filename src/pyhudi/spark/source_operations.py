"""Which `df.write.format("hudi")` writes Spark's Python Data Source API can run: those needing
no Spark job of their own (no index lookup, no shuffle). No import of `pyspark.sql.datasource`
here, so routing asks this on pyspark 3.5 too (where every `hudi` write goes to `pyhudi.write`).
"""

from __future__ import annotations

from pyhudi.config import sql as sqlkeys
from pyhudi.config import write as wkeys
from pyhudi.exceptions import HudiError, UnsupportedOperationError
from pyhudi.index.table_layout import index_options_for_table
from pyhudi.model.enums import WriteOperationType
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig, resolve_write_config

#: Operations a Data Source write can do without Spark jobs of its own (no index, no shuffle).
_SUPPORTED = (
    WriteOperationType.BULK_INSERT,
    WriteOperationType.INSERT,
    WriteOperationType.INSERT_OVERWRITE,
    WriteOperationType.INSERT_OVERWRITE_TABLE,
)


def uses_bucket_writes(cfg: WriteConfig) -> bool:
    """Merge-on-read with the bucket index: upserts and deletes need no index lookup or shuffle."""
    return (
        cfg.is_merge_on_read
        and cfg.index_type.routes_by_bucket
        and cfg.operation
        in (
            WriteOperationType.UPSERT,
            WriteOperationType.DELETE,
            WriteOperationType.INSERT,
        )
    )


def sql_insert_options(options: dict[str, str]) -> dict[str, str]:
    """Spark SQL `INSERT INTO`: the operation is Hudi's `hoodie.spark.sql.insert.into.operation`
    (insert by default) unless the table's or the session's options name one."""
    if wkeys.OPERATION.is_set(options):
        return options
    return {**options, wkeys.OPERATION.key: sqlkeys.INSERT_INTO_OPERATION.get(options)}


def check_data_source_operation(cfg: WriteConfig) -> None:
    if cfg.drop_duplicates and cfg.operation is WriteOperationType.INSERT:
        raise UnsupportedOperationError(
            f"{wkeys.INSERT_DROP_DUPLICATES.key}=true needs an index lookup (a Spark join), which "
            "Spark's Python Data Source API cannot run inside a write; use pyhudi.write(df, path, "
            "options) with the same options"
        )
    if uses_bucket_writes(cfg):
        return
    if cfg.index_type.routes_by_bucket:
        raise UnsupportedOperationError(
            f"operation {cfg.operation.value.lower()} into a {cfg.table_type.value.lower()} table with "
            "hoodie.index.type=BUCKET needs a shuffle by bucket, which Spark's Python Data Source API "
            "cannot run inside a write (its files would not be the buckets' file groups); use "
            "pyhudi.write(df, path, options) with the same options (the Data Source writes "
            "merge-on-read bucket tables with upsert, insert and delete)"
        )
    if cfg.operation in _SUPPORTED:
        return
    raise UnsupportedOperationError(
        f"operation {cfg.operation.value.lower()} needs an index lookup (a Spark join) or a shuffle, which "
        "Spark's Python Data Source API cannot run inside a write; use pyhudi.write(df, path, options) "
        "with the same options (merge-on-read tables with hoodie.index.type=BUCKET need neither)"
    )


def runs_as_data_source(path: str, options: dict[str, str], overwrite: bool) -> bool:
    """This write can run inside Spark's Python Data Source API (`check_data_source_operation`
    lets it through); a bad option or value also answers True, so the data source reports it."""
    if wkeys.OPERATION.get(options).lower() == "bootstrap":
        return True
    if overwrite:
        options = {**options, wkeys.OPERATION.key: "insert_overwrite_table"}
    try:
        existing = TableContext.open(path) if TableContext.exists(path) else None
        if existing is not None:
            options = index_options_for_table(existing, options)
        check_data_source_operation(
            resolve_write_config(options, existing.config if existing else None)
        )
    except UnsupportedOperationError:
        return False
    except HudiError:
        return True
    return True
