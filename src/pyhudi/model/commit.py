"""Commit metadata: what a completed write instant says it wrote (§2.5, §2.6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pyhudi.model.enums import WriteOperationType


@dataclass(frozen=True)
class WriteStat:
    """`HoodieWriteStat` (plus the `HoodieDeltaWriteStat` fields for log appends)."""

    file_id: str
    path: str | None
    partition_path: str | None
    prev_commit: str = "null"
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    file_size_bytes: int = 0
    total_log_records: int = 0
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_blocks: int = 0
    total_rollback_blocks: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    runtime_stats: Mapping[str, int] | None = None
    # HoodieDeltaWriteStat (log appends); None on plain write stats.
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: tuple[str, ...] | None = None
    #: CDC log files this write wrote for the file group: relative path -> size (§3.5).
    cdc_stats: Mapping[str, int] | None = None

    @property
    def is_delta(self) -> bool:
        return self.log_version is not None

    def with_changes(self, **changes: Any) -> WriteStat:
        return replace(self, **changes)


@dataclass(frozen=True)
class CommitMetadata:
    """`HoodieCommitMetadata`; with `partition_to_replace_file_ids` it is `HoodieReplaceCommitMetadata`."""

    partition_to_write_stats: Mapping[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    operation_type: WriteOperationType = WriteOperationType.UNKNOWN
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    compacted: bool = False
    partition_to_replace_file_ids: Mapping[str, tuple[str, ...]] | None = None

    @property
    def schema(self) -> str | None:
        value = self.extra_metadata.get("schema")
        return value or None

    @property
    def is_replace(self) -> bool:
        return self.partition_to_replace_file_ids is not None

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition, fileId) pairs this replacecommit replaced."""
        replaced = self.partition_to_replace_file_ids or {}
        return {(p, fid) for p, fids in replaced.items() for fid in fids}

    def written_file_names(self) -> set[str]:
        names = set()
        for stat in self.write_stats():
            if stat.path:
                names.add(stat.path.rsplit("/", 1)[-1])
        return names

    def total(self, attribute: str) -> int:
        return sum(int(getattr(s, attribute) or 0) for s in self.write_stats())
