"""`spark.sql` of a registered session runs Hudi's statements as Hudi's SQL extension does:
MERGE INTO, UPDATE, DELETE FROM and CALL on Hudi tables, queries of ``hudi.`path` `` and time
travel (`TIMESTAMP AS OF`, `VERSION AS OF`) on paths and catalog tables; every other statement
is Spark's own."""

from __future__ import annotations

import pytest
from tests.helpers.pyspark_versions import DATA_SOURCE, needs_catalog_tables

import pyhudi
from pyhudi.spark.routing import hands_to_pyhudi

OPTIONS = {
    "hoodie.table.name": "routed",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
}


def _ids(df) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in df.collect())


def test_spark_sql_runs_hudi_statements(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    path = str(tmp_path / "t")
    first = pyhudi.write(
        spark.createDataFrame([("a", 1, 0), ("b", 1, 0)], "id string, ts long, qty int"),
        path,
        OPTIONS,
    )
    merged = spark.sql(
        f"""MERGE INTO hudi.`{path}` t
        USING (SELECT 'c' AS id, 2L AS ts, 5 AS qty UNION ALL SELECT 'a', 2L, 9) s
        ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET *
        WHEN NOT MATCHED THEN INSERT *"""
    ).collect()[0]
    assert (merged.num_updated_rows, merged.num_inserted_rows) == (1, 1)
    spark.sql(f"UPDATE hudi.`{path}` SET qty = qty + 1 WHERE id = 'c'")
    spark.sql(f"-- a comment first\nDELETE FROM hudi.`{path}` WHERE id = 'b'")
    now = [("a", 2, 9), ("c", 2, 6)]
    assert _ids(spark.sql(f"SELECT id, ts, qty FROM hudi.`{path}`")) == now
    then = spark.sql(
        f"SELECT x.id, x.qty FROM hudi.`{path}` TIMESTAMP AS OF '{first.instant_time}' x"
    )
    assert _ids(then) == [("a", 0), ("b", 0)]

    if DATA_SOURCE:  # pyspark 3.5 has no catalog table of the `hudi` format
        _catalog_table_statements(spark, path, first.instant_time)
    # Spark's own statements are untouched, parameters included.
    assert spark.sql("SELECT :n + 1 AS m", args={"n": 1}).collect()[0].m == 2


def _catalog_table_statements(spark, path: str, first: str) -> None:  # type: ignore[no-untyped-def]
    spark.sql(f"CREATE TABLE routed_t USING hudi LOCATION '{path}'")
    try:
        assert _ids(spark.sql("SELECT id FROM routed_t")) == [("a",), ("c",)]
        versioned = spark.sql(f"SELECT routed_t.id FROM routed_t VERSION AS OF '{first}'")
        assert _ids(versioned) == [("a",), ("b",)]
        spark.sql("DELETE FROM routed_t WHERE id = 'a'")
        commits = spark.sql("CALL show_commits(table => 'routed_t', limit => 10)").collect()
        # the fifth delta commit compacts inline, Hudi's default for merge-on-read batch writes
        assert [c.action for c in commits] == ["commit"] + ["deltacommit"] * 5
        assert _ids(spark.sql("SELECT id FROM routed_t")) == [("c",)]
    finally:
        spark.sql("DROP TABLE IF EXISTS routed_t")


@pytest.mark.parametrize(
    ("statement", "handed"),
    [
        ("  merge into t using s on t.a = s.a when matched then delete", True),
        ("/* note */ (UPDATE t SET a = 1)", True),
        ("-- note\nDELETE FROM t", True),
        ("CALL run_clean(table => 't')", True),
        ("SELECT * FROM hudi.`/data/t`", True),
        ("SELECT * FROM t TIMESTAMP AS OF '2024-01-01'", True),
        ("show  partitions t", True),
        ("CREATE TABLE t (a int) USING hudi TBLPROPERTIES (primaryKey = 'a')", True),
        ("CREATE TABLE t (a int) USING parquet", False),
        ("DROP TABLE IF EXISTS t PURGE", True),
        ("ALTER TABLE t ADD COLUMNS (c int)", True),
        ("SHOW TABLES", False),
        ("SELECT 1", False),
        ("INSERT INTO t VALUES (1)", True),
        ("SET hoodie.index.type=BUCKET", False),
    ],
)
def test_statements_handed_to_pyhudi(statement: str, handed: bool) -> None:
    assert hands_to_pyhudi(statement) is handed


@needs_catalog_tables
@pytest.mark.parametrize("hive_style", [False, True])
def test_show_partitions_lists_a_hudi_tables_partition_paths(spark, tmp_path, hive_style):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    path = str(tmp_path / "parted")
    rows = [("a", 1, "sf", 1), ("b", 1, "la", 2), ("c", 1, "sf", 2)]
    pyhudi.write(
        spark.createDataFrame(rows, "id string, ts long, city string, day int"),
        path,
        {
            **OPTIONS,
            "hoodie.datasource.write.partitionpath.field": "city,day",
            "hoodie.datasource.write.hive_style_partitioning": str(hive_style).lower(),
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
        },
    )
    named = (lambda c, d: f"city={c}/day={d}") if hive_style else (lambda c, d: f"{c}/{d}")
    every = [named("la", 2), named("sf", 1), named("sf", 2)]
    assert [r.partition for r in spark.sql(f"SHOW PARTITIONS hudi.`{path}`").collect()] == every
    spark.sql(f"CREATE TABLE parted_t USING hudi LOCATION '{path}'")
    try:
        shown = spark.sql("SHOW PARTITIONS parted_t PARTITION (city = 'sf')").collect()
        assert [r.partition for r in shown] == [named("sf", 1), named("sf", 2)]
        shown = spark.sql("SHOW PARTITIONS parted_t PARTITION (city='sf', day=2)").collect()
        assert [r.partition for r in shown] == [named("sf", 2)]
        with pytest.raises(pyhudi.ConfigError, match="'town' is not a partition field"):
            spark.sql("SHOW PARTITIONS parted_t PARTITION (town = 'sf')")
    finally:
        spark.sql("DROP TABLE IF EXISTS parted_t")
    # a table of another format is Spark's
    spark.sql(
        f"CREATE TABLE plain_parted (x int, p int) USING parquet PARTITIONED BY (p) LOCATION '{tmp_path}/plain'"
    )
    try:
        spark.sql("INSERT INTO plain_parted VALUES (1, 7)")
        assert [r.partition for r in spark.sql("SHOW PARTITIONS plain_parted").collect()] == ["p=7"]
    finally:
        spark.sql("DROP TABLE IF EXISTS plain_parted")
