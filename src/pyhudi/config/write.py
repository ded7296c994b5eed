"""Write options: Apache Hudi's Spark datasource keys (`hoodie.datasource.write.*` and friends)."""

from __future__ import annotations

from pyhudi.config import metadata as _metadata
from pyhudi.config import table as _table
from pyhudi.config.options import boolean, choice, integer, number, string, string_list

# Keys shared with hoodie.properties are declared once, in pyhudi.config.table.
TABLE_NAME = _table.NAME
DATABASE_NAME = _table.DATABASE
HIVE_STYLE_PARTITIONING = _table.HIVE_STYLE_PARTITIONING
URL_ENCODE_PARTITIONING = _table.URL_ENCODE_PARTITIONING
POPULATE_META_FIELDS = _table.POPULATE_META_FIELDS
DROP_PARTITION_COLUMNS = _table.DROP_PARTITION_COLUMNS
TIMELINE_TIMEZONE = _table.TIMELINE_TIMEZONE
METADATA_ENABLE = _metadata.METADATA_ENABLE
#: Time zone of the instants of tables pyhudi creates, unless the option is given (Hudi: LOCAL).
NEW_TABLE_TIMEZONE = "UTC"

#: The version of the tables pyhudi creates unless told otherwise (Hudi 0.14/0.15: every Hudi
#: reader reads it); 8 and 9 are Hudi 1.0's and 1.1's.
WRITTEN_TABLE_VERSION = 6
WRITABLE_TABLE_VERSIONS = (6, 8, 9)
WRITE_TABLE_VERSION = integer(
    "hoodie.write.table.version",
    WRITTEN_TABLE_VERSION,
    "Table version of a new table: 6 (Hudi 0.14/0.15, the default), 8 (Hudi 1.0) or 9 "
    "(Hudi 1.1+). Set on a write into an existing table of a lower version, the table is "
    "upgraded first (see hoodie.write.auto.upgrade); unset, it is written at its own version.",
)
AUTO_UPGRADE = boolean(
    "hoodie.write.auto.upgrade",
    True,
    "A write whose hoodie.write.table.version is above the table's upgrades the table first "
    "(as Hudi 1.2); false: the table keeps its version and the write is written at it.",
)

OPERATIONS = (
    "upsert",
    "insert",
    "bulk_insert",
    "delete",
    "insert_overwrite",
    "insert_overwrite_table",
    "delete_partition",
    "bootstrap",
    "compact",
    "log_compact",
)
OPERATION = choice(
    "hoodie.datasource.write.operation", "upsert", OPERATIONS, "The write operation.", upper=False
)
TABLE_TYPE = choice(
    "hoodie.datasource.write.table.type",
    "COPY_ON_WRITE",
    ("COPY_ON_WRITE", "MERGE_ON_READ"),
    "Table type when the table is created.",
    "hoodie.table.type",
)
RECORD_KEY_FIELD = string(
    "hoodie.datasource.write.recordkey.field",
    "uuid",
    "Record key field(s), comma-separated. Unset, Hudi 0.14+ generates keys (a keyless table), "
    "which pyhudi does not write: set it.",
)
PARTITION_PATH_FIELD = string(
    "hoodie.datasource.write.partitionpath.field",
    None,
    "Partition field(s), comma-separated; Custom key generator: `field:SIMPLE|TIMESTAMP`.",
)
PRECOMBINE_FIELD = string(
    "hoodie.datasource.write.precombine.field",
    "ts",
    "Field deciding which of two records with one key wins.",
    "hoodie.table.precombine.field",
)
KEY_GENERATOR_CLASS = string(
    "hoodie.datasource.write.keygenerator.class",
    None,
    "Key generator class (inferred when unset).",
    "hoodie.table.keygenerator.class",
)
KEY_GENERATOR_TYPE = choice(
    "hoodie.datasource.write.keygenerator.type",
    None,
    ("SIMPLE", "COMPLEX", "TIMESTAMP", "CUSTOM", "NON_PARTITION", "GLOBAL_DELETE"),
    "Key generator type (alternative to the class).",
)
PAYLOAD_CLASS = string(
    "hoodie.datasource.write.payload.class",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "How an incoming record merges with the stored one.",
    "hoodie.compaction.payload.class",
)
RECORD_MERGE_MODE = choice(
    "hoodie.write.record.merge.mode",
    None,
    ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING", "CUSTOM"),
    "Merge mode of a new table of version 8 or 9 (recorded as hoodie.record.merge.mode): "
    "COMMIT_TIME_ORDERING (the later write wins) or EVENT_TIME_ORDERING (the greater ordering "
    "value wins); unset: event time with an ordering field, else commit time. CUSTOM is refused. "
    "On an existing table it must be the table's mode; on version 6 the payload class's.",
)
PAYLOAD_ORDERING_FIELD = string(
    "hoodie.payload.ordering.field",
    None,
    "Ordering field of DefaultHoodieRecordPayload (defaults to precombine).",
)
INSERT_DROP_DUPLICATES = boolean(
    "hoodie.datasource.write.insert.drop.duplicates",
    False,
    "Drop inserts whose key already exists.",
)
COMBINE_BEFORE_INSERT = boolean(
    "hoodie.combine.before.insert", False, "De-duplicate a batch before insert."
)
COMBINE_BEFORE_UPSERT = boolean(
    "hoodie.combine.before.upsert", True, "De-duplicate a batch before upsert."
)
COMBINE_BEFORE_DELETE = boolean(
    "hoodie.combine.before.delete", True, "De-duplicate a batch before delete."
)
PARTITIONS_TO_DELETE = string_list(
    "hoodie.datasource.write.partitions.to.delete", None, "Partition paths for delete_partition."
)
BULK_INSERT_SORT_MODE = choice(
    "hoodie.bulkinsert.sort.mode",
    "NONE",
    ("NONE", "GLOBAL_SORT", "PARTITION_SORT"),
    "Sort records before a bulk_insert.",
)
BULK_INSERT_PARALLELISM = integer(
    "hoodie.bulkinsert.shuffle.parallelism",
    0,
    "Tasks of a bulk_insert shuffle (0: input partitioning).",
)
UPSERT_PARALLELISM = integer(
    "hoodie.upsert.shuffle.parallelism", 0, "Tasks of the write shuffle (0: Spark's)."
)
INSERT_PARALLELISM = integer(
    "hoodie.insert.shuffle.parallelism", 0, "Tasks of the insert shuffle (0: Spark's)."
)
DELETE_PARALLELISM = integer(
    "hoodie.delete.shuffle.parallelism", 0, "Tasks of the delete shuffle (0: Spark's)."
)
ROLLBACK_USING_MARKERS = boolean(
    "hoodie.rollback.using.markers", True, "Roll back failed writes from markers."
)
MARKERS_TYPE = choice(
    "hoodie.write.markers.type",
    "DIRECT",
    ("DIRECT", "TIMELINE_SERVER_BASED"),
    "Marker type; pyhudi always writes DIRECT markers.",
)
FAILED_WRITES_CLEANER_POLICY = choice(
    "hoodie.cleaner.policy.failed.writes",
    "EAGER",
    ("EAGER", "LAZY", "NEVER"),
    "When failed writes are rolled back: EAGER = before the next write.",
)
RECONCILE_SCHEMA = boolean(
    "hoodie.datasource.write.reconcile.schema",
    False,
    "Fill fields missing from a batch with nulls.",
)
COMMIT_METADATA_KEYPREFIX = string(
    "hoodie.datasource.write.commitmeta.key.prefix",
    "_",
    "Options with this prefix go into extraMetadata.",
)
STREAMING_BATCH_ID_KEY = string(
    "hoodie.datasource.write.streaming.batch.id.key",
    "pyhudi.streaming.batch.id",
    "extraMetadata key of the micro-batch id recorded by streaming writes.",
)

