"""Catalog (meta) sync options: Hudi's `hoodie.datasource.meta.sync.*` / `hive_sync.*` keys, the
sync tool classes, and hudi-aws's Glue keys (`hoodie.datasource.meta.sync.glue.*`,
`hoodie.aws.glue.*`)."""

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

# ---- which sync tools run (`HoodieSparkSqlWriter.metaSync`) --------------------------------------
#: Hudi's Hive sync (`hoodie.datasource.hive_sync.enable` always runs it).
HIVE_SYNC_TOOL = "org.apache.hudi.hive.HiveSyncTool"
#: hudi-aws's Glue Data Catalog sync (the second spelling is Hudi 1.1's name of the same tool).
GLUE_SYNC_TOOL = "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"
GLUE_SYNC_TOOLS = frozenset({GLUE_SYNC_TOOL, "org.apache.hudi.aws.sync.AWSGlueCatalogSyncTool"})
SYNC_TOOLS = frozenset({HIVE_SYNC_TOOL, *GLUE_SYNC_TOOLS})
CLIENT_TOOL_CLASS = string_list(
    "hoodie.meta.sync.client.tool.class",
    (HIVE_SYNC_TOOL,),
    f"The sync tools `hoodie.datasource.meta.sync.enable` runs, comma-separated: {HIVE_SYNC_TOOL} "
    f"(the session's metastore) and {GLUE_SYNC_TOOL} (the AWS Glue Data Catalog, through boto3: "
    "the `glue` extra); other tools are an error.",
)

# ---- AWS Glue Data Catalog (hudi-aws `GlueCatalogSyncClientConfig`, `HoodieAWSConfig`) ----------
GLUE_SKIP_TABLE_ARCHIVE = boolean(
    "hoodie.datasource.meta.sync.glue.skip_table_archive",
    True,
    "Glue sync: ask Glue not to keep the previous version of the table on each update "
    "(UpdateTable's SkipArchive).",
)
GLUE_METADATA_FILE_LISTING = boolean(
    "hoodie.datasource.meta.sync.glue.metadata_file_listing",
    False,
    "Glue sync: the table parameter `hudi.metadata-listing-enabled` telling Athena to list files "
    "through the metadata table.",
)
GLUE_RECREATE_TABLE_ON_ERROR = boolean(
    "hoodie.datasource.meta.sync.glue.recreate_table_on_error",
    False,
    "Glue sync: drop and create the Glue table again (then add every partition) when its partition "
    "keys differ from the Hudi table's; without it that is an error.",
)
GLUE_DATABASE_NAME = string(
    "hoodie.datasource.meta.sync.glue.database_name",
    None,
    "Glue sync: the Glue database (default: hoodie.datasource.hive_sync.database).",
)
GLUE_TABLE_NAME = string(
    "hoodie.datasource.meta.sync.glue.table_name",
    None,
    "Glue sync: the Glue table (default: hoodie.datasource.hive_sync.table).",
)
AWS_GLUE_REGION = string(
    "hoodie.aws.glue.region",
    None,
    "Glue sync: the AWS region of the Data Catalog (default: boto3's, e.g. AWS_REGION).",
)
AWS_GLUE_ENDPOINT = string(
    "hoodie.aws.glue.endpoint",
    None,
    "Glue sync: the Glue endpoint URL (default: boto3's, e.g. AWS_ENDPOINT_URL_GLUE).",
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
