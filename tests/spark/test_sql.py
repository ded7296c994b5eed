"""`pyhudi.sql`: MERGE INTO, UPDATE and DELETE FROM on a catalog table over a Hudi table, Hudi's
CALL procedures with their result columns, and everything else passed to `spark.sql`."""

from __future__ import annotations

import pytest
from tests.helpers.pyspark_versions import needs_catalog_tables

import pyhudi
from pyhudi.dml.clauses import KeyMatch
from pyhudi.exceptions import ConfigError, InstantNotFoundError, UnsupportedOperationError

OPTIONS = {
    "hoodie.table.name": "sqlt",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
}


@needs_catalog_tables
def test_dml_and_procedures_through_pyhudi_sql(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "sqlt")
    rows = [("a", 1.0, 1, "p1"), ("b", 2.0, 1, "p2")]
    pyhudi.write(
        spark.createDataFrame(rows, "id string, price double, ts long, part string"), path, OPTIONS
    )
    spark.sql(f"CREATE TABLE sql_merged USING hudi LOCATION '{path}'")
    try:
        merged = pyhudi.sql(
            spark,
            "MERGE INTO sql_merged t USING (SELECT 'a' AS id, 5.0D AS price, 2L AS ts, 'p1' AS part "
            "UNION ALL SELECT 'c', 7.0D, 2L, 'p1') s ON t.id = s.id AND t.part = s.part "
            "WHEN MATCHED THEN UPDATE SET price = s.price WHEN NOT MATCHED THEN INSERT *",
        ).collect()[0]
        assert (merged["num_updated_rows"], merged["num_inserted_rows"]) == (1, 1)
        source = spark.createDataFrame([("b", "p2"), ("d", "p1'")], "id string, part string")
        builder = pyhudi.HudiTable(path).merge(source, "t.id = s.id AND t.part = s.part", source_alias="s", target_alias="t")  # fmt: skip
        match = KeyMatch({"id": "s.id", "part": "s.part"})
        assert builder._source_partitions(match, ("part",)) == "`part` IN ('p1\\'', 'p2')"
        updated = pyhudi.sql(spark, "UPDATE sql_merged SET price = price * 2 WHERE part = 'p2'")
        assert updated.collect()[0]["num_affected_rows"] == 1
        pyhudi.sql(spark, f"DELETE FROM hudi.`{path}` WHERE id = 'c'")
        table = spark.sql("SELECT id, price FROM sql_merged ORDER BY id").collect()
        assert [tuple(r) for r in table] == [("a", 5.0), ("b", 4.0)]

        commits = pyhudi.sql(spark, "CALL show_commits(table => 'sql_merged', limit => 2)")
        assert commits.columns[:3] == ["commit_time", "state_transition_time", "action"]
        assert [r["action"] for r in commits.collect()] == ["deltacommit", "deltacommit"]
        none = pyhudi.sql(spark, "CALL show_commits(table => 'sql_merged', limit => 0)")
        assert none.collect() == []
        # Hudi's trigger: fewer than 5 delta commits since the last compaction, nothing to do
        call = f"CALL run_compaction('scheduleAndExecute', path => '{path}'"
        assert pyhudi.sql(spark, call + ")").collect() == []
        compacted = pyhudi.sql(
            spark, call + ", options => 'hoodie.compact.inline.max.delta.commits=1')"
        )
        assert [(r["operation_size"], r["state"]) for r in compacted.collect()] == [
            (2, "COMPLETED")
        ]
        cleaned = pyhudi.sql(spark, "CALL run_clean(table => 'sql_merged', retain_commits => 1)")
        assert cleaned.columns == [
            "start_clean_time",
            "time_taken_in_millis",
            "total_files_deleted",
            "earliest_commit_to_retain",
            "bootstrap_part_metadata",
            "version",
        ]
        _savepoint_procedures(spark)
        with pytest.raises(UnsupportedOperationError, match="run_compaction"):
            pyhudi.sql(spark, "CALL create_nothing(table => 'sql_merged')")
        with pytest.raises(ConfigError, match="no parameter 'tbl'"):
            pyhudi.sql(spark, "CALL show_commits(tbl => 'sql_merged')")
        assert pyhudi.sql(spark, "SELECT count(*) AS n FROM sql_merged").collect()[0]["n"] == 2
    finally:
        spark.sql("DROP TABLE IF EXISTS sql_merged")


def _savepoint_procedures(spark) -> None:  # type: ignore[no-untyped-def]
    """Savepoint the latest commit, roll back a delete, restore past another, drop the
    savepoint: each procedure's one boolean column, as Hudi's."""

    def call(statement: str) -> list[tuple[object, ...]]:
        return [tuple(r) for r in pyhudi.sql(spark, f"CALL {statement}").collect()]

    def ids() -> list[str]:
        return [r["id"] for r in spark.sql("SELECT id FROM sql_merged ORDER BY id").collect()]

    created = pyhudi.sql(spark, "CALL create_savepoint(table => 'sql_merged', user => 'ops')")
    assert created.columns == ["create_savepoint_result"] and created.collect()[0][0] is True
    (saved,) = call("show_savepoints(table => 'sql_merged')")
    assert call(f"create_savepoint('sql_merged', '{saved[0]}')") == [(False,)]  # already saved
    with pytest.raises(InstantNotFoundError, match="no completed commit 20000101000000000"):
        call("create_savepoint(table => 'sql_merged', commit_time => '20000101000000000')")

    deleted = pyhudi.sql(spark, "DELETE FROM sql_merged WHERE id = 'a'").collect()[0]
    assert ids() == ["b"]
    rolled = (
        f"rollback_to_instant(table => 'sql_merged', instant_time => '{deleted['commit_time']}')"
    )
    assert call(rolled) == [(True,)] and ids() == ["a", "b"]
    pyhudi.sql(spark, "DELETE FROM sql_merged WHERE id = 'b'")
    assert call("rollback_to_savepoint(table => 'sql_merged')") == [(True,)]
    assert ids() == ["a", "b"]
    assert call(f"delete_savepoint(table => 'sql_merged', instant_time => '{saved[0]}')") == [
        (True,)
    ]
    assert call("show_savepoints(table => 'sql_merged')") == []
    with pytest.raises(InstantNotFoundError, match="no completed savepoint"):
        call("delete_savepoint(table => 'sql_merged')")
