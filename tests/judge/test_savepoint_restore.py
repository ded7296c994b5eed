"""Savepoints and restores across pyhudi and Apache Hudi 0.15: pyhudi savepoints a commit, writes
on (upserts, a delete, a compaction, a clean), restores, and Hudi and pyhudi both read exactly
the savepointed rows, Hudi finding the metadata table in step with storage; Hudi restores to a
pyhudi savepoint and pyhudi to a Hudi savepoint, and both engines write on afterwards."""

from __future__ import annotations

import os

import pytest

import pyhudi
from pyhudi.exceptions import InstantNotFoundError, UnsupportedOperationError
from pyhudi.model.instant import Action
from tests.judge.agreement import assert_readers_agree, completed_commits
from tests.judge.client import Judge
from tests.judge.compare import HUDI_READ, assert_same_read, hudi_frame
from tests.judge.tables import all_types_frame, base_options

CLEAN_HARD = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}


def _upsert(name: str, table_type: str) -> dict[str, str]:
    return {**base_options(name, table_type), "hoodie.datasource.write.operation": "upsert"}


def _actions(path: str, action: Action) -> list[str]:
    return [i.time for i in pyhudi.HudiTable(path).timeline if i.action is action]


def _assert_hudi_reads(spark, judge: Judge, path: str, expected, what: str) -> None:  # type: ignore[no-untyped-def]
    """Hudi's snapshot is `expected` (an earlier Hudi read), pyhudi's is Hudi's, and Hudi finds
    the metadata table listing exactly the files on storage."""
    theirs = hudi_frame(spark, judge.read(path, HUDI_READ))
    assert_same_read(theirs, expected, f"{what}: Hudi's read against the savepointed rows")
    ours = pyhudi.read(spark, path)
    assert_same_read(ours, theirs, f"{what}: pyhudi's read", any_column_order=True)
    name = os.path.basename(path)
    judge.sql(f"CREATE TABLE IF NOT EXISTS {name} USING hudi LOCATION '{path}'")
    listed = judge.call("validate_metadata_table_files", table=name, verbose=True)
    assert listed and all(r["is_present_in_fs"] and r["is_present_in_metadata"] for r in listed)
    assert all(r["fs_size"] == r["metadata_size"] for r in listed), listed


def test_pyhudi_restores_a_merge_on_read_table_to_its_savepoint(spark, hudi_0_15, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "restored_mor")
    options = _upsert("restored_mor", "MERGE_ON_READ")
    pyhudi.write(all_types_frame(spark, range(12), 1, "a"), path, options)
    pyhudi.write(all_types_frame(spark, range(6), 2, "b"), path, options)
    first, saved_commit = completed_commits(path)
    table = pyhudi.HudiTable(path)
    savepoint = table.create_savepoint(user="ops", comment="before the backfill")
    assert savepoint.instant_time == saved_commit and savepoint.file_count == 6
    assert [s.instant_time for s in table.savepoints()] == [saved_commit]
    with pytest.raises(UnsupportedOperationError, match="already savepointed"):
        table.create_savepoint(saved_commit)
    with pytest.raises(InstantNotFoundError, match="no completed commit 20000101000000000"):
        table.create_savepoint("20000101000000000")
    with pytest.raises(InstantNotFoundError, match=f"no savepoint {first}"):
        table.restore_to_savepoint(first)
    saved = hudi_frame(spark, hudi_0_15.read(path, HUDI_READ))

    # Upserts, a delete, a compaction and a write on its slice, then a pending compaction.
    pyhudi.write(all_types_frame(spark, range(3, 15), 3, "c"), path, options)
    pyhudi.write(all_types_frame(spark, range(2), 4, "d"), path, {**options, "hoodie.datasource.write.operation": "delete"})  # fmt: skip
    table.compaction.run(spark)
    pyhudi.write(all_types_frame(spark, range(5, 8), 5, "e"), path, options)
    pending = table.compaction.schedule()
    assert pending is not None
    with pytest.raises(UnsupportedOperationError, match="pending compaction"):
        table.create_savepoint(pending.time)
    later = [*completed_commits(path)[2:], pending.time]

    result = table.restore_to_savepoint(saved_commit)
    assert result.rolled_back == tuple(reversed(later)) and result.metadata_table == "restored"
    assert completed_commits(path) == [first, saved_commit]
    assert _actions(path, Action.RESTORE) == [result.instant_time]
    assert not _actions(path, Action.ROLLBACK) and not table.compaction.pending()
    _assert_hudi_reads(spark, hudi_0_15, path, saved, "after pyhudi's restore")

    hudi_0_15.write(path, all_types_frame(spark, range(10, 20), 6, "h"), options)
    pyhudi.write(all_types_frame(spark, range(18, 24), 7, "p"), path, options)
    assert assert_readers_agree(spark, hudi_0_15, path, "after it", only=("snapshot",)) == 24


