"""SIGKILL between the metadata table's deltacommit and the data instant's completion, in a real
writer process: the table validates clean and reads as before (the metadata deltacommit of a data
instant that never completed is ignored); the next write rolls the data instant back and discards
the metadata deltacommit; a re-run compaction writes its metadata deltacommit once."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.oracle import rows
from tests.helpers.processes import SparkProcess, expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    HEARTBEAT_EXPIRY_S,
    apply_writes,
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


def _write(spark, path: Path, options: dict[str, str], operation: str, spec):  # type: ignore[no-untyped-def]
    frame = rows_frame(spark, spec)
    return pyhudi.write(
        frame, str(path), {**options, "hoodie.datasource.write.operation": operation}
    )


def _crash(work: Path, point: str, step: dict) -> None:
    mark = work / "mark"
    env = {"PYHUDI_FAULT_POINT": point, "PYHUDI_FAULT_MARK": str(mark)}
    process = SparkProcess([step], work, "crasher", env).start()
    try:
        code = process.wait_killed()
    finally:
        process.kill()
    assert code == -9 and mark.exists(), f"{point} not reached:\n{process.log_tail()}"
    time.sleep(HEARTBEAT_EXPIRY_S + 0.5)


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


@pytest.mark.parametrize("options", [COW, MOR], ids=["cow", "mor"])
def test_write_killed_after_the_metadata_commit_is_invisible_and_rolled_back(
    spark, tmp_path, options
):
    path = tmp_path / "table"
    _write(spark, path, options, "insert", row_spec(0, 200, tag=1))
    _write(spark, path, options, "insert", row_spec(200, 200, tag=2))
    before = _consistent(spark, path)
    crashed = row_spec(100, 200, tag=5)
    step = {
        "op": "write",
        "path": str(path),
        "options": {**options, "hoodie.datasource.write.operation": "upsert"},
        "rows": crashed,
    }
    _crash(tmp_path / "work", "write.after_metadata_commit", step)

    pending = [i.time for i in TableContext.open(str(path)).active.timeline.pending()]
    assert len(pending) == 1 and (pending[0], "completed") in _mdt_instants(path)
    assert _consistent(spark, path) == before  # the metadata block of the dead write is ignored

    recovery = row_spec(500, 50, tag=7)
    result = _write(spark, path, options, "upsert", recovery)
    assert list(result.rolled_back) == pending
    assert pending[0] not in {t for t, _ in _mdt_instants(path)}
    assert _consistent(spark, path) == apply_writes(before, [expected_rows(recovery)])


def test_compaction_killed_after_the_metadata_commit_reruns_with_one_metadata_commit(
    spark, tmp_path
):
    path = tmp_path / "mor"
    _write(spark, path, MOR, "insert", row_spec(0, 200, tag=1))
    _write(spark, path, MOR, "upsert", row_spec(0, 100, tag=3))
    before = _consistent(spark, path)
    template = tmp_path / "template"
    shutil.copytree(path, template)
    step = {"op": "compaction", "path": str(path), "options": MOR}
    _crash(tmp_path / "work", "compaction.after_metadata_commit", step)

    ctx = TableContext.open(str(path))
    (compaction,) = [i.time for i in ctx.active.timeline.pending()]
    assert (compaction, "completed") in _mdt_instants(path)
    assert _consistent(spark, path) == before

    (outcome,) = pyhudi.HudiTable(str(path)).compaction.run(spark, MOR)
    assert outcome.instant_time == compaction
    assert [s for t, s in _mdt_instants(path) if t == compaction] == ["completed"]
    assert _consistent(spark, path) == before
