"""A writer process and a separate table-service process on one table under OCC, at the same time
(Hudi's async services in their own job): compaction + clean on a merge-on-read table, clustering
+ clean on a copy-on-write table. Every write that returned success is visible to both readers,
every failure is a conflict, and the services' work is committed or cleanly refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import SparkProcess, StepResult, expected_rows, meet, row_spec
from tests.process.checks import OCC, State, apply_writes, table_state, timeline_summary

import pyhudi
from pyhudi.model.instant import Action

pytestmark = [pytest.mark.process, pytest.mark.spark]

ROUNDS = 3
MOR = {
    **trips_options("svc_mor"),
    **OCC,
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}
COW = {**trips_options("svc_cow"), **OCC, "hoodie.parquet.small.file.limit": "0"}
#: Seeds, written by the writer process before the services start: logs to compact, small files.
MOR_SEED = [("insert", row_spec(0, 300, tag=1)), ("upsert", row_spec(0, 150, tag=2))]
COW_SEED = [("insert", row_spec(1000 + 100 * i, 100, tag=3 + i, cities=["sf"])) for i in range(3)]
#: The concurrent upserts: updates of keys in the file groups the services rewrite, and new keys.
MOR_UPSERTS = [row_spec(150 * k, 300, tag=10 + k) for k in range(ROUNDS)]
COW_UPSERTS = [row_spec(1000 + 120 * k, 100, tag=20 + k, cities=["sf"]) for k in range(ROUNDS)]


def _write(path: Path, options: dict[str, str], operation: str, spec: dict) -> dict[str, Any]:
    return {
        "op": "write",
        "path": str(path),
        "options": {**options, "hoodie.datasource.write.operation": operation},
        "rows": spec,
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("services")
    mor, cow = root / "mor", root / "cow"
    writer: list[dict[str, Any]] = [_write(mor, MOR, op, spec) for op, spec in MOR_SEED]
    writer += [_write(cow, COW, op, spec) for op, spec in COW_SEED]
    writer += meet(root, "mor", "writer", ["services"])
    writer += [_write(mor, MOR, "upsert", spec) for spec in MOR_UPSERTS]
    writer += meet(root, "cow", "writer", ["services"])
    writer += [_write(cow, COW, "upsert", spec) for spec in COW_UPSERTS]
    services: list[dict[str, Any]] = meet(root, "mor", "services", ["writer"])
    services += [
        {"op": "compaction", "path": str(mor), "options": MOR},
        {"op": "compaction", "path": str(mor), "options": MOR},
        {"op": "clean", "path": str(mor), "options": MOR},
    ]
    services += meet(root, "cow", "services", ["writer"])
    services += [
        {"op": "clustering", "path": str(cow), "options": COW},
        {"op": "clean", "path": str(cow), "options": COW},
    ]
    processes = [
        SparkProcess(writer, root, "writer").start(),
        SparkProcess(services, root, "services").start(),
    ]
    try:
        written, serviced = (p.wait(timeout_s=1200) for p in processes)
    finally:
        for process in processes:
            process.kill()
    seeds = len(MOR_SEED) + len(COW_SEED)
    assert all(r.ok for r in written[:seeds]), written[:seeds]
    return {
        "mor": (mor, list(zip(MOR_UPSERTS, written[seeds : seeds + ROUNDS])), serviced[:3]),
        "cow": (cow, list(zip(COW_UPSERTS, written[seeds + ROUNDS :])), serviced[3:]),
    }


def _expected(seed: list[tuple[str, dict]], outcomes: list[tuple[dict, StepResult]]) -> State:
    done = sorted((r.instant or "", spec) for spec, r in outcomes if r.ok)
    return apply_writes(
        apply_writes({}, [expected_rows(s) for _, s in seed]),
        [expected_rows(spec) for _, spec in done],
    )


def _failures(results: list[StepResult]) -> list[str]:
    return [f"{r.op} {r.error}: {r.message}" for r in results if not r.ok]


def _completed(path: Path, action: Action) -> set[str]:
    table = pyhudi.HudiTable(str(path))
    return {i.time for i in table.timeline if i.action is action and i.is_completed}


def test_compaction_and_clean_in_a_separate_process_while_a_writer_upserts(spark, runs):  # type: ignore[no-untyped-def]
    path, outcomes, services = runs["mor"]
    writes = [r for _, r in outcomes]
    assert {r.error for r in writes + services if not r.ok} <= {"WriteConflictError"}, _failures(
        writes + services
    )
    assert sum(r.ok for r in writes) >= 1
    compacted = {t for r in services[:2] if r.ok for t in r.instants}
    assert compacted, f"no compaction ran: {_failures(services)} {timeline_summary(path)}"
    assert compacted <= _completed(path, Action.COMMIT), timeline_summary(path)
    assert services[2].ok, services[2]  # the clean
    expected = _expected(MOR_SEED, outcomes)
    assert table_state(spark, path) == expected
    # What the service job left pending, this process finishes; the data does not change.
    pyhudi.HudiTable(str(path)).compaction.run(spark, MOR)
    assert table_state(spark, path) == expected


def test_clustering_and_clean_in_a_separate_process_while_a_writer_upserts(spark, runs):  # type: ignore[no-untyped-def]
    path, outcomes, services = runs["cow"]
    writes = [r for _, r in outcomes]
    # An update of a file group under pending clustering is refused (Hudi's default update
    # strategy) or loses the conflict; a clustering that lost to a write conflicts.
    allowed = {"WriteConflictError", "PendingServiceError"}
    assert {r.error for r in writes + services if not r.ok} <= allowed, _failures(writes + services)
    clustering, clean = services
    assert clean.ok, clean
    if clustering.ok:
        assert set(clustering.instants) <= _completed(path, Action.REPLACE_COMMIT)
    expected = _expected(COW_SEED, outcomes)
    assert table_state(spark, path) == expected
    pyhudi.HudiTable(str(path)).clustering.run(spark, COW)
    assert table_state(spark, path) == expected
    pending = [str(i) for i in pyhudi.HudiTable(str(path)).timeline if not i.is_completed]
    assert not pending, timeline_summary(path)
