"""The metadata table (`.hoodie/metadata`): reading its merged records (layer 4.5)."""

from pyhudi.metadata.listing import metadata_listing, metadata_view, read_view, reads_use_metadata
from pyhudi.metadata.reader import (
    FILES_PARTITION,
    METADATA_TABLE_FOLDER,
    MetadataPartitionSummary,
    MetadataTable,
    has_metadata_table,
    metadata_partition_names,
    metadata_table_path,
)
from pyhudi.metadata.report import Difference, ValidationReport
from pyhudi.metadata.slices import MergeSlice
from pyhudi.metadata.validation import validate

__all__ = [
    "FILES_PARTITION",
    "METADATA_TABLE_FOLDER",
    "Difference",
    "MergeSlice",
    "MetadataPartitionSummary",
    "MetadataTable",
    "ValidationReport",
    "has_metadata_table",
    "metadata_listing",
    "metadata_partition_names",
    "metadata_table_path",
    "metadata_view",
    "read_view",
    "reads_use_metadata",
    "validate",
]
