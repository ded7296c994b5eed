"""SIGKILL at every fault point of a write and of each table service, in a real writer process.

For every point: afterwards hudi-rs and pyhudi read the state before the operation (or after it,
when the kill came after the commit), never half of it; the next run of the same operation
recovers (rolls back or completes what the dead process left) at once, without waiting for the
dead process's heartbeat to expire (its heartbeat names a process of this machine that is gone);
after the next clean no data file is left that the timeline does not reference.

The crashes run first, in parallel (a bounded number of Spark processes), in one module fixture;
each parametrized test then checks and recovers its own copy of the table. The points of a
`SHARED` group crash in one process: its operations (a write, a compaction, a clustering) run at
once, each on its own copy, each stops at its point (`hang`), and the process is SIGKILLed once
all are there (5 Spark processes instead of 13).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import SparkProcess, expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    State,
    apply_writes,
    assert_no_orphans,
    fault_marks,
    table_state,
    timeline_summary,
)

import pyhudi
from pyhudi.model.instant import Action

pytestmark = [pytest.mark.process, pytest.mark.spark]

MAX_PARALLEL = 3
WRITE_POINTS = [
    "write.after_requested",
    "write.after_inflight",
    "write.during_data_files",
    "write.after_data_files",
    "write.after_commit",
]
SERVICE_POINTS = [
    f"{service}.{step}"
    for service in ("compaction", "clustering", "clean")
    for step in ("after_requested", "after_inflight", "after_data_files", "after_commit")
]
#: Points inside Spark tasks: the Python worker hangs there and the test kills the driver's group
#: (killing the worker alone only fails one task attempt, which Spark retries). Such a point
#: crashes alone: its hung task holds the process's one core.
EXECUTOR_POINTS = {"write.during_data_files"}
#: Points whose crashes share one process: driver-side points of different operations (an
#: operation stops at the first point named that it reaches), each on its own table.
SHARED = [
    (f"write.{step}", f"compaction.{step}", f"clustering.{step}")
    for step in ("after_requested", "after_inflight", "after_data_files", "after_commit")
]
#: A crash process that has not reached its points by then is killed (and its tests fail).
CRASH_DEADLINE_S = 300

COW = {
    **trips_options("crash_cow"),
    **FAST_HEARTBEAT,
    "hoodie.parquet.small.file.limit": "0",  # every insert makes new (small) file groups
}
MOR = {
    **COW,
    "hoodie.table.name": "crash_mor",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}
#: The clean a crash interrupts, and the clean after recovery: only the newest slice is kept.
CLEAN = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}
#: The recovery's options: a heartbeat that expires after an hour and no wait for a live-looking
#: writer, so a recovery succeeds only by seeing that the crashed process died (as a scheduler's
#: retry of a SIGKILLed job on the same machine must), never by the heartbeat's expiry.
RECOVER_AT_ONCE = {
    "hoodie.client.heartbeat.interval_in_ms": "3600000",
    "pyhudi.write.wait.for.active.writer.ms": "0",
}
CRASHED_UPSERT = row_spec(450, 300, tag=5)  # 150 updates of existing keys, 150 new keys
RECOVERY_UPSERT = row_spec(900, 60, tag=7)


def _op(operation: str) -> dict[str, str]:
    return {"hoodie.datasource.write.operation": operation}


@dataclass(frozen=True)
class Template:
    path: Path
    options: dict[str, str]
    state: State


@dataclass(frozen=True)
class Crash:
    point: str
    path: Path
    options: dict[str, str]
    before: State
    returncode: int | None
    marked: bool
    log: str


def _template(spark, root: Path, options: dict[str, str], writes) -> Template:  # type: ignore[no-untyped-def]
    path = root / options["hoodie.table.name"]
    state: State = {}
    for operation, spec in writes:
        pyhudi.write(rows_frame(spark, spec), str(path), {**options, **_op(operation)})
        state = apply_writes(state, [expected_rows(spec)])
    return Template(path, options, state)


def _crash_step(point: str, path: Path, options: dict[str, str]) -> dict:
    kind = point.split(".")[0]
    if kind == "write":
        return {
            "op": "write",
            "path": str(path),
            "options": {**options, **_op("upsert")},
            "rows": CRASHED_UPSERT,
        }
    if kind == "clean":
        return {"op": "clean", "path": str(path), "options": {**options, **CLEAN}}
    return {"op": kind, "path": str(path), "options": options}


def _groups(scenarios: list[tuple[str, Template]]) -> list[list[tuple[str, Template]]]:
    """The scenarios by process: the wanted points of each `SHARED` group together, the rest
    alone."""
    by_point = dict(scenarios)
    groups = [[(p, by_point[p]) for p in shared if p in by_point] for shared in SHARED]
    groups = [group for group in groups if group]
    paired = {p for group in groups for p, _ in group}
    return groups + [[(p, t)] for p, t in scenarios if p not in paired]


def _run_crashes(scenarios: list[tuple[str, Template]], work: Path) -> dict[str, Crash]:
    """Copy the template per point; run each group's operations in a child with its fault points
    set; SIGKILL it at the point (`kill`), or once every point is reached (`hang`)."""
    waiting = _groups(scenarios)
    running: list[tuple[list[tuple[str, Template]], SparkProcess, Path, bool, float]] = []
    done: dict[str, Crash] = {}
    try:
        while waiting or running:
            while waiting and len(running) < MAX_PARALLEL:
                group = waiting.pop(0)
                points = [point for point, _ in group]
                folder = work / "+".join(points)
                steps = []
                for point, template in group:
                    shutil.copytree(template.path, work / point / "table")
                    steps.append(_crash_step(point, work / point / "table", template.options))
                hang = len(group) > 1 or points[0] in EXECUTOR_POINTS
                mark = folder / "mark"
                env = {
                    "PYHUDI_FAULT_POINT": ",".join(points),
                    "PYHUDI_FAULT_MARK": str(mark),
                    "PYHUDI_FAULT_ACTION": "hang" if hang else "kill",
                }
                step = steps[0] if len(steps) == 1 else {"op": "together", "steps": steps}
                process = SparkProcess([step], folder, "crasher", env).start()
                deadline = time.monotonic() + CRASH_DEADLINE_S
                running.append((group, process, mark, hang, deadline))
            for entry in list(running):
                group, process, mark, hang, deadline = entry
                reached = set(fault_marks(mark))
                all_there = hang and {point for point, _ in group} <= reached
                part_ended = any(r.op == "together" for r in process.results())  # never reached
                if all_there or part_ended or not process.alive() or time.monotonic() > deadline:
                    process.kill()  # also reaps the group (the JVM outlives a SIGKILLed driver)
                    assert process.proc is not None
                    for point, template in group:
                        done[point] = Crash(
                            point,
                            work / point / "table",
                            template.options,
                            template.state,
                            process.proc.returncode,
                            point in reached,
                            process.log_tail(),
                        )
                    running.remove(entry)
            time.sleep(0.1)
    finally:
        for _, process, _, _, _ in running:
            process.kill()
    return done


@pytest.fixture(scope="module")
def crashes(spark, tmp_path_factory, request) -> Iterator[dict[str, Crash]]:  # type: ignore[no-untyped-def]
    wanted = {  # only the points of the selected tests (`-k`, node ids)
        item.callspec.params["point"]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    }
    root = tmp_path_factory.mktemp("crash-templates")
    templates: dict[str, Template] = {}
    if wanted - {p for p in wanted if p.startswith("compaction")}:
        templates["cow"] = _template(
            spark,
            root,
            COW,
            [
                ("insert", row_spec(0, 300, tag=1)),
                ("insert", row_spec(300, 300, tag=2)),
                ("upsert", row_spec(0, 150, tag=3)),
            ],
        )
    if any(p.startswith("compaction") for p in wanted):
        templates["mor"] = _template(
            spark,
            root,
            MOR,
            [("insert", row_spec(0, 300, tag=1)), ("upsert", row_spec(0, 150, tag=3))],
        )
    scenarios = [
        (p, templates["mor" if p.startswith("compaction") else "cow"])
        for p in WRITE_POINTS + SERVICE_POINTS
        if p in wanted
    ]
    yield _run_crashes(scenarios, tmp_path_factory.mktemp("crashes"))


def _crashed(crashes: dict[str, Crash], point: str) -> Crash:
    crash = crashes[point]
    assert crash.marked and crash.returncode == -9, (
        f"{point} was never reached (exit code {crash.returncode}):\n{crash.log}"
    )
    return crash  # no waiting for the heartbeat to expire: the next run must not need it


def _pending(path: Path) -> list[str]:
    table = pyhudi.HudiTable(str(path))
    return [
        f"{i.time}.{i.action.value}.{i.state.value}" for i in table.timeline if not i.is_completed
    ]


def _finish(spark, crash: Crash, expected: State) -> None:  # type: ignore[no-untyped-def]
    """The next clean leaves no orphans; both readers see `expected`; nothing is left pending."""
    pyhudi.HudiTable(str(crash.path)).clean({**crash.options, **CLEAN})
    assert_no_orphans(crash.path)
    assert table_state(spark, crash.path) == expected
    assert not _pending(crash.path), timeline_summary(crash.path)


@pytest.mark.parametrize("point", WRITE_POINTS)
def test_write_killed_at_fault_point_is_all_or_nothing_and_the_next_write_recovers(
    spark, crashes, point
):
    crash = _crashed(crashes, point)
    committed = point == "write.after_commit"
    after = apply_writes(crash.before, [expected_rows(CRASHED_UPSERT)])
    state = table_state(spark, crash.path)
    assert state == (after if committed else crash.before), f"half a write visible after {point}"

    dead = _pending(crash.path)
    assert bool(dead) != committed, timeline_summary(crash.path)
    started = time.monotonic()
    result = pyhudi.write(
        rows_frame(spark, RECOVERY_UPSERT),
        str(crash.path),
        {**crash.options, **RECOVER_AT_ONCE, **_op("upsert")},
    )
    assert set(result.rolled_back) == {d.split(".")[0] for d in dead}
    assert time.monotonic() - started < 60  # it never waited for the heartbeat (one hour)
    _finish(spark, crash, apply_writes(state, [expected_rows(RECOVERY_UPSERT)]))


@pytest.mark.parametrize("point", SERVICE_POINTS)
def test_service_killed_at_fault_point_leaves_data_intact_and_the_next_run_completes_it(
    spark, crashes, point
):  # type: ignore[no-untyped-def]
    crash = _crashed(crashes, point)
    assert table_state(spark, crash.path) == crash.before, f"data changed by a crash at {point}"
    service = point.split(".")[0]
    table = pyhudi.HudiTable(str(crash.path))
    if service == "clean":
        table.clean({**crash.options, **CLEAN})
        action = Action.CLEAN
    else:
        getattr(table, service).run(spark, {**crash.options, **RECOVER_AT_ONCE})
        action = Action.COMMIT if service == "compaction" else Action.REPLACE_COMMIT
    table.refresh()
    done = [i for i in table.timeline if i.action is action and i.is_completed]
    assert done, (
        f"no completed {action.value} after recovering from {point}: {timeline_summary(crash.path)}"
    )
    if service == "compaction":
        assert not any(s.log_files for s in table.latest_file_slices()), (
            "logs left after compaction"
        )
    _finish(spark, crash, crash.before)
