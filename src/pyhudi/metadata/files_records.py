"""`files` partition records of a data-table action (Hudi `HoodieTableMetadataUtil`), pure code.

Not wired into writes yet: this is what a metadata-table write will append for each action.

* a commit, deltacommit, replacecommit or compaction commit (`convertMetadataToFilesPartitionRecords`
  of `HoodieCommitMetadata`): the partition list record naming every partition written (`.` for a
  non-partitioned table), and per partition one file list record adding each written file (base or
  log file, by name) with the largest size its write stats report; replaced file groups stay listed
  until a clean deletes their files;
* a clean (`HoodieCleanMetadata`): per partition a file list record deleting `deletePathPatterns`
  (file names), and a partition list record deleting the partitions marked `isPartitionDeleted`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from pyhudi.codec.metadata_hfile import file_list_record, partition_list_record
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.model.commit import CommitMetadata


def commit_files_records(metadata: CommitMetadata) -> list[MetadataRecord]:
    """The `files` records of one completed write (commit metadata of any write action)."""
    records = [partition_list_record(metadata.partition_to_write_stats)]
    for partition, stats in metadata.partition_to_write_stats.items():
        sizes: dict[str, int] = {}
        for stat in stats:
            if not stat.path:
                continue  # an empty partition
            name = posixpath.basename(stat.path)
            sizes[name] = max(sizes.get(name, 0), int(stat.file_size_bytes))
            for cdc_path, size in (stat.cdc_stats or {}).items():  # the write's CDC logs too
                sizes[posixpath.basename(cdc_path)] = int(size)
        records.append(file_list_record(partition, sizes))
    return records


def written_parquet_files(metadata: CommitMetadata) -> list[tuple[str, str]]:
    """(partition, file name) of each parquet base file a data instant wrote (the files the
    `column_stats` and `bloom_filters` partitions index)."""
    return [
        (partition, name)
        for partition, stats in metadata.partition_to_write_stats.items()
        for name in (posixpath.basename(stat.path or "") for stat in stats)
        if name.endswith(".parquet")
    ]


def clean_files_records(clean_metadata: Mapping[str, Any]) -> list[MetadataRecord]:
    """The `files` records of one completed clean (the decoded Avro `HoodieCleanMetadata`)."""
    records: list[MetadataRecord] = []
    deleted_partitions = []
    for partition, info in (clean_metadata.get("partitionMetadata") or {}).items():
        names = [posixpath.basename(p) for p in info.get("deletePathPatterns") or ()]
        records.append(file_list_record(partition, deleted=names))
        if info.get("isPartitionDeleted"):
            deleted_partitions.append(partition)
    if deleted_partitions:
        records.append(partition_list_record(deleted=deleted_partitions))
    return records
