"""A write task that finishes after its write was aborted removes its own files (`undo_if_aborted`,
and `late_tasks` around the write bodies of `pyhudi.write` and the services): Spark fails a job,
or calls a data source's abort, without waiting for the tasks that are still running."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator

import pyarrow as pa
import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.codec.file_names import base_file_name
from pyhudi.codec.schema import with_meta_fields
from pyhudi.exceptions import CommitConflictError
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import refused_row, stats_table
from pyhudi.model.instant import Action, Instant, State
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.late_tasks import settled_batches, settled_groups, undo_late_rows
from pyhudi.writer.transaction import undo_if_aborted


def _late_write(tmp_path):  # type: ignore[no-untyped-def]
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("old", "f1"))  # an existing partition with a committed file
    time = tb.write(Base("new", "f2"), Base("old", "f3"), complete=False)
    instant = Instant(time, Action.COMMIT, State.INFLIGHT)
    written = sorted(str(tb.file(name)) for name in tb.data_files() if "f1" not in name)
    return tb, instant, written


def test_a_task_of_a_live_write_keeps_its_files(tmp_path):
    tb, instant, written = _late_write(tmp_path)
    assert not undo_if_aborted(tb.ctx, instant, written)
    assert all(tb.file(name).exists() for name in tb.data_files())


def test_a_task_finishing_after_the_abort_removes_its_files_markers_and_new_partition(tmp_path):
    tb, instant, written = _late_write(tmp_path)
    committed = {name for name in tb.data_files() if "f1" in name}
    tb.ctx.active.delete_pending_files(instant)  # what the abort did while the task ran
    assert undo_if_aborted(tb.ctx, instant, written)
    assert set(tb.data_files()) == committed
    assert not (tmp_path / "t" / "new").exists()  # the partition only this write made
    assert (tmp_path / "t" / "old" / ".hoodie_partition_metadata").exists()
    assert not os.path.exists(tb.ctx.marker_folder(instant.time))


def _task_spec(tb: TimelineBuilder, inflight: Instant) -> WriteTaskSpec:
    """The spec of a write task of `inflight`, checking its inflight file."""
    cfg = resolve_write_config({"hoodie.table.name": "t"}, None)
    schema = with_meta_fields(pa.schema([pa.field("v", pa.float64())]))
    return WriteTaskSpec(
        tb.ctx.storage,
        tb.ctx.base_path,
        inflight.time,
        schema,
        cfg.sizing,
        cfg.bloom,
        inflight_file=tb.ctx.active.instant_path(inflight),
    )


def _late_task(tmp_path):  # type: ignore[no-untyped-def]
    """A merge-on-read write left inflight: a new base file in a new partition and a log file
    appended to a committed slice, with a write task body naming both in its stats rows."""
    tb = TimelineBuilder.create(tmp_path / "t", "MERGE_ON_READ")
    tb.write(Base("old", "f1"))
    time = tb.write(Base("new", "f2"), Log("old", "f1"), complete=False)
    instant = Instant(time, Action.DELTA_COMMIT, State.INFLIGHT)
    spec = _task_spec(tb, instant)
    rows = [
        {"partition_path": posixpath.dirname(f), "file_name": posixpath.basename(f), "io_type": t}
        for f, t in [
            (tb.slice_files("new", "f2", time)[0], "CREATE"),
            (
                tb.slice_files("old", "f1", tb.ctx.active.timeline.commits().times()[0])[-1],
                "APPEND",
            ),
        ]
    ]
    rows.append(refused_row("bad"))

    def body(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        list(batches)
        yield from stats_table(rows).to_batches()

    return tb, instant, spec, body


def test_a_task_body_of_a_live_write_returns_its_stats(tmp_path):
    tb, _, spec, body = _late_task(tmp_path)
    files = tb.data_files()
    out = pa.Table.from_batches(list(settled_batches(spec, body)(iter([]))))
    assert out.num_rows == 3
    assert settled_groups(spec, lambda group: out)(pa.table({"x": [1]})) is out
    assert tb.data_files() == files and len(files) == 3


def test_a_task_body_finishing_after_the_abort_removes_its_base_and_log_files(tmp_path):
    """What `test_recovery.test_a_failed_load_leaves_no_file_behind` shows with real tasks."""
    tb, instant, spec, body = _late_task(tmp_path)
    committed = {name for name in tb.data_files() if name.startswith("old/f1_")}
    tb.ctx.active.delete_pending_files(instant)  # what the abort did while the task ran
    with pytest.raises(CommitConflictError, match="aborted while this task ran"):
        list(settled_batches(spec, body)(iter([])))
    assert tb.data_files() == committed
    assert not (tmp_path / "t" / "new").exists()
    assert not os.path.exists(tb.ctx.marker_folder(instant.time))  # the APPEND marker too


def test_an_attempt_finishing_after_the_commit_without_it_removes_its_files(tmp_path):
    """A losing attempt of a task (a speculative copy Spark killed, a zombie of a retried stage)
    can close its file after the write completed: the commit names the winner's file, and the
    instant's inflight file is still there (Hudi keeps it). The loser's copy must not stay as a
    second base file of the committed slice."""
    tb = TimelineBuilder.create(tmp_path / "t")
    time = tb.write(Base("p", "f1"))
    winner = tb.slice_files("p", "f1", time)[0]
    loser = f"p/{base_file_name('f1', '0-9-99', time)}"
    tb.file(loser).write_bytes(b"PAR1 the losing attempt")
    instant = Instant(time, Action.COMMIT, State.INFLIGHT)
    spec = _task_spec(tb, instant)

    def row(relative: str) -> dict:
        return {
            "partition_path": "p",
            "file_name": posixpath.basename(relative),
            "io_type": "CREATE",
        }

    undo_late_rows(spec, [row(winner)])  # the winner's own check never gets here, but is harmless
    assert tb.data_files() == {winner, loser}
    with pytest.raises(CommitConflictError, match="completed without this task attempt"):
        undo_late_rows(spec, [row(loser)])
    assert tb.data_files() == {winner}
