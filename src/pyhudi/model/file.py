"""Data files of a table and how they group: base files, log files, file slices, file groups (§3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyhudi.model.instant import InstantTime


@dataclass(frozen=True)
class BaseFile:
    """`<fileId>_<writeToken>_<instantTime>.<ext>` in a partition folder."""

    partition_path: str
    file_name: str
    file_id: str
    write_token: str
    instant_time: InstantTime
    size_bytes: int = -1
    #: For a METADATA_ONLY bootstrap skeleton: the full path of the source file it stitches to.
    bootstrap_source_path: str | None = None

    @property
    def relative_path(self) -> str:
        return join_partition(self.partition_path, self.file_name)


@dataclass(frozen=True)
class LogFile:
    """`.<fileId>_<baseInstant>.log.<version>_<writeToken>[.cdc]` (§3.4)."""

    partition_path: str
    file_name: str
    file_id: str
    base_instant_time: InstantTime
    version: int
    write_token: str | None
    suffix: str = ""
    extension: str = "log"
    size_bytes: int = -1

    @property
    def relative_path(self) -> str:
        return join_partition(self.partition_path, self.file_name)

    @property
    def is_cdc(self) -> bool:
        """A change-data-capture log (`.cdc`): CDC blocks, not records of the file group."""
        return self.suffix == ".cdc"

    def sort_key(self) -> tuple[str, int, str, str]:
        """Hudi's `LogFileComparator`: base instant, version, write token (nulls first), suffix."""
        return (self.base_instant_time, self.version, self.write_token or "", self.suffix)


@dataclass(frozen=True)
class FileSlice:
    """A base file (optional on MOR) and the log files written on top of it, keyed by base instant."""

    partition_path: str
    file_id: str
    base_instant_time: InstantTime
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()  # ascending LogFileComparator order

    @property
    def has_log_files(self) -> bool:
        """Log files with records to merge (a slice's `.cdc` change logs do not count)."""
        return any(not log.is_cdc for log in self.log_files)

    @property
    def has_base_file(self) -> bool:
        return self.base_file is not None

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files

    @property
    def total_size_bytes(self) -> int:
        base = self.base_file.size_bytes if self.base_file else 0
        return max(base, 0) + sum(max(lf.size_bytes, 0) for lf in self.log_files)

    @property
    def latest_log_version(self) -> int:
        return max((lf.version for lf in self.log_files), default=0)


@dataclass(frozen=True)
class FileGroup:
    """All slices of one file id in one partition, newest slice first."""

    partition_path: str
    file_id: str
    slices: tuple[FileSlice, ...] = field(default_factory=tuple)

    @property
    def latest_slice(self) -> FileSlice | None:
        return self.slices[0] if self.slices else None


@dataclass(frozen=True)
class FileGroupId:
    partition_path: str
    file_id: str


def join_partition(partition_path: str, name: str) -> str:
    return f"{partition_path}/{name}" if partition_path else name
