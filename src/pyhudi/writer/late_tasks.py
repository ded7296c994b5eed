"""Write tasks that outlive their write.

When one task of a write job fails, Spark fails the job and kills the stage's other tasks, but
does not wait for them: a Python worker in the middle of writing a file goes on until it next
talks to the JVM. The driver meanwhile rolls the write back. A task that created its marker
before the rollback removed the instant's pending files is found by the rollback's second
marker listing (`WriteTransaction.abort`). Every other task finds the inflight file gone when
it checks, after closing its files, and removes them itself: so no file of an aborted write
outlives it, whatever the order.

A task attempt that lost to another attempt of the same task (a speculative copy killed when the
other finished, a zombie of a retried stage) can close its file after the write completed: its
check finds the completed file and removes what the commit does not name.

The check is one or two `exists` per task (per file group for `applyInArrow` bodies); an empty
`WriteTaskSpec.inflight_file` skips it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from pyhudi.codec.file_names import instant_file_name, parse_instant_file
from pyhudi.exceptions import CommitConflictError
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import REFUSED, written_files
from pyhudi.model.instant import Instant, State
from pyhudi.table.context import TableContext
from pyhudi.table.layout import TEMP_FOLDER, marker_folder, remove_partition_left_empty
from pyhudi.timeline import META_FOLDER
from pyhudi.timeline.active import LAYOUT_2_FOLDER
from pyhudi.writer.transaction import undo_if_aborted

BatchBody = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
GroupBody = Callable[[pa.Table], pa.Table]


def settled_batches(spec: WriteTaskSpec, body: BatchBody) -> BatchBody:
    """A `mapInArrow` write body whose files are removed if the write was aborted meanwhile."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        stats = list(body(batches))
        undo_late_files(spec, stats)
        yield from stats

    return run


def settled_groups(spec: WriteTaskSpec, body: GroupBody) -> GroupBody:
    """An `applyInArrow` write body (one file group) likewise."""

    def run(group: pa.Table) -> pa.Table:
        stats = body(group)
        undo_late_files(spec, [stats])
        return stats

    return run


def undo_late_files(spec: WriteTaskSpec, stats: Iterable[pa.Table | pa.RecordBatch]) -> None:
    """`undo_late_rows` of the task's stats tables."""
    if spec.inflight_file:
        undo_late_rows(spec, [r for part in stats for r in part.to_pylist()])


def undo_late_rows(spec: WriteTaskSpec, rows: Iterable[Mapping[str, Any]]) -> None:
    """Raise `CommitConflictError` after deleting the files named by the task's stats rows, their
    markers and what they leave empty, when the instant's inflight file is gone."""
    if not spec.inflight_file:
        return
    rows = [r for r in rows if r.get("io_type") != REFUSED]
    written = [
        posixpath.join(spec.partition_dir(r["partition_path"] or ""), name)
        for r in rows
        for name in written_files(r)
    ]
    if not written:
        return
    instant = parse_instant_file(posixpath.basename(spec.inflight_file))
    assert instant is not None, spec.inflight_file
    if spec.storage.exists(spec.inflight_file):
        _undo_if_committed_without(spec, instant, written)
        return
    if not TableContext.exists_at(spec.storage, spec.base_path):
        _undo_in_removed_table(spec, instant, written)
        raise CommitConflictError(
            f"write {instant.time} was aborted and its new table removed while this task ran; "
            "its files were removed"
        )
    ctx = TableContext.open_at(spec.storage, spec.base_path)
    if undo_if_aborted(ctx, instant, written):
        raise CommitConflictError(
            f"write {instant.time} was aborted while this task ran; its files were removed"
        )


def _completed(spec: WriteTaskSpec, instant: Instant) -> Instant | None:
    """The completed instant of `instant` if its file exists: one `exists` on layout 1, one
    listing of `.hoodie/timeline/` on layout 2 (the file name carries the completion time)."""
    completed = instant.with_state(State.COMPLETED)
    folder = posixpath.dirname(spec.inflight_file)
    if posixpath.basename(folder) != LAYOUT_2_FOLDER:
        return (
            completed
            if spec.storage.exists(posixpath.join(folder, instant_file_name(completed)))
            else None
        )
    for status in spec.storage.list_dir(folder):
        parsed = parse_instant_file(status.name)
        if (
            parsed is not None
            and parsed.is_completed
            and parsed.time == instant.time
            and parsed.action is completed.action
        ):
            return parsed
    return None


def _undo_in_removed_table(spec: WriteTaskSpec, instant: Instant, written: list[str]) -> None:
    """The failed write had created the table and removed it again (nothing was committed):
    delete this task's files, its marker folder and the folders it made anew that are empty."""
    storage, base = spec.storage, spec.base_path
    for path in written:
        storage.delete(path)
    storage.delete_dir(marker_folder(base, instant.time))
    for partition in sorted({posixpath.dirname(posixpath.relpath(p, base)) for p in written}):
        remove_partition_left_empty(storage, base, partition)
    for folder in (
        posixpath.join(base, META_FOLDER, TEMP_FOLDER),
        posixpath.join(base, META_FOLDER),
    ):
        if storage.exists(folder) and not storage.list_dir(folder):
            storage.delete_dir(folder)


def _undo_if_committed_without(spec: WriteTaskSpec, instant: Instant, written: list[str]) -> None:
    """A task attempt checking after its write completed lost to another attempt of the same
    task (a speculative copy, a stage retry's zombie): the commit names the winner's files, not
    this attempt's. Remove those (Hudi keeps the inflight file of a completed instant, so the
    check above does not see it). A winner never gets here: it checked before the job ended."""
    completed = _completed(spec, instant)
    if completed is None:
        return
    ctx = TableContext.open_at(spec.storage, spec.base_path)
    committed: set[str] = set()
    for stat in ctx.active.commit_metadata(completed).write_stats():
        committed.update(ctx.path(p) for p in (stat.path, *(stat.cdc_stats or ())) if p)
    extra = [path for path in written if path not in committed]
    for path in extra:
        spec.storage.delete(path)
    if extra:
        raise CommitConflictError(
            f"write {instant.time} completed without this task attempt; its files were removed"
        )
