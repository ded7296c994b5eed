"""What savepoint, restore and rollback operations return: small frozen results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any


@dataclass(frozen=True)
class SavepointInfo:
    """One completed savepoint: the commit it keeps, who made it and when, and the files it names
    (`HoodieSavepointMetadata`: per partition, the latest file slice's files as of the commit)."""

    instant_time: str
    user: str
    comment: str
    savepointed_at: datetime
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, instant_time: str, record: Mapping[str, Any]) -> SavepointInfo:
        """From the decoded `HoodieSavepointMetadata` of savepoint `instant_time`."""
        partitions = record.get("partitionMetadata") or {}
        return cls(
            instant_time=instant_time,
            user=record.get("savepointedBy") or "",
            comment=record.get("comments") or "",
            savepointed_at=datetime.fromtimestamp(
                int(record.get("savepointedAt") or 0) / 1000, tz=timezone.utc
            ),
            files={
                name: tuple(entry.get("savepointDataFile") or ())
                for name, entry in sorted(partitions.items())
            },
        )

    @property
    def file_count(self) -> int:
        """How many data files the savepoint keeps from the cleaner."""
        return sum(len(names) for names in self.files.values())

    def __str__(self) -> str:
        by = f" by {self.user}" if self.user else ""
        note = f": {self.comment}" if self.comment else ""
        return (
            f"savepoint {self.instant_time}{by} at {self.savepointed_at:%Y-%m-%d %H:%M:%S} UTC, "
            f"{self.file_count} files in {len(self.files)} partitions{note}"
        )


@dataclass(frozen=True)
class RollbackResult:
    """One rollback of a commit: the rollback instant, what it rolled back, files deleted."""

    instant_time: str
    rolled_back: str
    action: str
    files_deleted: int

    def __str__(self) -> str:
        return (
            f"rollback {self.instant_time}: {self.action} {self.rolled_back} rolled back, "
            f"files deleted: {self.files_deleted}"
        )


@dataclass(frozen=True)
class RestoreResult:
    """One restore to a savepoint: the restore instant, the instants it rolled back (newest
    first) and what became of the metadata table (`restored`, `deleted`, or `none`)."""

    instant_time: str
    savepoint_time: str
    rolled_back: tuple[str, ...]
    files_deleted: int
    metadata_table: str

    def __str__(self) -> str:
        rolled = ", ".join(self.rolled_back) or "nothing"
        return (
            f"restore {self.instant_time} to savepoint {self.savepoint_time}: rolled back "
            f"{rolled}; files deleted: {self.files_deleted}; metadata table {self.metadata_table}"
        )