#: Internal key set by streaming writes on each micro-batch's options: "true" executes scheduled
#: services in the background, "false" (a bounded stream) only schedules them. Batch writes leave it
#: unset; not a user option.
SERVICES_ASYNC_CONTEXT = "pyhudi.services.async"

# ---- file sizing (HoodieStorageConfig / HoodieCompactionConfig) ----
PARQUET_MAX_FILE_SIZE = integer(
    "hoodie.parquet.max.file.size", 120 * 1024 * 1024, "Target base file size."
)
PARQUET_SMALL_FILE_LIMIT = integer(
    "hoodie.parquet.small.file.limit", 100 * 1024 * 1024, "Files below this size take new inserts."
)
SMALL_FILE_GROUP_CANDIDATES_LIMIT = integer(
    "hoodie.merge.small.file.group.candidates.limit",
    1,
    "Merge-on-read: how many small file groups (the smallest base files without log files) of a "
    "partition may take inserts.",
)
INSERT_SPLIT_SIZE = integer(
    "hoodie.copyonwrite.insert.split.size",
    500_000,
    "Inserts per new file group (when not auto-split).",
)
ROW_WRITER = boolean(
    "hoodie.datasource.write.row.writer.enable",
    True,
    "bulk_insert through Hudi's row writer; at table versions 8 and 9 the bulk_insert that starts "
    "a merge-on-read table then commits as a `commit` (false: a `deltacommit`).",
)
INSERT_AUTO_SPLIT = boolean(
    "hoodie.copyonwrite.insert.auto.split",
    True,
    "Size new file groups from the record size estimate.",
)
RECORD_SIZE_ESTIMATE = integer(
    "hoodie.copyonwrite.record.size.estimate", 1024, "Record size estimate with no earlier commits."
)
PARQUET_COMPRESSION_CODEC = choice(
    "hoodie.parquet.compression.codec",
    "snappy",
    ("snappy", "gzip", "zstd", "lz4", "brotli", "uncompressed", "none"),
    "Parquet compression (Hudi 0.15+ default snappy; 0.14 used gzip).",
    upper=False,
)
PARQUET_BLOCK_SIZE = integer(
    "hoodie.parquet.block.size", 120 * 1024 * 1024, "Parquet row group size in bytes."
)
PARQUET_PAGE_SIZE = integer("hoodie.parquet.page.size", 1024 * 1024, "Parquet page size in bytes.")
PARQUET_COMPRESSION_RATIO = number(
    "hoodie.parquet.compression.ratio", 0.1, "Expected parquet compression (file sizing)."
)
PARQUET_DICTIONARY_ENABLED = boolean(
    "hoodie.parquet.dictionary.enabled", True, "Dictionary encoding."
)

# ---- merge-on-read logs (HoodieStorageConfig) ----
LOG_DATA_BLOCK_FORMAT = choice(
    "hoodie.logfile.data.block.format",
    "avro",
    ("avro", "parquet"),
    "Format of data blocks in log files (Hudi's default for parquet base files: avro).",
    upper=False,
)
WRITE_RECORD_POSITIONS = boolean(
    "hoodie.write.record.positions",
    True,
    "Put the RECORD_POSITIONS header (row positions in the slice's base file) on log blocks whose "
    "records all update or delete rows of that base file; snapshot reads then need no key lookup.",
)
LOG_FILE_MAX_SIZE = integer(
    "hoodie.logfile.max.size",
    1024 * 1024 * 1024,
    "Log file size before rollover; pyhudi writes a new log version per write anyway.",
)
