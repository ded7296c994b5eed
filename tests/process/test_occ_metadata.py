"""OCC with a metadata table (Hudi's default, `hoodie.metadata.enable` unset): two real writer
processes, a real lock provider.

* A write that loses the conflict check fails with `WriteConflictError` before it writes its
  metadata-table deltacommit: none is left completed at its instant, the winner's data and every
  commit's `files` records are exact (`validate` clean, hudi-rs reads what pyhudi reads). Also on
  a MERGE_ON_READ table with `hoodie.index.type=RECORD_INDEX`, whose log appends return their
  record-index key changes from the tasks, relative to the keys the index saw when it tagged them:
  exact only because a write into the same file group in between is a conflict.
* A writer SIGKILLed after its metadata deltacommit, before its data commit, while the other writer
  commits (the killed write's instant earlier or later than the committed one): the table reads as
  if it never ran, validates clean, and the next write's clean (LAZY) rolls it back and its
  deltacommit goes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    HEARTBEAT_EXPIRY_S,
    OCC,
    apply_writes,
    assert_no_orphans,
    fault_marks,
    table_state,
    timeline_summary,
)

import pyhudi
from pyhudi.config.concurrency import STORAGE_LOCK
from pyhudi.metadata import MetadataTable
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

pytestmark = [pytest.mark.process, pytest.mark.spark]

SEED = row_spec(0, 300, tag=1)  # 100 keys in each of sf, chennai, sao_paulo
UPSERT = {"hoodie.datasource.write.operation": "upsert"}
#: The lease lock: a SIGKILLed holder blocks the table for two renew intervals only.
LEASE = {
    **OCC,
    "hoodie.write.lock.provider": STORAGE_LOCK,
    "hoodie.write.lock.heartbeat_interval_ms": "300",
    "hoodie.write.lock.wait_time_ms_between_retry": "100",
}


def _options(name: str, lock: dict[str, str]) -> dict[str, str]:
    return {**trips_options(name), **lock, **FAST_HEARTBEAT, **UPSERT}


def _write(spark, path: Path, options: dict[str, str], spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    return pyhudi.write(rows_frame(spark, spec), str(path), options)


def _step(path: Path, options: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    return {"op": "write", "path": str(path), "options": options, "rows": spec}


def _fault(point: str, root: Path, action: str = "pause") -> tuple[dict[str, Any], Path, Path]:
    mark, release = root / f"{point}.mark", root / f"{point}.release"
    step = {
        "op": "fault",
        "point": point,
        "action": action,
        "mark": str(mark),
        "release": str(release),
    }
    return step, mark, release


def _wait_marked(mark: Path, count: int, process, timeout_s: float = 300) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while sum(fault_marks(mark).values()) < count:
        assert process.alive(), f"{process.name} exited early\n{process.log_tail()}"
        assert time.monotonic() < deadline, f"{mark}: no {count} lines in {timeout_s}s"
        time.sleep(0.05)


def _wait_results(process, count: int, timeout_s: float = 300):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while len(process.step_results()) < count:
        assert process.alive() or len(process.step_results()) >= count, process.log_tail()
        assert time.monotonic() < deadline, f"no {count} results in {timeout_s}s"
        time.sleep(0.05)
    return process.step_results()


def _deltacommits(path: Path) -> dict[str, str]:
    """Metadata-table deltacommit time -> state (requested, inflight, completed)."""
    mdt = MetadataTable.open(TableContext.open(str(path))).table
    timeline = mdt.active.reload().timeline
    return {i.time: i.state.value.lower() for i in timeline if i.action is Action.DELTA_COMMIT}


def _data_instants(path: Path) -> tuple[set[str], set[str]]:
    """(completed, pending) instant times of the data timeline."""
    timeline = TableContext.open(str(path)).active.reload().timeline
    done = {i.time for i in timeline.completed()}
    return done, {i.time for i in timeline if i.time not in done}


def _initialisation(time: str) -> bool:
    """A metadata-only instant: `<data instant>010..` (20 digits) or `00000000000000010..`."""
    return len(time) == 20 or time.startswith("00000000000000")


def _exact(spark, path: Path) -> dict[str, tuple[str, float]]:  # type: ignore[no-untyped-def]
    """The metadata table is on, validates clean, every completed deltacommit is a data instant's
    (or an initialisation's), and hudi-rs reads what pyhudi reads (through the `files` listing)."""
    # `table_state` (below) validates the metadata table
    assert "files" in TableContext.open(str(path)).config.metadata_partitions
    done, pending = _data_instants(path)
    stray = {
        t
        for t, state in _deltacommits(path).items()
        if state == "completed" and t not in done | pending and not _initialisation(t)
    }
    assert not stray, f"completed metadata deltacommits without a data instant: {stray}"
    return table_state(spark, path)


#: Updates go to log files (no small-file merges) and are located through the record index.
RECORD_INDEX_MOR = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.index.type": "RECORD_INDEX",
}


