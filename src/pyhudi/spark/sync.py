"""Catalog sync (Hudi's meta sync): after a commit, the table is registered in the SparkSession's
catalog, with the name and database of Hudi's `hoodie.datasource.hive_sync.*` keys.

The catalog is whatever backs the session: the in-memory catalog, or a Hive metastore with
`enableHiveSupport()` (the embedded Derby metastore by default, a standalone one through
`hive.metastore.uris`). Tables are Spark data source tables `USING hudi` (readable by Spark SQL
through the `hudi` format); merge-on-read tables get Hudi's two tables, `<table>_ro`
(read-optimized) and `<table>_rt` (snapshot). A table whose columns changed since the last sync
is dropped and created again (dropping a `USING hudi ... LOCATION` table leaves its files alone).

Not Hive-format tables: Spark refuses the `spark.sql.*` table properties Hudi's Hive sync writes,
and a Hive-format table with Hudi's input format needs Hudi's jars to be read. Engines that read
Hudi tables through Hive's input format need Hudi's own Hive sync.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import SparkSession

from pyhudi.config import read as rkeys
from pyhudi.config import sync as skeys
from pyhudi.exceptions import ConfigError
from pyhudi.reader.dataframe import spark_schema
from pyhudi.reader.planner import plan_read
from pyhudi.table.context import TableContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncedTable:
    """One catalog table of a Hudi table: its name and how it reads the Hudi table."""

    database: str
    name: str
    query_type: str

    @property
    def qualified(self) -> str:
        return f"`{self.database}`.`{self.name}`"


def sync_enabled(options: Mapping[str, str]) -> bool:
    return bool(skeys.META_SYNC_ENABLED.get(options) or skeys.HIVE_SYNC_ENABLED.get(options))


def synced_tables(ctx: TableContext, options: Mapping[str, str]) -> list[SyncedTable]:
    """Hudi's names: the table itself (copy-on-write), or `_ro` and `_rt` (merge-on-read)."""
    database = skeys.DATABASE.get(options)
    name = skeys.TABLE.get(options) or ctx.config.name
    if not ctx.config.is_merge_on_read:
        return [SyncedTable(database, name, "snapshot")]
    ro_name = name if skeys.SKIP_RO_SUFFIX.get(options) else f"{name}_ro"
    return [
        SyncedTable(database, ro_name, "read_optimized"),
        SyncedTable(database, f"{name}_rt", "snapshot"),
    ]


#: The session conf naming the Hive metastore a session uses.
METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"


def check_sync_options(
    ctx: TableContext, options: Mapping[str, str], session_metastore_uris: str | None
) -> None:
    mode = skeys.MODE.get(options)
    if mode not in (None, "hms"):
        log.warning("%s=%s: pyhudi syncs through the SparkSession's catalog", skeys.MODE.key, mode)
    uris = skeys.METASTORE_URIS.get(options)
    if uris and uris != session_metastore_uris:
        raise ConfigError(
            f"{skeys.METASTORE_URIS.key}={uris}: pyhudi syncs through the SparkSession's catalog; "
            f"start the session with {METASTORE_URIS_CONF} set to the same URI"
        )
    fields = skeys.PARTITION_FIELDS.get(options)
    if fields is not None and tuple(fields) != tuple(ctx.config.partition_fields):
        raise ConfigError(
            f"{skeys.PARTITION_FIELDS.key}={','.join(fields)} differs from the table's partition "
            f"fields ({','.join(ctx.config.partition_fields) or 'none'}) at {ctx.base_path}"
        )


def sync_to_catalog(spark: SparkSession, path: str, options: Mapping[str, str]) -> list[str]:
    """Create (or refresh) the catalog tables of the Hudi table at `path`; returns their names."""
    ctx = TableContext.open(path)
    check_sync_options(ctx, options, spark.conf.get(METASTORE_URIS_CONF, None))
    done = []
    for table in synced_tables(ctx, options):
        spark.sql(f"CREATE DATABASE IF NOT EXISTS `{table.database}`")
        name = f"{table.database}.{table.name}"
        if spark.catalog.tableExists(name):
            if _columns(spark.table(name).schema) == _columns(_expected(spark, ctx)):
                done.append(name)
                continue
            spark.sql(f"DROP TABLE {table.qualified}")
        spark.sql(
            f"CREATE TABLE {table.qualified} USING hudi LOCATION '{ctx.uri}' "
            f"TBLPROPERTIES ('{rkeys.QUERY_TYPE.key}' = '{table.query_type}')"
        )
        done.append(name)
    return done


def _expected(spark: SparkSession, ctx: TableContext):  # type: ignore[no-untyped-def]
    return spark_schema(plan_read(ctx, {}), output=True)


def _columns(schema) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]
