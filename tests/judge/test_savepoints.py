"""Apache Hudi's savepoints on pyhudi's tables: Hudi 0.15 savepoints a commit of a table pyhudi
writes; pyhudi's cleaner keeps the savepointed files and its archival keeps the savepoint, so the
savepointed commit stays readable: Hudi and pyhudi read it alike after pyhudi's clean, archival and
more writes. (pyhudi's own savepoints and restores: test_savepoint_restore.py.)"""

from __future__ import annotations

import pyhudi
from tests.judge.agreement import completed_commits
from tests.judge.compare import HUDI_READ, assert_same_read, hudi_frame
from tests.judge.tables import all_types_frame, base_options

CLEAN_HARD = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}
ARCHIVE = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


def test_pyhudi_services_keep_what_a_hudi_savepoint_names(spark, hudi_0_15, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "saved")
    options = {
        **base_options("saved", "COPY_ON_WRITE"),
        "hoodie.clean.automatic": "false",
        "hoodie.archive.automatic": "false",
    }
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(all_types_frame(spark, range(12), 1, "a"), path, upsert)
    pyhudi.write(all_types_frame(spark, range(6), 2, "b"), path, upsert)
    saved = completed_commits(path)[-1]
    hudi_0_15.sql(f"CREATE TABLE saved USING hudi LOCATION '{path}'")
    hudi_0_15.call("create_savepoint", table="saved", commit_time=saved)
    before = hudi_frame(spark, hudi_0_15.read(path, {**HUDI_READ, "as.of.instant": saved}))

    for ts in range(3, 8):  # every file group rewritten five times
        pyhudi.write(all_types_frame(spark, range(12), ts, f"c{ts}"), path, upsert)
    table = pyhudi.HudiTable(path)
    cleaned = table.clean(CLEAN_HARD)
    assert cleaned is not None and cleaned.files_deleted > 0
    table.archive(ARCHIVE)
    assert saved in completed_commits(path), "archival moved the savepointed commit"
    savepoints = [i.time for i in table.refresh().timeline if i.action.value == "savepoint"]
    assert savepoints == [saved]

    travel = {"as.of.instant": saved}
    theirs = hudi_frame(spark, hudi_0_15.read(path, {**HUDI_READ, **travel}))
    assert_same_read(
        theirs, before, "Hudi's read of the savepoint, before and after pyhudi's clean"
    )
    ours = pyhudi.read(spark, path, travel)
    assert_same_read(ours, theirs, "the savepointed commit", any_column_order=True)
    assert ours.count() == 12
