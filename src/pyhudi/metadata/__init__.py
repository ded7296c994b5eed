"""The metadata table (`.hoodie/metadata`): reading its merged records (layer 4.5)."""

from pyhudi.metadata.reader import (
    FILES_PARTITION,
    METADATA_TABLE_FOLDER,
    MetadataPartitionSummary,
    MetadataTable,
    has_metadata_table,
    metadata_partition_names,
    metadata_table_path,
)
from pyhudi.metadata.slices import MergeSlice

__all__ = [
    "FILES_PARTITION",
    "METADATA_TABLE_FOLDER",
    "MergeSlice",
    "MetadataPartitionSummary",
    "MetadataTable",
    "has_metadata_table",
    "metadata_partition_names",
    "metadata_table_path",
]