def test_hudi_and_pyhudi_restore_to_each_others_savepoints(spark, hudi_0_15, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "restored_cow")
    name = "restored_cow"
    options = _upsert(name, "COPY_ON_WRITE")
    pyhudi.write(all_types_frame(spark, range(12), 1, "a"), path, options)
    pyhudi.write(all_types_frame(spark, range(6), 2, "b"), path, options)
    theirs = completed_commits(path)[-1]
    hudi_0_15.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    hudi_0_15.call("create_savepoint", table=name, commit_time=theirs)
    saved = hudi_frame(spark, hudi_0_15.read(path, HUDI_READ))
    pyhudi.write(all_types_frame(spark, range(3, 15), 3, "c"), path, options)
    pyhudi.write(all_types_frame(spark, range(2), 4, "d"), path, {**options, "hoodie.datasource.write.operation": "delete"})  # fmt: skip

    # pyhudi's cleaner keeps the files of Hudi's savepoint and deletes the other old versions;
    # pyhudi restores to the savepoint (the metadata table forgets the cleaned files).
    table = pyhudi.HudiTable(path)
    (savepoint,) = table.savepoints()
    cleaned = table.clean(CLEAN_HARD)
    assert cleaned is not None and cleaned.files_deleted > 0
    kept = [os.path.join(path, p, n) for p, names in savepoint.files.items() for n in names]
    assert kept and all(os.path.exists(f) for f in kept), "the cleaner deleted a savepointed file"
    result = table.restore_to_savepoint(theirs)
    assert len(result.rolled_back) == 2 and completed_commits(path)[-1] == theirs
    _assert_hudi_reads(spark, hudi_0_15, path, saved, "after pyhudi's restore")

    # Hudi restores the table to pyhudi's savepoint (its CALL) of pyhudi's next write; both
    # engines' show_savepoints list the two savepoints.
    ours = pyhudi.write(all_types_frame(spark, range(10, 16), 5, "e"), path, options).instant_time
    created = pyhudi.sql(spark, f"CALL create_savepoint(path => '{path}', user => 'ops')")
    assert [r.asDict() for r in created.collect()] == [{"create_savepoint_result": True}]
    listed = pyhudi.sql(spark, f"CALL show_savepoints(path => '{path}')")
    assert [r.asDict() for r in listed.collect()] == hudi_0_15.call("show_savepoints", table=name)
    assert [r["savepoint_time"] for r in listed.collect()] == [ours, theirs]
    saved = hudi_frame(spark, hudi_0_15.read(path, HUDI_READ))
    hudi_0_15.write(path, all_types_frame(spark, range(14, 20), 6, "h"), options)
    with pytest.raises(UnsupportedOperationError, match=f"later savepoint.*{ours}"):
        table.restore_to_savepoint(theirs)
    hudi_0_15.call("rollback_to_savepoint", table=name, instant_time=ours)
    assert completed_commits(path)[-1] == ours
    _assert_hudi_reads(spark, hudi_0_15, path, saved, "after Hudi's restore")

    # pyhudi rolls back its next write (Hudi's rollback_to_instant); both engines write on.
    rolled = pyhudi.write(all_types_frame(spark, range(20, 22), 7, "p"), path, options)
    assert table.rollback_to_instant(rolled.instant_time).rolled_back == rolled.instant_time
    assert completed_commits(path)[-1] == ours
    hudi_0_15.write(path, all_types_frame(spark, range(22, 24), 8, "h"), options)
    pyhudi.write(all_types_frame(spark, range(24, 26), 9, "p"), path, options)
    assert assert_readers_agree(spark, hudi_0_15, path, "after both", only=("snapshot",)) == 20
