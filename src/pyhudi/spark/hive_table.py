"""The metastore table Hudi's Hive sync registers for a Hudi table (`HiveSyncTool.syncFirstTime`,
`HMSDDLExecutor.createTable`, `SparkDataSourceTableUtils`):

| part                   | value                                                                 |
|------------------------|-----------------------------------------------------------------------|
| table type             | `EXTERNAL_TABLE`, parameter `EXTERNAL=TRUE`                           |
| columns                | the table schema, meta columns included, minus the partition fields;  |
|                        | Hive types as `HiveSchemaUtil` writes them (timestamps `bigint` unless |
|                        | `support_timestamp`)                                                  |
| partition keys         | the partition fields, typed like their column (`string` if none)      |
| input format           | `HoodieParquetInputFormat`; `_rt`: `HoodieParquetRealtimeInputFormat` |
| output format / serde  | `MapredParquetOutputFormat` / `ParquetHiveSerDe`                      |
| serde properties       | `serialization.format=1`; as data source: `path`, `hoodie.query.as.ro.table` |
| table properties       | `last_commit_time_sync`; as data source: `spark.sql.sources.provider=hudi`, |
|                        | `spark.sql.sources.schema.*` (partition columns last), `spark.sql.create.version` |

The Spark schema carries pyhudi's catalog binding (the table's path and query type) in the
metadata of its first column, as `CREATE TABLE ... USING hudi` tables do (`pyhudi.spark.catalog`),
so `spark.table` reads `_ro` read-optimized and `_rt` / copy-on-write tables as snapshots.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    IntegerType,
    MapType,
    ShortType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from pyhudi.config import read as rkeys
from pyhudi.config import sync as skeys
from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.spark.catalog import CatalogBinding, attach_binding
from pyhudi.spark.hive_metastore import MetastoreTable
from pyhudi.table.context import TableContext

EXTERNAL_TABLE = "EXTERNAL_TABLE"
SPARK_PROVIDER = "spark.sql.sources.provider"
SPARK_SCHEMA_PREFIX = "spark.sql.sources.schema."
SPARK_CREATE_VERSION = "spark.sql.create.version"


@dataclass(frozen=True)
class SyncedTable:
    """One metastore table of a Hudi table: its name and how it reads the Hudi table."""

    database: str
    name: str
    query_type: str
    realtime: bool = False

    @property
    def qualified(self) -> str:
        return f"{sql_identifier(self.database)}.{sql_identifier(self.name)}"

    @property
    def read_optimized(self) -> bool:
        return self.query_type == "read_optimized"


def hive_type(data_type: DataType, support_timestamp: bool) -> str:
    """A Spark type as Hudi's `HiveSchemaUtil` names the Parquet type it is stored as."""
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        return "timestamp" if support_timestamp else "bigint"
    if isinstance(data_type, (ByteType, ShortType, IntegerType)):
        return "int"  # INT32 in Parquet, whatever its annotation
    if isinstance(data_type, (BooleanType, DateType, DecimalType)):
        return data_type.simpleString()
    if isinstance(data_type, ArrayType):
        return f"array<{hive_type(data_type.elementType, support_timestamp)}>"
    if isinstance(data_type, MapType):
        key = hive_type(data_type.keyType, support_timestamp)
        return f"map<{key},{hive_type(data_type.valueType, support_timestamp)}>"
    if isinstance(data_type, StructType):
        fields = [
            f"{f.name.replace('-', '_')}:{hive_type(f.dataType, support_timestamp)}"
            for f in data_type.fields
        ]
        return "struct<" + ",".join(fields) + ">"
    return data_type.simpleString()  # string, binary, bigint, float, double


def spark_table_properties(
    schema: StructType, partition_columns: list[str], spark_version: str, threshold: int
) -> dict[str, str]:
    """`SparkDataSourceTableUtils.getSparkTableProperties`: what makes Spark read a `hudi` table."""
    text = schema.json()
    parts = [text[i : i + threshold] for i in range(0, len(text), threshold)]
    props = {SPARK_PROVIDER: "hudi", SPARK_CREATE_VERSION: spark_version}
    props[SPARK_SCHEMA_PREFIX + "numParts"] = str(len(parts))
    props.update({f"{SPARK_SCHEMA_PREFIX}part.{i}": part for i, part in enumerate(parts)})
    if partition_columns:
        props[SPARK_SCHEMA_PREFIX + "numPartCols"] = str(len(partition_columns))
        for i, name in enumerate(partition_columns):
            props[f"{SPARK_SCHEMA_PREFIX}partCol.{i}"] = name
    return props


def hive_table(
    ctx: TableContext,
    table: SyncedTable,
    schema: StructType,
    options: Mapping[str, str],
    spark_version: str,
) -> MetastoreTable:
    """The table Hudi's Hive sync registers (without `last_commit_time_sync`, set after)."""
    support_timestamp = bool(skeys.SUPPORT_TIMESTAMP.get(options))
    partition_fields = list(ctx.config.partition_fields)
    by_name = {f.name: f for f in schema.fields}
    data = [f for f in schema.fields if f.name not in partition_fields]
    partitions = [by_name[name] for name in partition_fields if name in by_name]
    keys = tuple(
        (
            name,
            hive_type(by_name[name].dataType, support_timestamp) if name in by_name else "string",
        )
        for name in partition_fields
    )
    serde_properties = {"serialization.format": "1"}
    parameters = {"EXTERNAL": "TRUE"}
    if skeys.SYNC_AS_DATASOURCE.get(options):
        binding = CatalogBinding(ctx.uri, {rkeys.QUERY_TYPE.key: table.query_type})
        ordered = attach_binding(StructType([*data, *partitions]), binding)
        threshold = int(skeys.SCHEMA_STRING_LENGTH_THRESHOLD.get(options) or 4000)
        parameters.update(
            spark_table_properties(ordered, [f.name for f in partitions], spark_version, threshold)
        )
        serde_properties["path"] = ctx.uri
        serde_properties[skeys.QUERY_AS_RO_TABLE] = str(table.read_optimized).lower()
    return MetastoreTable(
        database=table.database,
        name=table.name,
        table_type=EXTERNAL_TABLE,
        columns=tuple((f.name, hive_type(f.dataType, support_timestamp)) for f in data),
        partition_keys=keys,
        location=ctx.uri,
        input_format=skeys.REALTIME_INPUT_FORMAT if table.realtime else skeys.INPUT_FORMAT,
        output_format=skeys.OUTPUT_FORMAT,
        serde=skeys.SERDE,
        serde_properties=serde_properties,
        parameters=parameters,
    )
