"""Write tasks that outlive their write.

When one task of a write job fails, Spark fails the job and kills the stage's other tasks, but
does not wait for them: a Python worker in the middle of writing a file goes on until it next
talks to the JVM. The driver meanwhile rolls the write back. A task that created its marker
before the rollback removed the instant's pending files is found by the rollback's second
marker listing (`WriteTransaction.abort`). Every other task finds the inflight file gone when
it checks, after closing its files, and removes them itself: so no file of an aborted write
outlives it, whatever the order.

The check is one `exists` per task (per file group for `applyInArrow` bodies); an empty
`WriteTaskSpec.inflight_file` skips it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from pyhudi.codec.file_names import parse_instant_file
from pyhudi.exceptions import CommitConflictError
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import REFUSED
from pyhudi.table.context import TableContext
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
        posixpath.join(spec.partition_dir(r["partition_path"] or ""), r["file_name"])
        for r in rows
        if r.get("file_name")
    ]
    if not written or spec.storage.exists(spec.inflight_file):
        return
    instant = parse_instant_file(posixpath.basename(spec.inflight_file))
    assert instant is not None, spec.inflight_file
    ctx = TableContext.open_at(spec.storage, spec.base_path)
    if undo_if_aborted(ctx, instant, written):
        raise CommitConflictError(
            f"write {instant.time} was aborted while this task ran; its files were removed"
        )
