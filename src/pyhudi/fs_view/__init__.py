"""File groups and file slices as of an instant (layer 3)."""

from pyhudi.fs_view.listing import PartitionListing
from pyhudi.fs_view.pending import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.fs_view.view import FileSystemView

__all__ = [
    "FileSystemView",
    "PartitionListing",
    "pending_clustering_file_groups",
    "pending_compaction_operations",
]
