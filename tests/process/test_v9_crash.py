"""A table of version 9 (Hudi 1.1+): an upsert SIGKILLed after its log files are written leaves
the table as it was for both readers, and the next write rolls it back as Hudi 1.x does (the
dead write's own log files deleted, a `<t>_<completion>.rollback` instant)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import CORES_ENV, expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    assert_no_orphans,
    fault_marks,
    table_state,
)

import pyhudi
from pyhudi.codec.file_names import parse_log_file
from pyhudi.model.instant import Action
from pyhudi.table.faults import FAULT_MARK_ENV, FAULT_POINT_ENV

pytestmark = [pytest.mark.process, pytest.mark.spark]

TABLE = {
    **trips_options("v9_crash"),
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.metadata.enable": "false",
}
UPSERT = {"hoodie.datasource.write.operation": "upsert"}
RECOVER_AT_ONCE = {
    "hoodie.client.heartbeat.interval_in_ms": "3600000",
    "pyhudi.write.wait.for.active.writer.ms": "0",
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}


def _log_instants(path: str) -> set[str]:
    """The instants the table's data log files are named by (version 9: their writer's)."""
    found = set()
    for file in Path(path).rglob(".*.log.*"):
        log = parse_log_file("", file.name)
        if log is not None and ".hoodie" not in file.parts:
            found.add(log.base_instant_time)
    return found


def test_a_v9_upsert_killed_after_its_logs_is_rolled_back_by_the_next_write(
    spark, processes, tmp_path
):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "v9_crash")
    mark, go = tmp_path / "mark", tmp_path / "go"
    crashed = row_spec(270, 30, tag=5)  # updates only: appended as log files
    write = {"op": "write", "path": path, "options": {**TABLE, **FAST_HEARTBEAT, **UPSERT}}
    crasher = processes.start(
        "writer",
        [{"op": "wait_file", "path": str(go)}, {**write, "rows": crashed}],
        {FAULT_POINT_ENV: "write.after_data_files", FAULT_MARK_ENV: str(mark), CORES_ENV: "2"},
    )
    first = {**TABLE, "hoodie.write.table.version": "9", "hoodie.datasource.write.operation": "insert"}  # fmt: skip
    pyhudi.write(rows_frame(spark, row_spec(0, 300, tag=1)), path, first)
    before = table_state(spark, path)
    assert before == expected_rows(row_spec(0, 300, tag=1))

    go.touch()
    assert crasher.wait_killed(timeout_s=300) == -9, crasher.log_tail()
    assert fault_marks(mark)["write.after_data_files"] == 1
    (dead,) = [i.time for i in pyhudi.HudiTable(path).timeline if not i.is_completed]
    assert dead in _log_instants(path), "the killed upsert wrote no log file"
    assert table_state(spark, path) == before  # its log files are not read

    recovery = row_spec(280, 30, tag=7)
    result = pyhudi.write(rows_frame(spark, recovery), path, {**TABLE, **RECOVER_AT_ONCE, **UPSERT})
    assert list(result.rolled_back) == [dead]
    assert dead not in _log_instants(path)
    assert table_state(spark, path) == {**before, **expected_rows(recovery)}
    timeline = pyhudi.HudiTable(path).timeline
    (rollback,) = [i for i in timeline if i.action is Action.ROLLBACK]
    assert rollback.completion_time is not None and rollback.completion_time > rollback.time
    assert all(i.is_completed for i in timeline)
    assert_no_orphans(path)
