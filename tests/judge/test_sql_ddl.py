"""Hudi's SQL DDL, judged by Hudi 0.15: the same `CREATE TABLE (cols) USING hudi ...
TBLPROPERTIES (...)` (and CTAS) run by Hudi in its session (table H) and by pyhudi in a
registered session (table P) give the same `hoodie.properties` (but for the documented timeline
time zone), then the same INSERTs, and Hudi reads P as it reads H."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import pyhudi
from pyhudi.codec.properties import load_properties
from tests.judge.client import Judge

#: (DDL with {name} and {location}, the INSERT that follows, with {name}).
CASES = {
    "mor_partitioned": (
        """CREATE TABLE {name} (id string, ts bigint, city string, fare double) USING hudi
           PARTITIONED BY (city)
           TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')
           LOCATION '{location}'""",
        "INSERT INTO {name} (id, ts, fare, city) VALUES ('a', 1, 1.5, 'sf'), ('b', 2, 2.5, 'la')",
    ),
    "cow_two_keys_two_levels": (
        """CREATE TABLE {name} (id string, name string, ts bigint, dt string, hh string)
           USING hudi PARTITIONED BY (dt, hh)
           TBLPROPERTIES (type = 'cow', primaryKey = 'id,name', preCombineField = 'ts')
           LOCATION '{location}'""",
        "INSERT INTO {name} (id, name, ts, dt, hh) VALUES ('a', 'x', 1, '2024-01-01', '10')",
    ),
    "cow_unpartitioned": (
        """CREATE TABLE {name} (id int, v string) USING hudi
           TBLPROPERTIES (primaryKey = 'id') LOCATION '{location}'""",
        "INSERT INTO {name} (id, v) VALUES (1, 'one'), (2, 'two')",
    ),
}
#: Keys whose values may differ: the timeline time zone (pyhudi's new tables are UTC, Hudi's
#: LOCAL; docs/migrating.md) and what follows from the table name's bytes.
DIFFERENT = {"hoodie.table.checksum", "hoodie.table.timeline.timezone"}


def _properties(location: str) -> dict[str, str]:
    return load_properties((Path(location) / ".hoodie" / "hoodie.properties").read_bytes())


@pytest.mark.parametrize("case", sorted(CASES))
def test_create_table_writes_hudis_table_properties(
    spark: SparkSession, hudi_0_15: Judge, tmp_path, case
) -> None:  # type: ignore[no-untyped-def]
    ddl, insert = CASES[case]
    name = f"judged_{case}"
    hudi_location, ours = str(tmp_path / "hudi"), str(tmp_path / "pyhudi")
    hudi_0_15.sql(ddl.format(name=name, location=hudi_location))
    pyhudi.register(spark)
    spark.sql(ddl.format(name=name, location=ours))
    try:
        theirs, mine = _properties(hudi_location), _properties(ours)
        for key, value in theirs.items():
            if key not in DIFFERENT:
                assert mine.get(key) == value, key
        hudi_0_15.sql(insert.format(name=name))
        spark.sql(insert.format(name=name))
        read = hudi_0_15.read(ours)
        expected = hudi_0_15.read(hudi_location)
        columns = [
            c for c in spark.read.parquet(str(expected)).columns if not c.startswith("_hoodie")
        ]
        assert sorted(spark.read.parquet(str(read)).select(*columns).collect()) == sorted(
            spark.read.parquet(str(expected)).select(*columns).collect()
        )
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        hudi_0_15.sql(f"DROP TABLE IF EXISTS {name}")


def test_ctas_writes_what_hudis_ctas_writes(
    spark: SparkSession, hudi_0_15: Judge, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    ddl = """CREATE TABLE judged_ctas USING hudi
             TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
             LOCATION '{location}'
             AS SELECT 1 AS id, 'x' AS v, 5L AS ts UNION ALL SELECT 2, 'y', 6L"""
    hudi_location, ours = str(tmp_path / "hudi"), str(tmp_path / "pyhudi")
    hudi_0_15.sql(ddl.format(location=hudi_location))
    pyhudi.register(spark)
    spark.sql(ddl.format(location=ours))
    try:
        rows = sorted(
            tuple(r)
            for r in spark.read.parquet(str(hudi_0_15.read(ours))).select("id", "v", "ts").collect()
        )
        assert rows == [(1, "x", 5), (2, "y", 6)]
        (commit,) = pyhudi.HudiTable(ours).commits()
        (theirs,) = pyhudi.HudiTable(hudi_location).commits()
        ours_op = pyhudi.HudiTable(ours).commit_metadata(commit.time).operation_type
        assert (
            ours_op == pyhudi.HudiTable(hudi_location).commit_metadata(theirs.time).operation_type
        )
    finally:
        spark.sql("DROP TABLE IF EXISTS judged_ctas")
        hudi_0_15.sql("DROP TABLE IF EXISTS judged_ctas")


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_alter_table_add_columns_commits_as_hudi(
    spark: SparkSession, hudi_0_15: Judge, tmp_path, table_type
) -> None:  # type: ignore[no-untyped-def]
    name = f"judged_alter_{table_type}"
    ddl = f"""CREATE TABLE {name} (id string, ts bigint, city string) USING hudi
              PARTITIONED BY (city)
              TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}')
              LOCATION '{{location}}'"""
    steps = [
        f"INSERT INTO {name} (id, ts, city) VALUES ('a', 1, 'sf')",
        f"ALTER TABLE {name} ADD COLUMNS (tip double, note string)",
        f"INSERT INTO {name} (id, ts, tip, note, city) VALUES ('b', 2, 1.5, 'n', 'la')",
    ]
    hudi_location, ours = str(tmp_path / "hudi"), str(tmp_path / "pyhudi")
    hudi_0_15.sql(ddl.format(location=hudi_location))
    pyhudi.register(spark)
    spark.sql(ddl.format(location=ours))
    try:
        for step in steps:
            hudi_0_15.sql(step)
            spark.sql(step)
        tables = {t: pyhudi.HudiTable(t) for t in (hudi_location, ours)}
        altered = {}
        for location, table in tables.items():
            instant = table.commits()[-2]
            metadata = table.commit_metadata(instant.time)
            altered[location] = (instant.action, metadata.operation_type, metadata.schema)
        assert altered[ours] == altered[hudi_location], (
            altered[ours][2],
            altered[hudi_location][2],
        )
        columns = ["id", "ts", "tip", "note", "city"]
        read = {
            location: sorted(
                spark.read.parquet(str(hudi_0_15.read(location))).select(*columns).collect()
            )
            for location in tables
        }
        assert read[ours] == read[hudi_location]
        assert [r.id for r in read[ours] if r.tip is not None] == ["b"]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        hudi_0_15.sql(f"DROP TABLE IF EXISTS {name}")
