"""The Hive metastore under a classic SparkSession, reached the way Hudi's `HMSDDLExecutor` reaches
it: the metastore client (`IMetaStoreClient`) and its Thrift objects (`Table`, `StorageDescriptor`,
`SerDeInfo`, `Partition`), through py4j.

Spark's own DDL cannot register Hudi's tables: Spark SQL refuses `spark.sql.*` table properties,
and `HiveExternalCatalog.createTable` replaces the storage descriptor of a non-Hive provider with
its own. The metastore client stores tables and partitions exactly as given. It is there only in
a classic session with Hive support (`enableHiveSupport()`) whose Hive classes are Spark's
built-in ones (`spark.sql.hive.metastore.jars=builtin`, the default); Spark Connect clients have
no py4j: `connect` returns None and says why.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pyspark.sql import SparkSession

from pyhudi.spark_env import is_connect
from pyhudi.table.meta_sync import MetastoreTable

#: Hive's `StatsSetupConst.CASCADE`: a column change is applied to every partition too.
_CASCADE = "CASCADE"
#: Spark's data source table properties (provider, schema parts, partition columns).
_SPARK_SOURCE_PREFIX = "spark.sql.sources."


def connect(spark: SparkSession) -> tuple[HiveMetastore | None, str]:
    """The metastore client of `spark`, or None and the reason there is none."""
    if is_connect(spark):
        return None, "a Spark Connect session has no access to the server's metastore client"
    if spark.conf.get("spark.sql.catalogImplementation", "in-memory") != "hive":
        return None, "the session has no Hive support (build it with enableHiveSupport())"
    jars = spark.conf.get("spark.sql.hive.metastore.jars", "builtin")
    if jars != "builtin":
        return None, f"spark.sql.hive.metastore.jars={jars}: only Spark's built-in Hive client"
    jvm: Any = spark._jvm  # type: ignore[attr-defined]
    catalog = spark._jsparkSession.sharedState().externalCatalog().unwrapped()  # type: ignore[attr-defined]
    hive_conf = catalog.client().conf()
    client = jvm.org.apache.hadoop.hive.ql.metadata.Hive.get(hive_conf).getMSC()
    return HiveMetastore(jvm, client), ""


class HiveMetastore:
    """Databases, tables and partitions of one metastore, as Hudi's HMS sync changes them."""

    def __init__(self, jvm: Any, client: Any) -> None:
        self._jvm, self._client = jvm, client
        self._api = jvm.org.apache.hadoop.hive.metastore.api

    # ---- databases and tables ----------------------------------------------------------------
    def ensure_database(self, database: str) -> None:
        if database.lower() not in {d.lower() for d in self._client.getAllDatabases()}:
            db = self._api.Database(database, "automatically created by hoodie", None, None)
            self._client.createDatabase(db)

    def get_table(self, database: str, name: str) -> MetastoreTable | None:
        if not self._client.tableExists(database, name):
            return None
        table = self._client.getTable(database, name)
        sd = table.getSd()
        serde = sd.getSerdeInfo()
        return MetastoreTable(
            database=str(table.getDbName()),
            name=str(table.getTableName()),
            table_type=str(table.getTableType()),
            columns=_columns(sd.getCols()),
            partition_keys=_columns(table.getPartitionKeys()),
            location=str(sd.getLocation()),
            input_format=str(sd.getInputFormat()),
            output_format=str(sd.getOutputFormat()),
            serde=str(serde.getSerializationLib()),
            serde_properties=dict(serde.getParameters() or {}),
            parameters=dict(table.getParameters() or {}),
        )

    def create_table(self, spec: MetastoreTable, owner: str) -> None:
        table = self._api.Table()
        table.setDbName(spec.database)
        table.setTableName(spec.name)
        table.setOwner(owner)
        table.setCreateTime(int(time.time()))
        table.setSd(self._storage(spec, spec.location))
        table.setPartitionKeys(self._fields(spec.partition_keys))
        for key, value in spec.parameters.items():
            table.putToParameters(key, value)
        table.setTableType(spec.table_type)
        self._client.createTable(table)

    def alter_table(self, spec: MetastoreTable, *, cascade: bool = False) -> None:
        """Columns, formats, serde and table properties as in `spec`; other properties are kept,
        except Spark's data source properties (`spark.sql.sources.*`), which `spec` replaces."""
        table = self._client.getTable(spec.database, spec.name)
        table.setSd(self._storage(spec, spec.location))
        parameters = table.getParameters()
        for key in [str(k) for k in parameters.keySet()]:
            if key.startswith(_SPARK_SOURCE_PREFIX) and key not in spec.parameters:
                parameters.remove(key)
        for key, value in spec.parameters.items():
            table.putToParameters(key, value)
        context = self._api.EnvironmentContext()
        if cascade and spec.partition_keys:  # new columns reach every partition too
            context.putToProperties(_CASCADE, "true")
        self._client.alter_table_with_environmentContext(spec.database, spec.name, table, context)

    def drop_table(self, database: str, name: str) -> None:
        """Drop the metastore entry only (never the table's files)."""
        self._client.dropTable(database, name, False, True)

    # ---- partitions --------------------------------------------------------------------------
    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        """Partition values -> location."""
        found = self._client.listPartitions(database, name, -1)
        return {tuple(str(v) for v in p.getValues()): str(p.getSd().getLocation()) for p in found}

    def add_partitions(self, spec: MetastoreTable, entries: Iterable[tuple[Any, str]]) -> None:
        partitions = self._partitions(spec, entries)
        if partitions.size():
            self._client.add_partitions(partitions, True, False)

    def alter_partitions(self, spec: MetastoreTable, entries: Iterable[tuple[Any, str]]) -> None:
        partitions = self._partitions(spec, entries)
        if partitions.size():
            self._client.alter_partitions(spec.database, spec.name, partitions, None)

    def drop_partition(self, database: str, name: str, values: Iterable[str]) -> None:
        self._client.dropPartition(database, name, self._list(values), False)

    # ---- Thrift objects ----------------------------------------------------------------------
    def _partitions(self, spec: MetastoreTable, entries: Iterable[tuple[Any, str]]) -> Any:
        out = self._jvm.java.util.ArrayList()
        for values, location in entries:
            sd = self._storage(spec, location)
            out.add(
                self._api.Partition(self._list(values), spec.database, spec.name, 0, 0, sd, None)
            )
        return out

    def _storage(self, spec: MetastoreTable, location: str) -> Any:
        sd = self._api.StorageDescriptor()
        sd.setCols(self._fields(spec.columns))
        sd.setInputFormat(spec.input_format)
        sd.setOutputFormat(spec.output_format)
        sd.setLocation(location)
        serde_properties = self._jvm.java.util.HashMap()
        for key, value in spec.serde_properties.items():
            serde_properties.put(key, value)
        sd.setSerdeInfo(self._api.SerDeInfo(None, spec.serde, serde_properties))
        return sd

    def _fields(self, columns: Iterable[tuple[str, str]]) -> Any:
        out = self._jvm.java.util.ArrayList()
        for name, type_name in columns:
            out.add(self._api.FieldSchema(name, type_name, ""))
        return out

    def _list(self, values: Iterable[str]) -> Any:
        out = self._jvm.java.util.ArrayList()
        for value in values:
            out.add(value)
        return out


def _columns(fields: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(f.getName()), str(f.getType())) for f in fields or [])
