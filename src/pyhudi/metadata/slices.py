"""Which metadata-table file slices and log blocks a read as of a data-table instant merges.

The metadata table (`.hoodie/metadata`) is a MERGE_ON_READ table: HFile base files written by its
compactions, log files of HFILE_DATA_BLOCK / DELETE_BLOCK blocks written by its deltacommits
(one per data-table write, at the data instant's time). A log block counts when:

* its instant is a completed metadata-table instant at or before the query instant, and
* that instant is a completed data-table instant, or not a data-table instant at all (the metadata
  table's own initialisation and compaction instants, e.g. `00000000000000000`, `<time>001` in
  Hudi 0.14, fresh instants in 1.x), or older than the data table's active timeline (archived).

A deltacommit of a data write that never completed is so ignored (Hudi's "valid instant
timestamps"); ROLLBACK command blocks drop their target's blocks (the log scanner).

Slices: the newest slice with a base file at or before the query instant, plus the log files of
that slice and of newer ones (a pending compaction's slice; on table versions 8/9 a log written
while a compaction ran belongs to the compaction's slice) whose file-name instant is at or before
the query instant.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyhudi.file_group.log_scan import InstantFilter
from pyhudi.fs_view import FileSystemView
from pyhudi.model.file import FileSlice, LogFile
from pyhudi.timeline.active import ActiveTimeline


def valid_instants(
    data: ActiveTimeline, metadata: ActiveTimeline, as_of: str | None
) -> InstantFilter:
    """The log-block instants a metadata read as of `as_of` accepts."""
    data_all = {i.time for i in data.timeline}
    data_completed = set(data.timeline.completed().times())
    metadata_completed = metadata.timeline.completed().up_to(as_of).times()
    valid = frozenset(t for t in metadata_completed if t in data_completed or t not in data_all)
    first = metadata.timeline.first  # older blocks: archived metadata-table instants
    return InstantFilter(valid, as_of, timeline_start=first.time if first else None)


@dataclass(frozen=True)
class MergeSlice:
    """What one metadata file group contributes to a read: a base HFile and log files, in order."""

    partition: str
    file_id: str
    base_file: str | None  # relative path inside the metadata table
    log_files: tuple[str, ...]
    size_bytes: int


def merge_slices(view: FileSystemView, partition: str, as_of: str | None) -> list[MergeSlice]:
    """One `MergeSlice` per file group of the metadata partition `partition`."""
    return [_merge_slice(g.slices, as_of) for g in view.file_groups(None, [partition]) if g.slices]


def _merge_slice(slices: tuple[FileSlice, ...], as_of: str | None) -> MergeSlice:
    """`slices` newest first; pick the base as of `as_of` and the logs written on top of it."""
    chosen = next(
        (
            i
            for i, s in enumerate(slices)
            if s.base_file is not None and _not_after(s.base_instant_time, as_of)
        ),
        len(slices) - 1,
    )
    base = slices[chosen].base_file
    if base is not None and not _not_after(base.instant_time, as_of):
        base = None
    logs: list[LogFile] = [
        log
        for s in slices[: chosen + 1]
        for log in s.log_files
        if _not_after(log.base_instant_time, as_of)
    ]
    logs.sort(key=LogFile.sort_key)
    size = (max(base.size_bytes, 0) if base else 0) + sum(max(lf.size_bytes, 0) for lf in logs)
    first = slices[chosen]
    return MergeSlice(
        first.partition_path,
        first.file_id,
        base.relative_path if base else None,
        tuple(lf.relative_path for lf in logs),
        size,
    )


def _not_after(instant_time: str, as_of: str | None) -> bool:
    """`instant_time` at or before `as_of`; a metadata-table service instant `<t>001` (compaction)
    counts as `t`: its base file holds exactly the deltacommits up to `t`."""
    return as_of is None or instant_time <= as_of or instant_time[: len(as_of)] == as_of
