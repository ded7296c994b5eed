"""A MERGE (updates, deletes and inserts as one commit) SIGKILLed half-way, its data files
written and its commit not: both readers see the table as before it, and the next merge rolls the
dead one back at once (its heartbeat names a process that is gone) and commits. One process."""

from __future__ import annotations

import time

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.processes import CORES_ENV, expected_rows, row_spec, rows_frame
from tests.process.checks import (
    FAST_HEARTBEAT,
    State,
    assert_no_orphans,
    data_files_on_disk,
    fault_marks,
    referenced_files,
    table_state,
    timeline_summary,
)

import pyhudi
from pyhudi.table.faults import FAULT_MARK_ENV, FAULT_POINT_ENV

pytestmark = [pytest.mark.process, pytest.mark.spark]

TABLE = {
    **trips_options("merge_crash"),
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}
#: The crashed merge: 30 keys of the table (3 deleted, 27 updated) and 6 new ones.
CRASHED = row_spec(270, 36, tag=5)
CRASHED_DELETE = "s.uuid < 'id-0000273'"
#: The merge that recovers: 20 keys of the table (2 deleted, 18 updated) and 10 new ones.
RECOVERY = row_spec(280, 30, tag=7)
RECOVERY_DELETE = "s.uuid < 'id-0000282'"
RECOVER_AT_ONCE = {
    "hoodie.client.heartbeat.interval_in_ms": "3600000",
    "pyhudi.write.wait.for.active.writer.ms": "0",
}
CLEAN = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}


def _merged(state: State, spec: dict, delete_below: str) -> State:
    """`state` after the merge of `spec`'s rows with matches below `delete_below` deleted."""
    after = dict(state)
    for key, row in expected_rows(spec).items():
        if key in after and key < delete_below:
            del after[key]
        else:
            after[key] = row
    return after


def _pending(path: str) -> list[str]:
    return [i.time for i in pyhudi.HudiTable(path).timeline if not i.is_completed]


def test_a_merge_killed_before_its_commit_leaves_the_table_and_the_next_merge_recovers(
    spark, processes, tmp_path
):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "merge_crash")
    mark, go = tmp_path / "mark", tmp_path / "go"
    merge = {"op": "merge", "path": path, "options": FAST_HEARTBEAT, "rows": CRASHED}
    crasher = processes.start(  # its Spark starts while this process writes the table
        "merger",
        [{"op": "wait_file", "path": str(go)}, {**merge, "delete": CRASHED_DELETE}],
        {FAULT_POINT_ENV: "write.after_data_files", FAULT_MARK_ENV: str(mark), CORES_ENV: "2"},
    )
    pyhudi.write(rows_frame(spark, row_spec(0, 300, tag=1)), path, {**TABLE, "hoodie.datasource.write.operation": "insert"})  # fmt: skip
    before = table_state(spark, path)
    assert before == expected_rows(row_spec(0, 300, tag=1))

    go.touch()
    assert crasher.wait_killed(timeout_s=300) == -9, crasher.log_tail()
    assert fault_marks(mark)["write.after_data_files"] == 1
    (dead,) = _pending(path)
    assert data_files_on_disk(path) - referenced_files(path), "the merge wrote no data file"
    assert table_state(spark, path) == before, f"half a merge visible: {timeline_summary(path)}"

    started = time.monotonic()
    result = (
        pyhudi.HudiTable(path)
        .merge(
            rows_frame(spark, RECOVERY),
            "t.uuid = s.uuid",
            source_alias="s",
            target_alias="t",
            options=RECOVER_AT_ONCE,
        )
        .when_matched_delete(RECOVERY_DELETE)
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert time.monotonic() - started < 60  # it never waited for the heartbeat (one hour)
    assert result.commit.rolled_back == (dead,)
    assert (result.num_updated, result.num_deleted, result.num_inserted) == (18, 2, 10)

    pyhudi.HudiTable(path).clean({**TABLE, **CLEAN})
    assert_no_orphans(path)
    assert table_state(spark, path) == _merged(before, RECOVERY, "id-0000282")
    assert not _pending(path), timeline_summary(path)
