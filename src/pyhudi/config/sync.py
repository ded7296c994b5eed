"""Catalog (meta) sync options: Hudi's `hoodie.datasource.meta.sync.*` / `hive_sync.*` keys."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, integer, string, string_list

META_SYNC_ENABLED = boolean(
    "hoodie.datasource.meta.sync.enable", False, "Sync the table to the catalog after each commit."
)
HIVE_SYNC_ENABLED = boolean(
    "hoodie.datasource.hive_sync.enable", False, "Sync the table to the Hive metastore (catalog)."
)
DATABASE = string(
    "hoodie.datasource.hive_sync.database", "default", "Catalog database of the synced table."
)
TABLE = string(
    "hoodie.datasource.hive_sync.table", None, "Catalog table name (default: hoodie.table.name)."
)
PARTITION_FIELDS = string_list(
    "hoodie.datasource.hive_sync.partition_fields",
    None,
    "Partition columns of the synced table (default: the table's partition fields).",
)
MODE = choice(
    "hoodie.datasource.hive_sync.mode",
    None,
    ("hms", "jdbc", "hiveql"),
    "How to reach the metastore; pyhudi syncs through the SparkSession's catalog (hms).",
    upper=False,
)
SKIP_RO_SUFFIX = boolean(
    "hoodie.datasource.hive_sync.skip_ro_suffix",
    False,
    "Name the read-optimized table of a merge-on-read table without the `_ro` suffix.",
)
METASTORE_URIS = string(
    "hoodie.datasource.hive_sync.metastore.uris",
    None,
    "Thrift URI of the metastore (must be the SparkSession's `hive.metastore.uris`).",
)
SUPPORT_TIMESTAMP = boolean(
    "hoodie.datasource.hive_sync.support_timestamp",
    False,
    "Timestamp columns as Hive `timestamp` (default: `bigint`, as Hudi's Hive sync does).",
)
SYNC_AS_DATASOURCE = boolean(
    "hoodie.datasource.hive_sync.sync_as_datasource",
    True,
    "Add the `spark.sql.sources.*` table properties so Spark reads the table as a `hudi` source.",
)
CREATE_MANAGED_TABLE = boolean(
    "hoodie.datasource.hive_sync.create_managed_table",
    False,
    "Register a managed table (not supported: Hudi tables are registered as EXTERNAL).",
)
SCHEMA_STRING_LENGTH_THRESHOLD = integer(
    "hoodie.datasource.hive_sync.schema_string_length_thresh",
    4000,
    "Split the Spark schema table property into parts of at most this many characters.",
)
PARTITION_EXTRACTOR_CLASS = string(
    "hoodie.datasource.hive_sync.partition_extractor_class",
    None,
    "Hudi's PartitionValueExtractor turning a partition path into the metastore partition values "
    "(default: NonPartitionedExtractor without partition fields, HiveStylePartitionValueExtractor "
    "for one hive-style field, MultiPartKeysValueExtractor otherwise).",
)

# ---- what Hudi's Hive sync (HiveSyncTool / HMSDDLExecutor) writes into the metastore -------------
#: Table property holding the latest commit the metastore entry reflects.
LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
#: Serde property telling Hudi's Spark source to read the table read-optimized.
QUERY_AS_RO_TABLE = "hoodie.query.as.ro.table"
#: Hudi's input formats (`HoodieInputFormatUtils`) for parquet base files.
INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
#: Hudi's standard partition value extractors (package `org.apache.hudi.hive`).
EXTRACTOR_PACKAGE = "org.apache.hudi.hive."
MULTI_PART_KEYS_EXTRACTOR = EXTRACTOR_PACKAGE + "MultiPartKeysValueExtractor"
HIVE_STYLE_EXTRACTOR = EXTRACTOR_PACKAGE + "HiveStylePartitionValueExtractor"
NON_PARTITIONED_EXTRACTOR = EXTRACTOR_PACKAGE + "NonPartitionedExtractor"
SINGLE_PART_EXTRACTOR = EXTRACTOR_PACKAGE + "SinglePartPartitionValueExtractor"
SLASH_DAY_EXTRACTOR = EXTRACTOR_PACKAGE + "SlashEncodedDayPartitionValueExtractor"
SLASH_HOUR_EXTRACTOR = EXTRACTOR_PACKAGE + "SlashEncodedHourPartitionValueExtractor"
