"""Metadata-table options (Hudi's `HoodieMetadataConfig`) and the metadata table's own properties."""

from __future__ import annotations

from pyhudi.config.options import boolean, integer, string_list

METADATA_ENABLE = boolean(
    "hoodie.metadata.enable",
    True,
    "Maintain the metadata table (its `files` partition, and the index partitions enabled or "
    "already built) inside every write, creating it when the table has none; reads list files "
    "through it. False (writes) deletes the metadata table with a warning; false (reads) lists "
    "storage instead.",
)

#: `hoodie.properties` of a metadata table (Hudi 0.14 `HoodieBackedTableMetadataWriter
#: .initializeMetaClient`, table version 6): everything but the table name and the checksum.
METADATA_TABLE_NAME_SUFFIX = "_metadata"
METADATA_PAYLOAD_CLASS = "org.apache.hudi.metadata.HoodieMetadataPayload"
METADATA_KEY_GENERATOR_CLASS = "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator"
METADATA_RECORD_KEY_FIELD = "key"

RECORD_INDEX_ENABLE = boolean(
    "hoodie.metadata.record.index.enable",
    False,
    "Build and maintain the metadata table's `record_index` partition (record key -> partition "
    "and file group) inside every write; needs `hoodie.metadata.enable`. Unset keeps and maintains "
    "a record index the table has; false drops it (with a warning).",
)
RECORD_INDEX_MIN_FILE_GROUP_COUNT = integer(
    "hoodie.metadata.record.index.min.filegroup.count",
    10,
    "Fewest `record_index` file groups created when the record index is initialised.",
)
RECORD_INDEX_MAX_FILE_GROUP_COUNT = integer(
    "hoodie.metadata.record.index.max.filegroup.count",
    10000,
    "Most `record_index` file groups created when the record index is initialised.",
)
COLUMN_STATS_ENABLE = boolean(
    "hoodie.metadata.index.column.stats.enable",
    False,
    "Build and maintain the metadata table's `column_stats` partition (per base file and column: "
    "min, max, null and value counts, sizes) inside every write; needs `hoodie.metadata.enable`. "
    "Unset keeps and maintains one the table has (table versions 8 and 9: unset is true, as "
    "Hudi 1.2's default); false drops it (with a warning).",
)
COLUMN_STATS_MAX_COLUMNS = integer(
    "hoodie.metadata.index.column.stats.max.columns.to.index",
    32,
    "Table versions 8 and 9 without a column list: how many top-level columns (after the meta "
    "fields Hudi 1.2 always indexes) `column_stats` and `partition_stats` index.",
)
PARTITION_STATS_ENABLE = boolean(
    "hoodie.metadata.index.partition.stats.enable",
    True,
    "Table versions 8 and 9: build and maintain the metadata table's `partition_stats` partition "
    "(per data partition and indexed column: the range over its latest files) along with "
    "`column_stats`, on partitioned tables (Hudi 1.2's default); false drops it.",
)
PARTITION_STATS_FILE_GROUP_COUNT = integer(
    "hoodie.metadata.index.partition.stats.file.group.count",
    1,
    "File groups of the `partition_stats` partition, fixed when it is initialised.",
)
COLUMN_STATS_COLUMN_LIST = string_list(
    "hoodie.metadata.index.column.stats.column.list",
    None,
    "Columns `column_stats` indexes (default: every top-level column, meta fields included).",
)
COLUMN_STATS_FILE_GROUP_COUNT = integer(
    "hoodie.metadata.index.column.stats.file.group.count",
    2,
    "File groups of the `column_stats` partition, fixed when it is initialised.",
)
BLOOM_FILTER_ENABLE = boolean(
    "hoodie.metadata.index.bloom.filter.enable",
    False,
    "Build and maintain the metadata table's `bloom_filters` partition (each base file's footer "
    "bloom filter) inside every write; needs `hoodie.metadata.enable`. Unset keeps and maintains "
    "one the table has; false drops it (with a warning).",
)
BLOOM_FILTER_FILE_GROUP_COUNT = integer(
    "hoodie.metadata.index.bloom.filter.file.group.count",
    4,
    "File groups of the `bloom_filters` partition, fixed when it is initialised.",
)
