"""Catalog sync (Hudi's meta sync): after a commit the table and its partitions are registered in
the metastore, with the database and name of Hudi's `hoodie.datasource.hive_sync.*` keys.

In a classic SparkSession with Hive support (the embedded Derby metastore by default, a standalone
one through `spark.hadoop.hive.metastore.uris`) this is Hudi's Hive sync (`HiveSyncTool` over
`HMSDDLExecutor`): an EXTERNAL Hive table with Hudi's input format, serde and properties
(`pyhudi.spark.hive_table`), one metastore partition per Hudi partition, kept up to date from the
timeline since the table's `last_commit_time_sync` (`pyhudi.table.meta_sync`). Merge-on-read
tables get Hudi's two tables, `<table>_ro` (read-optimized) and `<table>_rt` (snapshot, realtime
input format). Spark reads them as `hudi` data source tables.

Elsewhere (Spark Connect, a session without Hive support, non-builtin Hive jars) the tables are
Spark data source tables `USING hudi` made with Spark SQL, with a warning: that entry is Spark-only
(no Hudi input format, no metastore partitions). A table whose columns changed since the last sync
is dropped and created again (dropping a `USING hudi ... LOCATION` table leaves its files alone).

With `hoodie.meta.sync.client.tool.class` naming hudi-aws's `AwsGlueCatalogSyncTool`, the same
tables go to the AWS Glue Data Catalog instead (`pyhudi.table.glue_sync`, through boto3); the
session's catalog is then left alone unless `hoodie.datasource.hive_sync.enable` asks for Hive sync
too, as in Hudi.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

from pyspark.sql import SparkSession
from pyspark.sql.types import StructType

from pyhudi.config import read as rkeys
from pyhudi.config import sync as skeys
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.reader.dataframe import spark_schema
from pyhudi.reader.planner import plan_read
from pyhudi.spark.hive_metastore import HiveMetastore, MetastoreTable, connect
from pyhudi.spark.hive_table import SyncedTable, hive_table
from pyhudi.spark_compat import has_python_data_sources, needs_pyspark_4
from pyhudi.table.context import TableContext
from pyhudi.table.glue_sync import GlueCatalog, GlueSettings, sync_glue_table
from pyhudi.table.meta_sync import (
    PartitionEventType,
    extractor_class,
    latest_commit_time,
    partition_events,
)

log = logging.getLogger(__name__)

__all__ = [
    "SyncedTable",
    "check_sync_options",
    "sync_enabled",
    "sync_to_catalog",
    "sync_tools",
    "synced_tables",
]


def sync_enabled(options: Mapping[str, str]) -> bool:
    return bool(skeys.META_SYNC_ENABLED.get(options) or skeys.HIVE_SYNC_ENABLED.get(options))


def sync_tools(options: Mapping[str, str]) -> frozenset[str]:
    """`HoodieSparkSqlWriter.metaSync`: the tools of `hoodie.meta.sync.client.tool.class`, plus
    Hive sync when `hoodie.datasource.hive_sync.enable` is on (none when sync is off)."""
    if not sync_enabled(options):
        return frozenset()
    tools = {name.strip() for name in skeys.CLIENT_TOOL_CLASS.get(options) or () if name.strip()}
    if skeys.HIVE_SYNC_ENABLED.get(options):
        tools.add(skeys.HIVE_SYNC_TOOL)
    unknown = sorted(tools - skeys.SYNC_TOOLS)
    if unknown:
        raise ConfigError(
            f"{skeys.CLIENT_TOOL_CLASS.key}={','.join(unknown)}: pyhudi implements "
            f"{', '.join(sorted(skeys.SYNC_TOOLS))}"
        )
    return frozenset(tools)


def synced_tables(
    ctx: TableContext,
    options: Mapping[str, str],
    *,
    database: str | None = None,
    name: str | None = None,
) -> list[SyncedTable]:
    """Hudi's names: the table itself (copy-on-write), or `_ro` and `_rt` (merge-on-read);
    `database` / `name` override the hive_sync keys (Glue's own keys)."""
    database = database or skeys.DATABASE.get(options)
    name = name or skeys.TABLE.get(options) or ctx.config.name
    if not ctx.config.is_merge_on_read:
        return [SyncedTable(database, name, "snapshot")]
    ro_name = name if skeys.SKIP_RO_SUFFIX.get(options) else f"{name}_ro"
    return [
        SyncedTable(database, ro_name, "read_optimized"),
        SyncedTable(database, f"{name}_rt", "snapshot", realtime=True),
    ]


#: The session conf naming the Hive metastore a session uses.
METASTORE_URIS_CONF = "spark.hadoop.hive.metastore.uris"


def check_sync_options(
    ctx: TableContext,
    options: Mapping[str, str],
    session_metastore_uris: str | None,
    *,
    hive: bool = True,
) -> None:
    mode = skeys.MODE.get(options)
    if hive and mode not in (None, "hms"):
        log.warning("%s=%s: pyhudi syncs through the SparkSession's catalog", skeys.MODE.key, mode)
    uris = skeys.METASTORE_URIS.get(options)
    if hive and uris and uris != session_metastore_uris:
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
    if skeys.CREATE_MANAGED_TABLE.get(options):
        raise ConfigError(
            f"{skeys.CREATE_MANAGED_TABLE.key}=true: pyhudi registers Hudi tables as EXTERNAL "
            "tables only (dropping a managed table would delete the Hudi table's files)"
        )
    extractor_class(ctx, options)  # an unknown extractor is an error before anything changes


def sync_to_catalog(spark: SparkSession, path: str, options: Mapping[str, str]) -> list[str]:
    """Register (or bring up to date) the metastore tables of the Hudi table at `path`, in the
    session's catalog (Hive sync) and/or the AWS Glue Data Catalog, as the sync tools say."""
    tools = sync_tools(options)
    if not tools:
        return []
    ctx = TableContext.open(path)
    hive = skeys.HIVE_SYNC_TOOL in tools
    uris = spark.conf.get(METASTORE_URIS_CONF, None) if hive else None
    check_sync_options(ctx, options, uris, hive=hive)
    done = _sync_glue(spark, ctx, options) if tools & skeys.GLUE_SYNC_TOOLS else []
    if hive:
        done += _sync_session_catalog(spark, ctx, options)
    return done


def _sync_glue(spark: SparkSession, ctx: TableContext, options: Mapping[str, str]) -> list[str]:
    """hudi-aws's `AwsGlueCatalogSyncTool`: Hudi's Hive sync tables, in Glue."""
    settings = GlueSettings.from_options(options)
    catalog = GlueCatalog.connect(settings)
    extractor = extractor_class(ctx, options)
    done = []
    for table in synced_tables(ctx, options, database=settings.database, name=settings.table):
        spec = hive_table(ctx, table, _schema(ctx, table), options, spark.version)
        sync_glue_table(catalog, ctx, spec, extractor)
        done.append(f"{table.database}.{table.name}")
    return done


def _sync_session_catalog(
    spark: SparkSession, ctx: TableContext, options: Mapping[str, str]
) -> list[str]:
    metastore, reason = connect(spark)
    if metastore is None and not has_python_data_sources():
        raise UnsupportedOperationError(
            f"catalog sync of {ctx.uri}: {reason}, and registering a Spark-only table USING hudi "
            + needs_pyspark_4("instead")
            + "; the commit stands, the catalog was not changed"
        )
    if metastore is None:
        log.warning(
            "catalog sync of %s: %s; registering Spark data source tables USING hudi, a "
            "Spark-only metastore entry (no Hudi input format or partitions for other engines)",
            ctx.uri,
            reason,
        )
        return [_sync_spark_only(spark, ctx, table) for table in synced_tables(ctx, options)]
    owner = spark.sparkContext.sparkUser()
    done = []
    for table in synced_tables(ctx, options):
        _sync_hive(spark, metastore, ctx, table, options, owner)
        done.append(f"{table.database}.{table.name}")
        spark.catalog.refreshTable(table.qualified)
    return done


def _schema(ctx: TableContext, table: SyncedTable) -> StructType:
    return spark_schema(plan_read(ctx, {rkeys.QUERY_TYPE.key: table.query_type}), output=True)


def _sync_hive(
    spark: SparkSession,
    metastore: HiveMetastore,
    ctx: TableContext,
    table: SyncedTable,
    options: Mapping[str, str],
    owner: str,
) -> None:
    """`HiveSyncTool.syncHoodieTable`: the table, its schema and properties, then its partitions."""
    metastore.ensure_database(table.database)
    spec = hive_table(ctx, table, _schema(ctx, table), options, spark.version)
    existing = metastore.get_table(table.database, table.name)
    if existing is not None and not _same_layout(existing, spec):
        metastore.drop_table(table.database, table.name)  # e.g. a Spark-only entry of before
        existing = None
    last_synced = None
    if existing is None:
        metastore.create_table(spec, owner)
    else:
        last_synced = existing.parameters.get(skeys.LAST_COMMIT_TIME_SYNC)
        if _changed(existing, spec):
            metastore.alter_table(spec, cascade=existing.columns != _columns_of(spec))
    _sync_partitions(metastore, ctx, spec, options, last_synced)
    latest = latest_commit_time(ctx)
    if latest is not None and latest != last_synced:
        stamped = {**spec.parameters, skeys.LAST_COMMIT_TIME_SYNC: latest}
        metastore.alter_table(replace(spec, parameters=stamped))


def _sync_partitions(
    metastore: HiveMetastore,
    ctx: TableContext,
    spec: MetastoreTable,
    options: Mapping[str, str],
    last_synced: str | None,
) -> None:
    if not spec.partition_keys:
        return
    current = metastore.partitions(spec.database, spec.name)
    events = partition_events(ctx, extractor_class(ctx, options), current, last_synced)
    by_kind = {
        kind: [(e.values, e.location) for e in events if e.kind is kind]
        for kind in PartitionEventType
    }
    metastore.add_partitions(spec, by_kind[PartitionEventType.ADD])
    metastore.alter_partitions(spec, by_kind[PartitionEventType.UPDATE])
    for values, _ in by_kind[PartitionEventType.DROP]:
        metastore.drop_partition(spec.database, spec.name, values)


def _same_layout(existing: MetastoreTable, spec: MetastoreTable) -> bool:
    """Partition keys cannot be altered, nor a Spark-only entry turned into Hudi's table."""
    keys = [(n.lower(), t) for n, t in spec.partition_keys]
    return existing.input_format == spec.input_format and list(existing.partition_keys) == keys


def _columns_of(spec: MetastoreTable) -> tuple[tuple[str, str], ...]:
    """The columns as the metastore stores them (names lower-cased)."""
    return tuple((n.lower(), t) for n, t in spec.columns)


def _changed(existing: MetastoreTable, spec: MetastoreTable) -> bool:
    return (
        existing.columns != _columns_of(spec)
        or (existing.output_format, existing.serde) != (spec.output_format, spec.serde)
        or any(existing.serde_properties.get(k) != v for k, v in spec.serde_properties.items())
        or any(existing.parameters.get(k) != v for k, v in spec.parameters.items())
        or _spark_keys(existing.parameters) != _spark_keys(spec.parameters)
    )


def _spark_keys(parameters: Mapping[str, str]) -> set[str]:
    """Spark's data source properties: a schema split into fewer parts leaves none stale."""
    return {k for k in parameters if k.startswith("spark.sql.sources.")}


# ---- Spark-only fallback -------------------------------------------------------------------------
def _sync_spark_only(spark: SparkSession, ctx: TableContext, table: SyncedTable) -> str:
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{table.database}`")
    name = f"{table.database}.{table.name}"
    if spark.catalog.tableExists(name):
        if _columns(spark.table(name).schema) == _columns(_schema(ctx, table)):
            return name
        spark.sql(f"DROP TABLE {table.qualified}")
    spark.sql(
        f"CREATE TABLE {table.qualified} USING hudi LOCATION '{ctx.uri}' "
        f"TBLPROPERTIES ('{rkeys.QUERY_TYPE.key}' = '{table.query_type}')"
    )
    return name


def _columns(schema: StructType) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in schema.fields]
