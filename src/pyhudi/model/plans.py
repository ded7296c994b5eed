"""Table service plans as values (layer 1): what a `.requested` instant of compaction, clustering or
clean holds. Their Avro records are written and read by `pyhudi.codec.service_plans`."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyhudi.config.clean import CleaningPolicy
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Instant

#: `CleanPlanner.LATEST_CLEAN_PLAN_VERSION`: full paths in `filePathsToBeDeletedPerPartition`.
CLEAN_PLAN_VERSION = 2


@dataclass(frozen=True)
class CleanFileInfo:
    """`HoodieCleanFileInfo`: one file to delete, as a full URI."""

    file_path: str
    is_bootstrap_base_file: bool = False

    @property
    def file_name(self) -> str:
        return posixpath.basename(self.file_path)


@dataclass(frozen=True)
class CleanPlan:
    """Exactly what `HoodieCleanerPlan` (version 2) holds."""

    earliest_instant_to_retain: Instant | None
    last_completed_commit_time: str
    policy: CleaningPolicy
    files_per_partition: Mapping[str, tuple[CleanFileInfo, ...]]
    partitions_to_delete: tuple[str, ...] = ()
    version: int = CLEAN_PLAN_VERSION

    @property
    def earliest_commit_to_retain(self) -> str:
        """The earliest retained instant time, or "" (what clean metadata records)."""
        return self.earliest_instant_to_retain.time if self.earliest_instant_to_retain else ""

    @property
    def file_count(self) -> int:
        return sum(len(files) for files in self.files_per_partition.values())

    def file_names(self) -> dict[str, list[str]]:
        """partition -> names of the files to delete (for logs and tests)."""
        return {p: [f.file_name for f in fs] for p, fs in self.files_per_partition.items()}


@dataclass(frozen=True)
class CompactionOperation:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    metrics: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CompactionPlan:
    operations: tuple[CompactionOperation, ...]


@dataclass(frozen=True)
class ClusteringGroup:
    partition_path: str
    slices: tuple[FileSlice, ...]
    num_output_file_groups: int
    metrics: Mapping[str, float] = field(default_factory=dict)

    @property
    def file_ids(self) -> tuple[str, ...]:
        return tuple(s.file_id for s in self.slices)


@dataclass(frozen=True)
class ClusteringPlan:
    groups: tuple[ClusteringGroup, ...]
    sort_columns: tuple[str, ...] = ()
    #: Partitions with groups the plan could not take (`max.num.groups`): Hudi 1.2's incremental
    #: planning takes them up next time (`missingSchedulePartitions`, table versions 8 and 9).
    missing_partitions: tuple[str, ...] = ()
