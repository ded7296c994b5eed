"""Listing a data table's files from its metadata table's `files` partition instead of storage.

`metadata_listing(mdt)` is the `PartitionListing` a directory listing would give, built from the
`files` partition (partition list and per-partition file names and sizes); `metadata_view(ctx)` is
a file-system view that lists through it (no directory listing of the data partitions). Reads use
it when `hoodie.metadata.enable` is true in the read options (default true, for writers and
readers alike, as Hudi's `HoodieMetadataConfig`) and the table's `hoodie.properties`
lists `files` among `hoodie.table.metadata.partitions` (`reads_use_metadata`).

Reads keep the listing decoded from a metadata table (as Hudi keeps its metadata readers open):
`read_view` reuses it while the metadata table is unchanged, i.e. while the fingerprint of
what the listing was merged from is equal: the data table's path and the query instant, the
`files` partition's file slices (file names and sizes: HFiles are immutable, log files only grow),
the modification times of its files (a table deleted and created again at the same instant times
writes other files under the same names) and the log-block instants the merge accepts (`valid_instants`, from both timelines, so a
completed, rolled-back or new data instant changes it). The validator always decodes afresh.
`clear_listing_cache()` forgets every listing (the bench's cold planning).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping

from pyhudi.config import metadata as metadata_keys
from pyhudi.fs_view import FileSystemView, PartitionListing
from pyhudi.metadata.reader import FILES_PARTITION, MetadataTable, has_metadata_table
from pyhudi.metadata.slices import valid_instants
from pyhudi.model.file import join_partition
from pyhudi.storage import FileStatus
from pyhudi.table.context import TableContext

#: Metadata tables whose decoded listing is kept (most recently used last).
_CACHED_TABLES = 8
_listings: OrderedDict[str, tuple[Hashable, PartitionListing]] = OrderedDict()
_lock = threading.Lock()  # plans may run in several threads of one driver


def metadata_listing(mdt: MetadataTable, *, cached: bool = False) -> PartitionListing:
    """The data table's files by partition, as the metadata table's `files` partition lists them
    (`cached`: the listing decoded before, while the fingerprint in the module docstring holds)."""
    if not cached:
        return files_listing(mdt.data, mdt.all_files())
    key = mdt.table.base_path
    fingerprint = _fingerprint(mdt)
    with _lock:
        hit = _listings.get(key)
        if hit is not None and hit[0] == fingerprint:
            _listings.move_to_end(key)
            return hit[1]
    listing = files_listing(mdt.data, mdt.all_files())
    with _lock:
        _listings[key] = (fingerprint, listing)
        while len(_listings) > _CACHED_TABLES:
            _listings.popitem(last=False)
    return listing


def is_kept_listing(listing: PartitionListing) -> bool:
    """`listing` is one this module keeps (so it stands for an unchanged metadata table)."""
    with _lock:
        return any(kept is listing for _, kept in _listings.values())


def clear_listing_cache() -> None:
    """Forget every kept metadata-table listing."""
    with _lock:
        _listings.clear()


def _fingerprint(mdt: MetadataTable) -> Hashable:
    instants = valid_instants(mdt.data.active, mdt.table.active, mdt.as_of)
    slices = tuple(mdt.merge_slices(FILES_PARTITION))
    return (mdt.data.base_path, mdt.as_of, slices, mdt.file_stamps(FILES_PARTITION), instants)


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


def metadata_view(
    ctx: TableContext, mdt: MetadataTable | None = None, *, cached: bool = False
) -> FileSystemView:
    """A file-system view of `ctx` whose files come from the metadata table (read at its latest;
    `cached`: see `metadata_listing`)."""
    table = mdt if mdt is not None else MetadataTable.open(ctx)
    return dataclasses.replace(
        ctx.view(), listing_source=lambda: metadata_listing(table, cached=cached)
    )


def reads_use_metadata(ctx: TableContext, options: Mapping[str, str] | None) -> bool:
    """Whether a read of `ctx` with `options` lists its files from the metadata table."""
    enabled = metadata_keys.METADATA_ENABLE.get(options or {})
    return enabled and FILES_PARTITION in ctx.config.metadata_partitions and has_metadata_table(ctx)


def read_view(ctx: TableContext, options: Mapping[str, str] | None) -> FileSystemView:
    """The file-system view a read plans over: metadata-table listing when enabled, else storage."""
    return metadata_view(ctx, cached=True) if reads_use_metadata(ctx, options) else ctx.view()
