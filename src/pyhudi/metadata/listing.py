"""Listing a data table's files from its metadata table's `files` partition instead of storage.

`metadata_listing(mdt)` is the `PartitionListing` a directory listing would give, built from the
`files` partition (partition list and per-partition file names and sizes); `metadata_view(ctx)` is
a file-system view that lists through it (no directory listing of the data partitions). Reads use
it when `hoodie.metadata.enable` is true in the read options (default true, for writers and
readers alike, as Hudi's `HoodieMetadataConfig`) and the table's `hoodie.properties`
lists `files` among `hoodie.table.metadata.partitions` (`reads_use_metadata`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pyhudi.config import metadata as metadata_keys
from pyhudi.fs_view import FileSystemView, PartitionListing
from pyhudi.metadata.reader import FILES_PARTITION, MetadataTable, has_metadata_table
from pyhudi.model.file import join_partition
from pyhudi.storage import FileStatus
from pyhudi.table.context import TableContext


def metadata_listing(mdt: MetadataTable) -> PartitionListing:
    """The data table's files by partition, as the metadata table's `files` partition lists them."""
    return files_listing(mdt.data, mdt.all_files())


def files_listing(ctx: TableContext, files: Mapping[str, Mapping[str, int]]) -> PartitionListing:
    """A `PartitionListing` of `ctx` holding `files` (partition -> file name -> size)."""
    return PartitionListing(
        {
            partition: tuple(
                sorted(
                    (
                        FileStatus(ctx.path(join_partition(partition, name)), size, is_dir=False)
                        for name, size in listed.items()
                    ),
                    key=lambda status: status.path,
                )
            )
            for partition, listed in files.items()
        }
    )


def metadata_view(ctx: TableContext, mdt: MetadataTable | None = None) -> FileSystemView:
    """A file-system view of `ctx` whose files come from the metadata table (read at its latest)."""
    table = mdt if mdt is not None else MetadataTable.open(ctx)
    return dataclasses.replace(ctx.view(), listing_source=lambda: metadata_listing(table))


def reads_use_metadata(ctx: TableContext, options: Mapping[str, str] | None) -> bool:
    """Whether a read of `ctx` with `options` lists its files from the metadata table."""
    enabled = metadata_keys.METADATA_ENABLE.get(options or {})
    return enabled and FILES_PARTITION in ctx.config.metadata_partitions and has_metadata_table(ctx)


def read_view(ctx: TableContext, options: Mapping[str, str] | None) -> FileSystemView:
    """The file-system view a read plans over: metadata-table listing when enabled, else storage."""
    return metadata_view(ctx) if reads_use_metadata(ctx, options) else ctx.view()
