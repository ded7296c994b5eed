"""Keeping the metadata table's `bloom_filters` partition in step with the data table's writes.

As Hudi 0.14 does (`initializeBloomFiltersPartition`, `convertMetadataToBloomFilterRecords`): one
record per parquet base file holding its footer's bloom filter (a file without one gets none), in
`hoodie.metadata.index.bloom.filter.file.group.count` file groups (`bloom-filters-NNNN-0`, Hudi's
default 4); initialised from every committed parquet base file, then each data instant adds the
base files it wrote (footer read on the driver) and a clean a tombstone per deleted parquet file.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow.parquet as pq

from pyhudi.codec.metadata_keys import file_group_index
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.config import metadata as mkeys
from pyhudi.metadata.deltacommit import GroupWrite
from pyhudi.metadata.files_records import written_parquet_files
from pyhudi.metadata.index_records import (
    BLOOM_FILTERS_PARTITION,
    deleted_bloom_filter_record,
    footer_bloom_filter_record,
)
from pyhudi.model.commit import CommitMetadata
from pyhudi.table.context import TableContext

#: `MetadataPartitionType.BLOOM_FILTERS.getFileIdPrefix()`.
BLOOM_FILTERS_FILE_ID_PREFIX = "bloom-filters-"
_PARQUET = ".parquet"


def maintains_bloom_filters(ctx: TableContext, options: Mapping[str, str]) -> bool:
    """Explicitly enabled, or unset on a table that has a `bloom_filters` partition."""
    key = mkeys.BLOOM_FILTER_ENABLE
    if key.is_set(options):
        return key.get(options)
    return BLOOM_FILTERS_PARTITION in ctx.config.metadata_partitions


def initial_bloom_filters(
    ctx: TableContext, options: Mapping[str, str], listed: Mapping[str, Mapping[str, int]]
) -> list[GroupWrite]:
    """The base file contents of a new `bloom_filters` over the committed files `listed`."""
    records: list[MetadataRecord] = []
    for partition, files in sorted(listed.items()):
        for name in sorted(n for n in files if n.endswith(_PARQUET)):
            records += _file_record(ctx, partition, name, _instant_of(name))
    count = max(1, mkeys.BLOOM_FILTER_FILE_GROUP_COUNT.get(options))
    return _group_writes(records, count)


def bloom_filter_updates(
    ctx: TableContext, instant_time: str, metadata: CommitMetadata, count: int
) -> list[GroupWrite]:
    """The records of the parquet base files a data instant wrote."""
    records: list[MetadataRecord] = []
    for partition, name in written_parquet_files(metadata):
        records += _file_record(ctx, partition, name, instant_time)
    return [g for g in _group_writes(records, count) if g.records]


def clean_bloom_filter_updates(
    instant_time: str, clean_metadata: Mapping[str, Any], count: int
) -> list[GroupWrite]:
    """Tombstones of the parquet files a clean deleted."""
    records = [
        deleted_bloom_filter_record(partition, posixpath.basename(pattern), instant_time)
        for partition, info in (clean_metadata.get("partitionMetadata") or {}).items()
        for pattern in info.get("deletePathPatterns") or ()
        if pattern.endswith(_PARQUET)
    ]
    return [g for g in _group_writes(records, count) if g.records]


def _instant_of(name: str) -> str:
    """The instant of a base file name `<fileId>_<token>_<instant>.parquet`."""
    return name.rsplit("_", 1)[-1].split(".", 1)[0]


def _file_record(
    ctx: TableContext, partition: str, name: str, instant_time: str
) -> list[MetadataRecord]:
    path = ctx.path(posixpath.join(partition, name) if partition else name)
    with ctx.storage.open_input(path) as handle:
        footer = pq.ParquetFile(handle).metadata.metadata
    record = footer_bloom_filter_record(partition, name, instant_time, footer)
    return [record] if record is not None else []


def _group_writes(records: Sequence[MetadataRecord], count: int) -> list[GroupWrite]:
    grouped: dict[int, list[MetadataRecord]] = {i: [] for i in range(count)}
    for record in records:
        grouped[file_group_index(record.key, count)].append(record)
    return [
        GroupWrite(BLOOM_FILTERS_PARTITION, f"{BLOOM_FILTERS_FILE_ID_PREFIX}{i:04d}-0", tuple(g))
        for i, g in grouped.items()
    ]
