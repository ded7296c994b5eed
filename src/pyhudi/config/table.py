"""Keys of `.hoodie/hoodie.properties` (Hudi's `HoodieTableConfig`, reference §1.2)."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, integer, string

NAME = string(
    "hoodie.table.name",
    None,
    "Table name; with the database name it forms the checksum.",
    "hoodie.datasource.write.table.name",
)
DATABASE = string("hoodie.database.name", None, "Database name (checksum input).")
TYPE = choice(
    "hoodie.table.type", "COPY_ON_WRITE", ("COPY_ON_WRITE", "MERGE_ON_READ"), "Table type."
)
VERSION = integer("hoodie.table.version", 0, "Table version: pyhudi writes and reads 6, 8 and 9.")
INITIAL_VERSION = integer(
    "hoodie.table.initial.version", 0, "The version the table was created at (v8+)."
)
MULTIPLE_BASE_FILE_FORMATS = boolean(
    "hoodie.table.multiple.base.file.formats.enable",
    False,
    "Base files of several formats in one table (v8+); pyhudi writes parquet only.",
)
TIMELINE_LAYOUT_VERSION = integer(
    "hoodie.timeline.layout.version", 1, "Timeline layout: 1 for v6, 2 for v8 and v9."
)
BASE_FILE_FORMAT = choice(
    "hoodie.table.base.file.format",
    "PARQUET",
    ("PARQUET", "ORC", "HFILE", "LANCE"),
    "Base file format (LANCE: Hudi 1.1, read-only in pyhudi, needs `pyhudi[lance]`).",
    "hoodie.table.ro.file.format",
)
TABLE_FORMAT = string(
    "hoodie.table.format",
    "native",
    "Table format plugin (v9, Hudi 1.1); pyhudi reads `native` only.",
)
LOG_FILE_FORMAT = string(
    "hoodie.table.log.file.format", "HOODIE_LOG", "Log file format.", "hoodie.table.rt.file.format"
)
RECORD_KEY_FIELDS = string(
    "hoodie.table.recordkey.fields", None, "Comma-separated record key fields."
)
PRECOMBINE_FIELD = string("hoodie.table.precombine.field", None, "Ordering (precombine) field.")
PARTITION_FIELDS = string(
    "hoodie.table.partition.fields", None, "Comma-separated partition fields."
)
KEY_GENERATOR_CLASS = string("hoodie.table.keygenerator.class", None, "Key generator class name.")
HIVE_STYLE_PARTITIONING = boolean(
    "hoodie.datasource.write.hive_style_partitioning", False, "Partition folders as `field=value`."
)
URL_ENCODE_PARTITIONING = boolean(
    "hoodie.datasource.write.partitionpath.urlencode",
    False,
    "Escape special characters in partition paths.",
)
DROP_PARTITION_COLUMNS = boolean(
    "hoodie.datasource.write.drop.partition.columns",
    False,
    "Drop partition columns from data files.",
)
POPULATE_META_FIELDS = boolean(
    "hoodie.populate.meta.fields", True, "Write the five `_hoodie_*` meta columns."
)
ARCHIVELOG_FOLDER = string(
    "hoodie.archivelog.folder", "archived", "Sub-folder of `.hoodie` for the archived timeline."
)
TIMELINE_TIMEZONE = choice(
    "hoodie.table.timeline.timezone",
    "LOCAL",
    ("LOCAL", "UTC"),
    "Time zone of instant times: LOCAL when absent (Hudi's default); tables pyhudi creates get UTC "
    "unless the option says otherwise.",
)
PARTITION_METAFILE_USE_BASE_FORMAT = boolean(
    "hoodie.partition.metafile.use.base.format", False, "Partition marker files in the base format."
)
CREATE_SCHEMA = string(
    "hoodie.table.create.schema", None, "Avro schema at creation (no meta fields)."
)
CDC_ENABLED = boolean(
    "hoodie.table.cdc.enabled",
    False,
    "Change data capture: merges of existing base files also write `.cdc` change logs (set when "
    "the table is created; a write cannot change it).",
)
CDC_SUPPLEMENTAL_LOGGING_MODE = choice(
    "hoodie.table.cdc.supplemental.logging.mode",
    "DATA_BEFORE_AFTER",
    ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"),
    "What a CDC log record holds: the operation and record key (OP_KEY_ONLY), also the record "
    "before the change (DATA_BEFORE), or the records before and after it (DATA_BEFORE_AFTER). "
    "Recorded in hoodie.properties only when CDC is on.",
)
PAYLOAD_CLASS = string(
    "hoodie.compaction.payload.class",
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "Payload class that merges records (table property).",
)
RECORD_MERGER_STRATEGY = string(
    "hoodie.compaction.record.merger.strategy",
    "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
    "Record merger strategy id (table property).",
)
METADATA_PARTITIONS = string(
    "hoodie.table.metadata.partitions", "", "Built metadata-table partitions."
)
METADATA_PARTITIONS_INFLIGHT = string(
    "hoodie.table.metadata.partitions.inflight", "", "Metadata-table partitions being built."
)
BOOTSTRAP_BASE_PATH = string(
    "hoodie.bootstrap.base.path", None, "Source path of a bootstrapped table."
)
BOOTSTRAP_INDEX_CLASS = string("hoodie.bootstrap.index.class", None, "Bootstrap index class.")
BOOTSTRAP_INDEX_ENABLE = boolean("hoodie.bootstrap.index.enable", True, "Use a bootstrap index.")
CHECKSUM = string("hoodie.table.checksum", None, "CRC32 of `<database>.<table name>`.")
