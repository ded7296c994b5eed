"""What `pyhudi.metadata.validate` finds: each difference, and the checks that ran."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Difference:
    """One way the metadata table disagrees with the data table's files."""

    check: str  # partitions, files, latest_base_files, latest_file_slices, column_stats, ...
    partition: str  # data partition ('' = non-partitioned)
    subject: str  # the file, file group, (file, column) or record key concerned
    detail: str

    def __str__(self) -> str:
        where = self.partition or "(non-partitioned)"
        return f"[{self.check}] {where}: {self.subject}: {self.detail}"


@dataclass(frozen=True)
class ValidationReport:
    """The result of validating one table's metadata table (`ok` when no difference)."""

    base_path: str
    as_of: str | None
    checks: tuple[str, ...]
    skipped: tuple[str, ...]
    differences: tuple[Difference, ...]

    @property
    def ok(self) -> bool:
        return not self.differences

    def of_check(self, check: str) -> list[Difference]:
        return [d for d in self.differences if d.check == check]

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_path": self.base_path,
            "as_of": self.as_of,
            "ok": self.ok,
            "checks": list(self.checks),
            "skipped": list(self.skipped),
            "differences": [asdict(d) for d in self.differences],
        }