@pytest.mark.parametrize("layout", [{}, RECORD_INDEX_MOR], ids=["cow", "mor_record_index"])
def test_occ_loser_leaves_no_metadata_commit_and_the_winners_are_exact(
    spark, tmp_path, processes, layout
):  # type: ignore[no-untyped-def]
    path = tmp_path / "t"
    options = {**_options("occ_mdt", OCC), **layout}
    _write(spark, path, options, SEED)
    if layout:
        assert "record_index" in TableContext.open(str(path)).config.metadata_partitions
    assert _exact(spark, path) == expected_rows(SEED)
    theirs_overlap, theirs_disjoint = row_spec(0, 100, tag=20), row_spec(100, 100, tag=21)
    mine_overlap = row_spec(0, 100, tag=30)
    mine_disjoint = row_spec(5000, 100, tag=31, cities=["other"])
    fault, mark, release = _fault("write.after_data_files", tmp_path)
    writes = [_step(path, options, spec) for spec in (theirs_overlap, theirs_disjoint)]
    paused = processes.start("paused", [fault, *writes])

    _wait_marked(mark, 1, paused)  # its files are written, its instant is inflight
    (loser,) = _data_instants(path)[1]
    _write(spark, path, options, mine_overlap)  # same file groups, commits first
    release.touch()
    (lost,) = _wait_results(paused, 1)
    assert (lost.ok, lost.error) == (False, "WriteConflictError"), lost
    assert loser not in _deltacommits(path), timeline_summary(path)
    assert loser not in set().union(*_data_instants(path))
    state = apply_writes(expected_rows(SEED), [expected_rows(mine_overlap)])
    assert _exact(spark, path) == state

    _wait_marked(mark, 2, paused)
    _write(spark, path, options, mine_disjoint)  # other file groups: both commit
    release.touch()
    _, won = _wait_results(paused, 2)
    assert won.ok, won
    paused.wait()
    assert _deltacommits(path)[won.instant] == "completed"
    if layout:  # the paused writer's updates went to log files
        assert list(path.glob("*/.*.log.*")), timeline_summary(path)
    writes_done = [mine_overlap, mine_disjoint, theirs_disjoint]
    assert _exact(spark, path) == apply_writes(
        expected_rows(SEED), [expected_rows(s) for s in writes_done]
    )
    assert_no_orphans(path)


@pytest.mark.parametrize("killed_first", [False, True], ids=["killed_later", "killed_earlier"])
def test_writer_killed_after_its_metadata_commit_while_the_other_commits(
    spark, tmp_path, processes, killed_first
):  # type: ignore[no-untyped-def]
    """killed_later: the survivor began first (its instant is the earlier one) and commits after
    the kill; killed_earlier: the killed write began first, the survivor commits after the kill."""
    path = tmp_path / "t"
    options = _options("occ_mdt_kill", LEASE)
    _write(spark, path, options, SEED)
    killed_rows, survivor_rows = row_spec(0, 150, tag=20), row_spec(100, 150, tag=30)
    kill, killed_mark, _ = _fault("write.after_metadata_commit", tmp_path / "k", action="kill")
    hold, survivor_mark, survivor_release = _fault("write.after_data_files", tmp_path / "s")
    (tmp_path / "k").mkdir()
    (tmp_path / "s").mkdir()

    survivor = None
    if not killed_first:
        survivor = processes.start("survivor", [hold, _step(path, options, survivor_rows)])
        _wait_marked(survivor_mark, 1, survivor)
    before = _data_instants(path)[1]
    killed = processes.start("killed", [kill, _step(path, options, killed_rows)])
    assert killed.wait_killed() == -9 and killed_mark.exists(), killed.log_tail()
    (killed_time,) = _data_instants(path)[1] - before
    assert _deltacommits(path)[killed_time] == "completed", timeline_summary(path)

    if survivor is None:
        survivor_result = _write(spark, path, options, survivor_rows)
        survivor_time = survivor_result.instant_time
    else:
        survivor_release.touch()
        (done,) = _wait_results(survivor, 1)
        assert done.ok, done
        survivor.wait()
        survivor_time = done.instant
    assert (survivor_time < killed_time) is not killed_first
    state = apply_writes(expected_rows(SEED), [expected_rows(survivor_rows)])
    assert _exact(spark, path) == state  # the killed write's deltacommit is ignored

    time.sleep(HEARTBEAT_EXPIRY_S + 0.5)
    recovery = row_spec(1000, 60, tag=40)
    _write(spark, path, options, recovery)  # its clean (LAZY) rolls the killed write back
    done, pending = _data_instants(path)
    assert killed_time not in done | pending, timeline_summary(path)
    assert killed_time not in _deltacommits(path)
    assert _exact(spark, path) == apply_writes(state, [expected_rows(recovery)])
    assert_no_orphans(path)
