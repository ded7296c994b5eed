"""A write task that finishes after its write was aborted removes its own files (`undo_if_aborted`):
Spark calls the data source's abort without waiting for tasks that are still running."""

from __future__ import annotations

import os

from tests.helpers.timeline_builder import Base, TimelineBuilder

from pyhudi.model.instant import Action, Instant, State
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
