"""A compaction or clustering plan being executed by another process is never reset (no Spark)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.codec.heartbeat import encode_owner
from pyhudi.exceptions import WriteConflictError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.services import common
from pyhudi.services.common import begin_execution, reset_to_requested
from pyhudi.table.process_owner import this_process

FAST = {
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    "hoodie.client.heartbeat.tolerable.misses": "2",
}
NO_WAIT = {**FAST, "pyhudi.write.wait.for.active.writer.ms": "0"}


def _table_with_pending_compaction(root: Path) -> tuple[TimelineBuilder, Instant]:
    tb = TimelineBuilder.create(root, "MERGE_ON_READ")
    tb.write(Base("p=1", "a"))
    tb.write(Log("p=1", "a"))
    time = tb.compaction(("p=1", "a"), execute=False)
    return tb, Instant(time, Action.COMPACTION, State.REQUESTED)


def test_plan_running_elsewhere_is_refused_and_left_alone(tmp_path):
    tb, requested = _table_with_pending_compaction(tmp_path)
    inflight = tb.ctx.active.transition_to_inflight(requested)  # another process runs it
    tb.heartbeat(inflight.time, age_seconds=0.5)
    marker_dir = Path(tb.ctx.marker_folder(inflight.time))
    marker_dir.mkdir(parents=True)
    with pytest.raises(WriteConflictError, match=f"{inflight.time} is being executed by another"):
        begin_execution(tb.ctx, inflight, NO_WAIT)
    assert (Path(tb.ctx.meta_path) / f"{inflight.time}.compaction.inflight").exists()
    assert marker_dir.exists()


def test_plan_of_a_crashed_run_is_reset_and_executed_again(tmp_path, monkeypatch):
    # The hand-built table's base files are placeholders: take the schema as empty.
    monkeypatch.setattr(common, "table_arrow_schema", lambda ctx: pa.schema([]))
    tb, requested = _table_with_pending_compaction(tmp_path)
    inflight = tb.ctx.active.transition_to_inflight(requested)
    tb.heartbeat(inflight.time, age_seconds=10)  # expired: 1 s x 2 misses
    run = begin_execution(tb.ctx, inflight, FAST)
    heartbeat = Path(tb.ctx.meta_path) / ".heartbeat" / inflight.time
    try:
        assert run.inflight.state is State.INFLIGHT
        assert heartbeat.exists()  # this run beats now
        with pytest.raises(WriteConflictError):  # a second run in this process is refused too
            begin_execution(tb.ctx, run.inflight, FAST)
    finally:
        reset_to_requested(tb.ctx, run.inflight)
    assert not heartbeat.exists()
    assert not (Path(tb.ctx.meta_path) / f"{inflight.time}.compaction.inflight").exists()


def test_plan_whose_run_died_on_this_host_is_reset_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "table_arrow_schema", lambda ctx: pa.schema([]))
    tb, requested = _table_with_pending_compaction(tmp_path)
    inflight = tb.ctx.active.transition_to_inflight(requested)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # the compaction job that ran it was SIGKILLed; its heartbeat is fresh
    dead = dataclasses.replace(this_process(), pid=child.pid)
    if dead.start_ticks is None or not dead.boot_id:
        pytest.skip("no /proc here: no owner is provably dead")
    tb.heartbeat(inflight.time, age_seconds=0.5).write_bytes(encode_owner(dead))
    run = begin_execution(tb.ctx, inflight, NO_WAIT)  # no wait allowed: reset at once
    try:
        assert run.inflight.state is State.INFLIGHT
    finally:
        reset_to_requested(tb.ctx, run.inflight)
