"""What the public operations return (layer 1): user-visible, frozen results.

`CommitResult` (a write), `ServiceOutcome` (a compaction or clustering run), `CleanResult`,
`ArchiveResult` and `BootstrapResult`; all exported from `pyhudi`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyhudi.config.clean import CleaningPolicy
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import BootstrapMode
from pyhudi.model.instant import Action, Instant, InstantTime


@dataclass(frozen=True)
class CommitResult:
    """What a write did: its instant, operation and counts (from the commit's write stats)."""

    instant_time: str
    operation: str
    action: str
    table_path: str
    num_writes: int = 0
    num_inserts: int = 0
    num_updates: int = 0
    num_deletes: int = 0
    files_written: int = 0
    partitions_written: tuple[str, ...] = ()
    replaced_file_groups: int = 0
    rolled_back: tuple[str, ...] = field(default_factory=tuple)
    services: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(
        cls,
        table_path: str,
        action: Action,
        metadata: CommitMetadata,
        instant_time: str,
        rolled: Sequence[str],
    ) -> CommitResult:
        """The result of a completed write, from its commit metadata."""
        return cls(
            instant_time=instant_time,
            operation=metadata.operation_type.value,
            action=action.value,
            table_path=table_path,
            num_writes=metadata.total("num_writes"),
            num_inserts=metadata.total("num_inserts"),
            num_updates=metadata.total("num_update_writes"),
            num_deletes=metadata.total("num_deletes"),
            files_written=len(metadata.write_stats()),
            partitions_written=tuple(sorted(metadata.partition_to_write_stats)),
            replaced_file_groups=len(metadata.replaced_file_ids()),
            rolled_back=tuple(rolled),
        )


@dataclass(frozen=True)
class ServiceOutcome:
    """A service run, as reported to callers and the CLI."""

    service: str
    instant_time: str
    detail: str

    def __str__(self) -> str:
        return f"{self.service} {self.instant_time}: {self.detail}"


@dataclass(frozen=True)
class CleanResult:
    """One executed clean: what it deleted (paths relative to the table) and what it kept."""

    instant_time: InstantTime
    policy: CleaningPolicy
    deleted_files: tuple[str, ...]
    failed_files: tuple[str, ...]
    partitions: tuple[str, ...]
    deleted_partitions: tuple[str, ...]
    earliest_commit_retained: str | None

    @property
    def files_deleted(self) -> int:
        """How many files the clean deleted."""
        return len(self.deleted_files)

    def __str__(self) -> str:
        parts = [f"{self.files_deleted} files deleted in {len(self.partitions)} partitions"]
        if self.failed_files:
            parts.append(f"{len(self.failed_files)} not deleted (already gone or failing)")
        if self.deleted_partitions:
            parts.append(f"partitions removed: {', '.join(self.deleted_partitions)}")
        retained = self.earliest_commit_retained or "none (file versions)"
        parts.append(f"earliest commit retained {retained}")
        return f"clean {self.instant_time} ({self.policy.value}): " + ", ".join(parts)


@dataclass(frozen=True)
class ArchiveResult:
    """What one archival run moved: the instants, the archive file, the timeline files deleted."""

    archived: tuple[Instant, ...] = ()
    archive_file: str | None = None
    timeline_files: int = 0

    def __str__(self) -> str:
        if not self.archived:
            return "nothing to archive"
        first, last = self.archived[0].time, self.archived[-1].time
        name = posixpath.basename(self.archive_file or "")
        return (
            f"{len(self.archived)} instants archived ({first} .. {last}, "
            f"{self.timeline_files} timeline files) into {name}"
        )


@dataclass(frozen=True)
class BootstrapResult:
    """What a bootstrap did: the mode of each partition, files and rows written, its instants
    (`ignored`: save mode `ignore` left an existing table alone)."""

    table_path: str
    source_path: str
    modes: Mapping[str, str] = field(default_factory=dict)
    skeleton_files: int = 0
    metadata_only_rows: int = 0
    full_record_rows: int = 0
    seconds: float = 0.0
    instants: tuple[str, ...] = ()
    ignored: bool = False
    action: str = Action.COMMIT.value

    def summary(self) -> str:
        """A few lines for people: which partitions went which way, files, rows, time."""
        if self.ignored:
            return f"{self.table_path} already exists: bootstrap ignored (save mode Ignore)"
        lines = [f"bootstrapped {self.source_path} into {self.table_path} in {self.seconds:.1f}s"]
        for mode in BootstrapMode:
            parts = sorted(p for p, m in self.modes.items() if m == mode.value)
            rows = (
                self.metadata_only_rows
                if mode is BootstrapMode.METADATA_ONLY
                else self.full_record_rows
            )
            lines.append(
                f"  {mode.value:13s} {len(parts):4d} partition(s), {rows} rows: {', '.join(p or '(root)' for p in parts) or '-'}"
            )
        lines.append(
            f"  skeleton files: {self.skeleton_files}; instants: {', '.join(self.instants) or '-'}"
        )
        return "\n".join(lines)
