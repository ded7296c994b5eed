"""SIGKILL between the metadata table's deltacommit and the data instant's completion, in a real
writer process (a COW upsert, a MOR upsert and a compaction, each on its own table, stopped at once
in one process): the table validates clean and reads as before (the metadata deltacommit of a data
instant that never completed is ignored); the next write rolls the data instant back and discards
the metadata deltacommit; a re-run compaction writes its metadata deltacommit once."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.oracle import rows
from tests.helpers.processes import SparkProcess, expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    HEARTBEAT_EXPIRY_S,
    apply_writes,
    fault_marks,
    table_state,
    timeline_summary,
)

import pyhudi
from pyhudi.metadata import MetadataTable, validate
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

pytestmark = [pytest.mark.process, pytest.mark.spark]

COW = {
    **trips_options("mdt_crash"),
    **FAST_HEARTBEAT,
    "hoodie.metadata.enable": "true",
    "hoodie.parquet.small.file.limit": "0",
}
MOR = {**COW, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
CRASHED = row_spec(100, 200, tag=5)


def _write(spark, path: Path, options: dict[str, str], operation: str, spec):  # type: ignore[no-untyped-def]
    frame = rows_frame(spark, spec)
    return pyhudi.write(
        frame, str(path), {**options, "hoodie.datasource.write.operation": operation}
    )


WRITE_POINT, COMPACTION_POINT = "write.after_metadata_commit", "compaction.after_metadata_commit"
#: Each part of the crash process and the point it stops at.
PARTS = {"cow": WRITE_POINT, "mor": WRITE_POINT, "compaction": COMPACTION_POINT}
CRASH_DEADLINE_S = 300


@dataclass(frozen=True)
class Crashed:
    path: Path
    options: dict[str, str]
    before: dict


@pytest.fixture(scope="module")
def crashed(spark, tmp_path_factory) -> dict[str, Crashed]:  # type: ignore[no-untyped-def]
    """Two upserts (COW, MOR) and a compaction, each on its own table, run at once in one writer
    process that stops each at its metadata-commit point (`hang`) and is SIGKILLed once all three
    are there: one JVM start instead of three."""
    root = tmp_path_factory.mktemp("mdt-crash")
    tables: dict[str, Crashed] = {}
    steps = []
    for name, options in (("cow", COW), ("mor", MOR)):
        path = root / name
        _write(spark, path, options, "insert", row_spec(0, 200, tag=1))
        _write(spark, path, options, "insert", row_spec(200, 200, tag=2))
        tables[name] = Crashed(path, options, _consistent(spark, path))
        upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
        steps.append({"op": "write", "path": str(path), "options": upsert, "rows": CRASHED})
    path = root / "compaction"
    _write(spark, path, MOR, "insert", row_spec(0, 200, tag=1))
    _write(spark, path, MOR, "upsert", row_spec(0, 100, tag=3))
    tables["compaction"] = Crashed(path, MOR, _consistent(spark, path))
    steps.append({"op": "compaction", "path": str(path), "options": MOR})
    work, wanted = root / "work", Counter(PARTS.values())
    mark = work / "mark"
    env = {
        "PYHUDI_FAULT_POINT": ",".join(sorted(wanted)),
        "PYHUDI_FAULT_MARK": str(mark),
        "PYHUDI_FAULT_ACTION": "hang",
    }
    process = SparkProcess([{"op": "together", "steps": steps}], work, "crasher", env).start()
    deadline = time.monotonic() + CRASH_DEADLINE_S
    try:
        while fault_marks(mark) != wanted and process.alive() and time.monotonic() < deadline:
            if any(r.op == "together" for r in process.results()):
                break  # a part ended: it never reached its point
            time.sleep(0.1)
    finally:
        process.kill()  # also reaps the group (the JVM outlives a SIGKILLed driver)
    assert fault_marks(mark) == wanted, f"{fault_marks(mark)} reached:\n{process.log_tail()}"
    time.sleep(HEARTBEAT_EXPIRY_S + 0.5)
    return tables


def _mdt_instants(path: Path) -> list[tuple[str, str]]:
    mdt = MetadataTable.open(TableContext.open(str(path))).table
    return [
        (i.time, i.state.value.lower())
        for i in mdt.active.timeline
        if i.action is Action.DELTA_COMMIT
    ]


def _consistent(spark, path: Path) -> dict:  # type: ignore[no-untyped-def]
    report = validate(str(path))
    assert report.differences == (), f"{report.differences}\n{timeline_summary(path)}"
    columns = ["uuid", "city", "fare"]
    listed = rows(pyhudi.read(spark, str(path)).toArrow(), key="uuid", columns=columns)
    plain = pyhudi.read(spark, str(path), {"hoodie.metadata.enable": "false"}).toArrow()
    assert listed == rows(plain, key="uuid", columns=columns)
    return table_state(spark, path)


@pytest.mark.parametrize("name", ["cow", "mor"])
def test_write_killed_after_the_metadata_commit_is_invisible_and_rolled_back(spark, crashed, name):
    path, options, before = crashed[name].path, crashed[name].options, crashed[name].before
    pending = [i.time for i in TableContext.open(str(path)).active.timeline.pending()]
    assert len(pending) == 1 and (pending[0], "completed") in _mdt_instants(path)
    assert _consistent(spark, path) == before  # the metadata block of the dead write is ignored

    recovery = row_spec(500, 50, tag=7)
    result = _write(spark, path, options, "upsert", recovery)
    assert list(result.rolled_back) == pending
    assert pending[0] not in {t for t, _ in _mdt_instants(path)}
    assert _consistent(spark, path) == apply_writes(before, [expected_rows(recovery)])


def test_compaction_killed_after_the_metadata_commit_reruns_with_one_metadata_commit(
    spark, crashed
):
    path, before = crashed["compaction"].path, crashed["compaction"].before
    ctx = TableContext.open(str(path))
    (compaction,) = [i.time for i in ctx.active.timeline.pending()]
    assert (compaction, "completed") in _mdt_instants(path)
    assert _consistent(spark, path) == before

    (outcome,) = pyhudi.HudiTable(str(path)).compaction.run(spark, MOR)
    assert outcome.instant_time == compaction
    assert [s for t, s in _mdt_instants(path) if t == compaction] == ["completed"]
    assert _consistent(spark, path) == before
