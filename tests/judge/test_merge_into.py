"""MERGE INTO, UPDATE and DELETE FROM: the same statements, run by pyhudi (`pyhudi.sql`) on a
table and by Apache Hudi 0.15's Spark SQL on a copy of it, leave the same rows, as both engines
read both tables. Copy-on-write partitioned and merge-on-read unpartitioned; where the engines
differ on purpose (docs/dml.md), the test shows what each does."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession

import pyhudi
from pyhudi.exceptions import InvalidRecordError
from tests.judge.agreement import HUDI_1_2_WRITES_V6
from tests.judge.client import Judge, JudgeError
from tests.judge.compare import HUDI_READ, assert_same_read, hudi_frame

SCHEMA = "id string, name string, price double, ts long, part string"
#: Hudi's meta columns that name the commit: they differ between the two tables' writes.
COMMIT_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")


def _source(rows: str) -> str:
    """A MERGE source both engines parse alike: typed columns over inline VALUES."""
    return (
        "(SELECT id, op, name, CAST(price AS DOUBLE) AS price, CAST(ts AS BIGINT) AS ts, part "
        f"FROM VALUES {rows} AS v(id, op, name, price, ts, part)) s"
    )


#: Updates (whole rows, the one form Hudi 0.15 runs on merge-on-read), a partial update on
#: copy-on-write, a stale update (its ordering value below the stored one: the row stays),
#: deletes (one of an absent key) and inserts.
MERGE = """MERGE INTO {table} t USING {source} ON t.id = s.id
WHEN MATCHED AND s.op = 'U' THEN UPDATE SET *
{partial}WHEN MATCHED AND s.op = 'D' THEN DELETE
WHEN NOT MATCHED AND s.op = 'I' THEN INSERT *"""
ROWS = (
    "('k1', 'U', 'one', 11, 20, 'p2'), ('k2', 'U', 'stale', 12, 5, 'p1'), "
    "('k3', 'D', null, 0, 1, 'p2'), ('k4', 'P', 'ignored', 40, 30, 'p1'), "
    "('k9', 'D', null, 0, 1, 'p1'), ('n1', 'I', 'new', 5, 30, 'p1'), ('n2', 'X', 'no', 5, 30, 'p1')"
)
PARTIAL = "WHEN MATCHED AND s.op = 'P' THEN UPDATE SET price = s.price * 2\n"
STATEMENTS = [
    "UPDATE {table} SET price = price + 100 WHERE price < 4",
    "DELETE FROM {table} WHERE id = 'k5'",
]


def _create(spark: SparkSession, path: str, table_type: str, partitioned: bool) -> None:
    rows = [(f"k{i}", f"n{i}", float(i), 10, f"p{i % 2 + 1}") for i in range(1, 7)]
    options = {
        "hoodie.table.name": "merged",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
    }
    if partitioned:
        options["hoodie.datasource.write.partitionpath.field"] = "part"
    else:
        options["hoodie.datasource.write.keygenerator.class"] = (
            "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        )
    pyhudi.write(spark.createDataFrame(rows, SCHEMA), path, options)


def _register(judge: Judge, path: str) -> str:
    name = f"merged_{uuid.uuid4().hex[:8]}"
    judge.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
    return name


def _ours(path: str) -> str:
    return f"hudi.`{path}`"


def _read_both(spark: SparkSession, judge: Judge, path: str) -> tuple[DataFrame, DataFrame]:
    mine = pyhudi.read(spark, path).drop(*COMMIT_COLUMNS)
    theirs = hudi_frame(spark, judge.read(path, HUDI_READ)).drop(*COMMIT_COLUMNS)
    return mine, theirs


def _assert_same_tables(spark: SparkSession, judge: Judge, ours: str, theirs: str) -> None:
    """Each engine reads both tables, and all four reads hold the same rows."""
    ours_by_us, ours_by_hudi = _read_both(spark, judge, ours)
    theirs_by_us, theirs_by_hudi = _read_both(spark, judge, theirs)
    assert_same_read(ours_by_us, theirs_by_us, "pyhudi's reads", any_column_order=True)
    assert_same_read(ours_by_us, ours_by_hudi, "pyhudi's table", any_column_order=True)
    assert_same_read(ours_by_us, theirs_by_hudi, "Hudi's table", any_column_order=True)


@pytest.mark.parametrize(
    ("table_type", "partitioned"), [("COPY_ON_WRITE", True), ("MERGE_ON_READ", False)]
)
def test_statements_leave_the_rows_hudi_0_15_leaves(
    spark, hudi_0_15, tmp_path, table_type, partitioned
):  # type: ignore[no-untyped-def]
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _create(spark, ours, table_type, partitioned)
    shutil.copytree(ours, theirs)
    name = _register(hudi_0_15, theirs)
    cow = table_type == "COPY_ON_WRITE"
    merge = MERGE.format(table="{table}", source=_source(ROWS), partial=PARTIAL if cow else "")
    for statement in [merge, *STATEMENTS]:
        result = pyhudi.sql(spark, statement.format(table=_ours(ours))).collect()
        assert len(result) == 1 and result[0]["commit_time"]
        hudi_0_15.sql(statement.format(table=name))
    # A NULL key to insert is an error in both; the tables stay as they were.
    null_key = MERGE.format(
        table="{table}",
        source=_source("(null, 'I', 'x', 1, 1, 'p1'), ('zz', 'X', 'x', 1, 1, 'p1')"),
        partial="",
    )
    with pytest.raises(InvalidRecordError, match="null"):
        pyhudi.sql(spark, null_key.format(table=_ours(ours)))
    with pytest.raises(JudgeError, match="cannot be null or empty"):
        hudi_0_15.sql(null_key.format(table=name))
    _assert_same_tables(spark, hudi_0_15, ours, theirs)
    rows = {r["id"]: r for r in pyhudi.read(spark, ours).collect()}
    assert sorted(rows) == ["k1", "k2", "k4", "k6", "n1"]
    assert (rows["k1"]["name"], rows["k2"]["name"], rows["k2"]["price"]) == ("one", "n2", 102.0)
    assert rows["k4"]["price"] == (80.0 if cow else 4.0)
    assert len(pyhudi.HudiTable(ours).commits()) == 4  # the load, then one per statement

    if not cow:  # what pyhudi runs and Hudi 0.15 does not, on merge-on-read
        partial = f"MERGE INTO {name} t USING {_source(ROWS)} ON t.id = s.id {PARTIAL}"
        with pytest.raises(JudgeError, match="Merge into Hoodie table command failed"):
            hudi_0_15.sql(partial)
        null_safe = (
            f"MERGE INTO {name} t USING {_source(ROWS)} ON t.id <=> s.id WHEN MATCHED THEN DELETE"
        )
        with pytest.raises(JudgeError, match="only equality predicates"):
            hudi_0_15.sql(null_safe)


def test_duplicate_source_keys_pyhudi_refuses_hudi_0_15_keeps_the_latest(
    spark, hudi_0_15, tmp_path
):  # type: ignore[no-untyped-def]
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _create(spark, ours, "COPY_ON_WRITE", True)
    shutil.copytree(ours, theirs)
    name = _register(hudi_0_15, theirs)
    dupes = _source("('k1', 'U', 'late', 1, 30, 'p2'), ('k1', 'U', 'early', 2, 20, 'p2')")
    statement = (
        f"MERGE INTO {{table}} t USING {dupes} ON t.id = s.id WHEN MATCHED THEN UPDATE SET *"
    )
    with pytest.raises(InvalidRecordError, match="several source rows take one row"):
        pyhudi.sql(spark, statement.format(table=_ours(ours)))
    assert len(pyhudi.HudiTable(ours).commits()) == 1
    hudi_0_15.sql(statement.format(table=name))
    theirs_rows = {r["id"]: r["name"] for r in pyhudi.read(spark, theirs).collect()}
    assert theirs_rows["k1"] == "late"  # Hudi pre-combines the source by its ordering field


def test_hudi_1_2_writing_version_6_agrees_on_a_merge(spark, hudi_1_2, tmp_path):  # type: ignore[no-untyped-def]
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _create(spark, ours, "COPY_ON_WRITE", True)
    shutil.copytree(ours, theirs)
    name = _register(hudi_1_2, theirs)
    merge = MERGE.format(table="{table}", source=_source(ROWS), partial=PARTIAL)
    pyhudi.sql(spark, merge.format(table=_ours(ours)))
    for key, value in HUDI_1_2_WRITES_V6.items():
        hudi_1_2.sql(f"SET {key}={value}")
    try:
        hudi_1_2.sql(merge.format(table=name))
    finally:  # the judge's session is shared: later tests must not write version 6
        for key in HUDI_1_2_WRITES_V6:
            hudi_1_2.sql(f"RESET {key}")
    assert Path(theirs, ".hoodie", "hoodie.properties").read_text().count("hoodie.table.version=6")
    _assert_same_tables(spark, hudi_1_2, ours, theirs)
