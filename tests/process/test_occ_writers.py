"""Many writers, one table: real writer processes, each with its own local Spark, at the same time.

With OCC and FileSystemBasedLockProvider every write that returned success is fully visible to
hudi-rs and pyhudi, every failure is a `WriteConflictError`, nothing is duplicated. Without OCC a
second writer fails fast with an error naming the OCC options, and nothing that succeeded is lost.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import (
    SparkProcess,
    StepResult,
    expected_rows,
    meet,
    row_spec,
    rows_frame,
)
from tests.process.checks import OCC, State, apply_writes, table_state, timeline_summary

import pyhudi
from pyhudi.config.concurrency import CONCURRENCY_MODE
from pyhudi.table.context import TableContext

pytestmark = [pytest.mark.process, pytest.mark.spark]

ROUNDS = 3  # upserts per writer
ROWS = 1000  # rows per upsert
SEED = row_spec(0, 300, tag=1)  # 100 keys in each of sf, chennai, sao_paulo
UPSERT = {"hoodie.datasource.write.operation": "upsert"}
WRITERS = ("w0", "w1")


def _new_keys(cities: list[str]) -> Callable[[int, int], dict[str, Any]]:
    return lambda w, k: row_spec(
        10_000 + (w * ROUNDS + k) * ROWS, ROWS, tag=10 + 10 * w + k, cities=cities
    )


#: scenario -> (options, rows of writer w's k-th upsert)
SCENARIOS: dict[str, tuple[dict[str, str], Callable[[int, int], dict[str, Any]]]] = {
    # each writer its own new partitions: disjoint file groups
    "disjoint_partitions": (
        OCC,
        lambda w, k: _new_keys([f"w{w}_a", f"w{w}_b"])(w, k),
    ),
    # new keys into one partition: small-file handling packs inserts into the same file group
    "disjoint_keys_one_partition": (OCC, _new_keys(["sf"])),
    # both writers update every seed key: every pair of concurrent writes overlaps
    "overlapping_file_groups": (
        OCC,
        lambda w, k: row_spec(0, 300, tag=10 + 10 * w + k),
    ),
    # no OCC (Hudi's single-writer default): disjoint partitions, so any loss is the framework's
    "single_writer_disjoint_partitions": (
        {},
        lambda w, k: _new_keys([f"w{w}_a", f"w{w}_b"])(w, k),
    ),
}

Outcome = tuple[dict[str, Any], StepResult]


def _options(scenario: str) -> dict[str, str]:
    return {**trips_options(scenario), **SCENARIOS[scenario][0], **UPSERT}


@pytest.fixture(scope="module")
def two_writers(spark, tmp_path_factory) -> dict[str, tuple[Path, list[Outcome]]]:  # type: ignore[no-untyped-def]
    """Two processes run every scenario: both start each one together, 3 upserts each."""
    root = tmp_path_factory.mktemp("two-writers")
    for scenario in SCENARIOS:
        pyhudi.write(rows_frame(spark, SEED), str(root / scenario), _options(scenario))
    steps: dict[str, list[dict[str, Any]]] = {}
    for w, me in enumerate(WRITERS):
        peers = [p for p in WRITERS if p != me]
        steps[me] = []
        for scenario, (_, rows) in SCENARIOS.items():
            steps[me] += meet(root, scenario, me, peers)
            steps[me] += [
                {
                    "op": "write",
                    "path": str(root / scenario),
                    "options": _options(scenario),
                    "rows": rows(w, k),
                }
                for k in range(ROUNDS)
            ]
    processes = [SparkProcess(steps[me], root, me).start() for me in WRITERS]
    try:
        results = [p.wait(timeout_s=1200) for p in processes]
    finally:
        for process in processes:
            process.kill()
    outcomes: dict[str, tuple[Path, list[Outcome]]] = {}
    for index, scenario in enumerate(SCENARIOS):
        rows = SCENARIOS[scenario][1]
        outcomes[scenario] = (
            root / scenario,
            [
                (rows(w, k), results[w][index * ROUNDS + k])
                for w in range(len(WRITERS))
                for k in range(ROUNDS)
            ],
        )
    return outcomes


def _expected(outcomes: list[Outcome]) -> State:
    """Seed, then every successful write in instant order (later commits win: commit-time order)."""
    done = sorted((r.instant or "", spec) for spec, r in outcomes if r.ok)
    return apply_writes(expected_rows(SEED), [expected_rows(spec) for _, spec in done])


def _pending(path: Path) -> list[str]:
    return [str(i) for i in pyhudi.HudiTable(str(path)).timeline if not i.is_completed]


def _check(spark, path: Path, outcomes: list[Outcome]) -> tuple[int, list[StepResult]]:  # type: ignore[no-untyped-def]
    successes = [r for _, r in outcomes if r.ok]
    failures = [r for _, r in outcomes if not r.ok]
    # the metadata table (Hudi's default: on) kept exact by every writer: `table_state` validates it
    assert TableContext.open(str(path)).config.metadata_partitions == ("files",)
    assert table_state(spark, path) == _expected(outcomes), timeline_summary(path)
    assert len({r.instant for r in successes}) == len(successes)
    return len(successes), failures


def test_two_writers_on_disjoint_partitions_under_occ_all_commit(spark, two_writers):
    path, outcomes = two_writers["disjoint_partitions"]
    successes, failures = _check(spark, path, outcomes)
    assert not failures, [f"{r.error}: {r.message}" for r in failures]
    assert successes == 2 * ROUNDS and not _pending(path)


@pytest.mark.parametrize("scenario", ["disjoint_keys_one_partition", "overlapping_file_groups"])
def test_two_writers_on_shared_file_groups_under_occ_lose_nothing_and_raise_every_conflict(
    spark, two_writers, scenario
):  # type: ignore[no-untyped-def]
    path, outcomes = two_writers[scenario]
    successes, failures = _check(spark, path, outcomes)
    assert {r.error for r in failures} <= {"WriteConflictError"}, [
        f"{r.error}: {r.message}" for r in failures
    ]
    # A conflict needs a concurrent commit that won: at most one loser per winning commit.
    assert successes >= len(failures) and successes >= ROUNDS
    assert not _pending(path), "a conflicting write was not rolled back: " + timeline_summary(path)


def test_two_writers_without_occ_fail_fast_naming_the_occ_options_and_lose_nothing(
    spark, two_writers
):  # type: ignore[no-untyped-def]
    path, outcomes = two_writers["single_writer_disjoint_partitions"]
    successes, failures = _check(spark, path, outcomes)
    for failure in failures:
        assert CONCURRENCY_MODE.key in failure.message, failure
    # Two writers that start in the same instant may both see the other live and both step back;
    # over 3 rounds at least one write gets through.
    assert successes >= 1
    assert not _pending(path)


# ---- deterministic interleavings: a writer paused (live heartbeat) before its commit ----------
def _paused_writer(
    processes, root: Path, writes: list[dict[str, Any]]
) -> tuple[SparkProcess, Path, Path]:  # type: ignore[no-untyped-def]
    mark, release = root / "mark", root / "release"
    fault = {
        "op": "fault",
        "point": "write.after_data_files",
        "action": "pause",
        "mark": str(mark),
        "release": str(release),
    }
    return processes.start("paused", [fault, *writes]), mark, release


def _wait_lines(path: Path, count: int, process: SparkProcess, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and len(path.read_text().splitlines()) >= count):
        assert process.alive(), f"{process.name} exited early\n{process.log_tail()}"
        assert time.monotonic() < deadline, f"{path} has no {count} lines after {timeout_s}s"
        time.sleep(0.05)


def _wait_results(process: SparkProcess, count: int, timeout_s: float = 300) -> list[StepResult]:
    deadline = time.monotonic() + timeout_s
    while len(process.step_results()) < count:
        assert process.alive() or len(process.step_results()) >= count, process.log_tail()
        assert time.monotonic() < deadline, f"no {count} results after {timeout_s}s"
        time.sleep(0.05)
    return process.step_results()


def test_occ_the_write_that_commits_second_on_shared_file_groups_conflicts_and_disjoint_both_commit(
    spark, tmp_path, processes
):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    options = {**trips_options("occ"), **OCC, **UPSERT}
    pyhudi.write(rows_frame(spark, SEED), path, options)
    mine_overlap, mine_disjoint = (
        row_spec(0, 100, tag=30),
        row_spec(5000, 100, tag=31, cities=["other"]),
    )
    theirs_overlap, theirs_disjoint = row_spec(0, 100, tag=20), row_spec(100, 100, tag=21)
    writes = [
        {"op": "write", "path": path, "options": options, "rows": spec}
        for spec in (theirs_overlap, theirs_disjoint)
    ]
    paused, mark, release = _paused_writer(processes, tmp_path, writes)

    _wait_lines(mark, 1, paused)  # its data files are written; it has not committed
    pyhudi.write(rows_frame(spark, mine_overlap), path, options)
    release.touch()
    (lost,) = _wait_results(paused, 1)
    assert (lost.ok, lost.error) == (False, "WriteConflictError"), lost
    assert table_state(spark, path) == apply_writes(
        expected_rows(SEED), [expected_rows(mine_overlap)]
    )

    _wait_lines(mark, 2, paused)
    pyhudi.write(rows_frame(spark, mine_disjoint), path, options)
    release.touch()
    _, won = _wait_results(paused, 2)
    assert won.ok, won
    paused.wait()
    expected = apply_writes(
        expected_rows(SEED),
        [expected_rows(s) for s in (mine_overlap, mine_disjoint, theirs_disjoint)],
    )
    assert table_state(spark, path) == expected
    assert not _pending(Path(path)), timeline_summary(path)


def test_single_writer_a_second_writer_fails_fast_while_the_first_is_live(
    spark, tmp_path, processes
):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    options = {**trips_options("single"), **UPSERT}
    pyhudi.write(rows_frame(spark, SEED), path, options)
    theirs = row_spec(0, 100, tag=20)
    paused, mark, release = _paused_writer(
        processes, tmp_path, [{"op": "write", "path": path, "options": options, "rows": theirs}]
    )
    _wait_lines(mark, 1, paused)
    live = _pending(Path(path))
    assert len(live) == 1, timeline_summary(path)

    # It waits for the live writer up to `pyhudi.write.wait.for.active.writer.ms` (default: the
    # heartbeat expiry, minutes) before it fails: two seconds here.
    second = {**options, "pyhudi.write.wait.for.active.writer.ms": "2000"}
    began = time.monotonic()
    with pytest.raises(pyhudi.HudiError, match=re.escape(CONCURRENCY_MODE.key)):
        pyhudi.write(rows_frame(spark, row_spec(5000, 10, tag=30, cities=["other"])), path, second)
    assert time.monotonic() - began < 60
    assert _pending(Path(path)) == live, "the live write was touched: " + timeline_summary(path)
    assert table_state(spark, path) == expected_rows(SEED)

    release.touch()
    (done,) = _wait_results(paused, 1)
    assert done.ok, done
    paused.wait()
    assert table_state(spark, path) == apply_writes(expected_rows(SEED), [expected_rows(theirs)])
    assert not _pending(Path(path))
