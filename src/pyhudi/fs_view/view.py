"""File groups and file slices of a table as of an instant (Hudi's `AbstractTableFileSystemView`).

Visibility rules (reference §2.9, §3.6):
* a base file counts when its instant is a completed write instant at or before the query instant,
  or older than the whole active timeline (archived);
* a log file belongs to the slice keyed by its base instant (v6); that slice counts when its base
  instant does, or when it is a pending compaction (the slice the compaction opened);
* file groups named by completed replacecommits (at or before the query instant) are hidden;
* base files of pending compaction or clustering instants are never committed, so never seen.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.fs_view.listing import PartitionListing
from pyhudi.fs_view.pending import pending_compaction_operations
from pyhudi.model.file import BaseFile, FileGroup, FileSlice, LogFile
from pyhudi.model.instant import METADATA_BOOTSTRAP_INSTANT, Action, InstantTime
from pyhudi.storage import Storage
from pyhudi.timeline.active import ActiveTimeline
from pyhudi.timeline.timeline import Timeline


@dataclass
class FileSystemView:
    storage: Storage
    base_path: str
    active: ActiveTimeline
    base_file_extension: str = ".parquet"
    #: (partition, file id) -> source file of METADATA_ONLY bootstrapped file groups (bootstrap index).
    bootstrap_sources: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    #: Where the files come from: a directory listing by default, or e.g. the metadata table's
    #: `files` partition (`pyhudi.metadata.listing`); called once per view (and per `refresh`).
    listing_source: Callable[[], PartitionListing] | None = field(default=None, repr=False)
    _listing: PartitionListing | None = field(default=None, repr=False)

    @property
    def timeline(self) -> Timeline:
        return self.active.timeline

    @property
    def listing(self) -> PartitionListing:
        if self._listing is None:
            source = self.listing_source
            self._listing = (
                source() if source else PartitionListing.scan(self.storage, self.base_path)
            )
        return self._listing

    def refresh(self) -> None:
        self._listing = None

    def partition_paths(self) -> list[str]:
        return [p for p in self.listing.partition_paths if p or self.listing.files.get(p)]

    # ---- instants that make files visible ---------------------------------------------------
    def _committed_times(self, as_of: str | None) -> tuple[set[str], Timeline]:
        writes = self.timeline.write_timeline()
        completed = writes.completed().up_to(as_of)
        return set(completed.times()), writes

    def _is_committed(
        self, time: str, committed: set[str], writes: Timeline, as_of: str | None
    ) -> bool:
        if as_of is not None and time > as_of:
            return False
        return time in committed or writes.is_before_start(time)

    # ---- file groups --------------------------------------------------------------------------
    def file_groups(
        self,
        as_of: str | None = None,
        partitions: Iterable[str] | None = None,
        *,
        include_replaced: bool = False,
    ) -> list[FileGroup]:
        """Committed file groups (slices newest first) as of `as_of` (latest when None)."""
        committed, writes = self._committed_times(as_of)
        pending_ops = (
            pending_compaction_operations(self.active)
            if self.timeline.pending_compactions()
            else {}
        )
        replaced = set() if include_replaced else self.replaced_file_groups(as_of)
        wanted = set(partitions) if partitions is not None else None
        groups: list[FileGroup] = []
        for partition in self.partition_paths():
            if wanted is not None and partition not in wanted:
                continue
            for group in self._partition_groups(partition, committed, writes, pending_ops, as_of):
                if (group.partition_path, group.file_id) not in replaced:
                    groups.append(group)
        return groups

    def _partition_groups(
        self,
        partition: str,
        committed: set[str],
        writes: Timeline,
        pending_ops: dict[tuple[str, str], str],
        as_of: str | None,
    ) -> list[FileGroup]:
        pending = set(pending_ops.values())
        slices: dict[str, dict[str, tuple[BaseFile | None, list[LogFile]]]] = defaultdict(dict)
        for status in self.listing.files.get(partition, ()):
            name = status.name
            if name.startswith("."):
                log = parse_log_file(partition, name, status.size_bytes)
                if log is None or log.extension != "log":
                    continue
                slice_time = self._log_slice_time(log)
                if slice_time in pending or self._is_committed(
                    slice_time, committed, writes, as_of
                ):
                    base, logs = slices[log.file_id].get(slice_time, (None, []))
                    logs.append(log)
                    slices[log.file_id][slice_time] = (base, logs)
            elif name.endswith(self.base_file_extension):
                base_file = parse_base_file(partition, name, status.size_bytes)
                if base_file and self._is_committed(
                    base_file.instant_time, committed, writes, as_of
                ):
                    _, logs = slices[base_file.file_id].get(base_file.instant_time, (None, []))
                    source = self.bootstrap_sources.get((partition, base_file.file_id))
                    if source and base_file.instant_time == METADATA_BOOTSTRAP_INSTANT:
                        base_file = dataclasses.replace(base_file, bootstrap_source_path=source)
                    slices[base_file.file_id][base_file.instant_time] = (base_file, logs)

        for (op_partition, file_id), time in pending_ops.items():
            if op_partition == partition and file_id in slices:
                slices[file_id].setdefault(time, (None, []))
        return [_file_group(partition, fid, by_time) for fid, by_time in sorted(slices.items())]

    def _log_slice_time(self, log: LogFile) -> str:
        if self.active.layout_version < 2:
            return log.base_instant_time
        return self._v8_slice_for_log(log)

    def _v8_slice_for_log(self, log: LogFile) -> str:
        # Table version 8: a log belongs to the slice with the largest base instant at or before the
        # completion time of the deltacommit that wrote it (its file-name instant).
        instant = self.timeline.find(log.base_instant_time)
        completion = (
            instant.completion_time
            if instant and instant.completion_time
            else log.base_instant_time
        )
        bases = [
            parse_base_file(log.partition_path, s.name)
            for s in self.listing.files.get(log.partition_path, ())
            if s.name.startswith(log.file_id) and s.name.endswith(self.base_file_extension)
        ]
        candidates = [b.instant_time for b in bases if b and b.instant_time <= completion]
        return max(candidates, default=log.base_instant_time)

    # ---- slices --------------------------------------------------------------------------------
    def latest_file_slices(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[FileSlice]:
        """The latest slice of every visible file group (for a pending compaction, the new slice)."""
        return [g.slices[0] for g in self.file_groups(as_of, partitions) if g.slices]

    def latest_merged_file_slices(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[FileSlice]:
        """What a snapshot read merges: with a pending compaction, the slice before it plus the new logs."""
        result = []
        for group in self.file_groups(as_of, partitions):
            if not group.slices:
                continue
            latest = group.slices[0]
            if (
                latest.base_file is None
                and len(group.slices) > 1
                and self._is_pending_compaction(latest)
            ):
                previous = group.slices[1]
                latest = FileSlice(
                    previous.partition_path,
                    previous.file_id,
                    previous.base_instant_time,
                    previous.base_file,
                    tuple(sorted(previous.log_files + latest.log_files, key=LogFile.sort_key)),
                )
            result.append(latest)
        return result

    def _is_pending_compaction(self, file_slice: FileSlice) -> bool:
        return file_slice.base_instant_time in set(self.timeline.pending_compactions().times())

    def latest_base_files(
        self, as_of: str | None = None, partitions: Iterable[str] | None = None
    ) -> list[BaseFile]:
        """The newest committed base file per file group (read-optimized view)."""
        result = []
        for group in self.file_groups(as_of, partitions):
            for file_slice in group.slices:
                if file_slice.base_file is not None:
                    result.append(file_slice.base_file)
                    break
        return result

    # ---- replaced file groups -----------------------------------------------------------------
    def replaced_file_groups(self, as_of: str | None = None) -> set[tuple[str, str]]:
        replaced: set[tuple[str, str]] = set()
        for instant in self.timeline.commits().with_actions(Action.REPLACE_COMMIT).up_to(as_of):
            replaced |= self.active.commit_metadata(instant).replaced_file_ids()
        return replaced


def _file_group(
    partition: str, file_id: str, by_time: dict[str, tuple[BaseFile | None, list[LogFile]]]
) -> FileGroup:
    slices = tuple(
        FileSlice(
            partition, file_id, InstantTime(time), base, tuple(sorted(logs, key=LogFile.sort_key))
        )
        for time, (base, logs) in sorted(by_time.items(), reverse=True)
    )
    return FileGroup(partition, file_id, slices)
