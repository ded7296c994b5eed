"""Hudi's Spark SQL DDL in a registered session: `CREATE TABLE (cols) USING hudi PARTITIONED BY
... TBLPROPERTIES (primaryKey, preCombineField, type)` creates the Hudi table (at its LOCATION, or
in its database's folder), CTAS writes one, and `DROP TABLE` drops a managed table's files, or
any Hudi table's with PURGE. (Hudi 0.15 judges the tables: tests/judge/test_sql_ddl.py.)"""

from __future__ import annotations

import os

import pytest
from tests.helpers.pyspark_versions import DATA_SOURCE, needs_catalog_tables

import pyhudi
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.table.context import TableContext


def _rows(spark, query: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in spark.sql(query).collect())


@needs_catalog_tables
def test_create_table_with_columns_creates_the_hudi_table(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    location = str(tmp_path / "trips")
    spark.sql(
        f"""CREATE TABLE ddl_trips (id string, ts bigint, city string, fare double)
            USING hudi PARTITIONED BY (city)
            TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor')
            LOCATION '{location}'"""
    )
    try:
        config = TableContext.open(location).config
        assert config.table_type.value == "MERGE_ON_READ"
        assert config.partition_fields == ("city",)
        assert config.props["hoodie.table.recordkey.fields"] == "id"
        assert config.props["hoodie.table.precombine.field"] == "ts"
        assert config.hive_style_partitioning
        assert not TableContext.open(location).active.timeline  # created, nothing written
        # the partition column comes last, as in Hudi's catalog
        columns = [r.col_name for r in spark.sql("DESCRIBE TABLE ddl_trips").collect()]
        assert columns[5:9] == ["id", "ts", "fare", "city"]
        assert spark.sql("SELECT * FROM ddl_trips").count() == 0
        spark.sql(
            "INSERT INTO ddl_trips (id, ts, fare, city) VALUES ('a', 1, 1.0, 'sf'), ('b', 1, 2.0, 'la')"
        )
        spark.sql(
            """MERGE INTO ddl_trips t USING (SELECT 'a' AS id, 2L AS ts, 'sf' AS city, 9.0D AS fare) s
               ON t.id = s.id WHEN MATCHED THEN UPDATE SET *"""
        )
        assert _rows(spark, "SELECT id, fare, city FROM ddl_trips") == [
            ("a", 9.0, "sf"),
            ("b", 2.0, "la"),
        ]
        assert sorted(os.listdir(location)) == [".hoodie", "city=la", "city=sf"]
        spark.sql("ALTER TABLE ddl_trips ADD COLUMNS (tip double COMMENT 'new')")
        columns = [r.col_name for r in spark.sql("DESCRIBE TABLE ddl_trips").collect()]
        assert columns[5:10] == ["id", "ts", "fare", "tip", "city"]
        assert _rows(spark, "SELECT id, tip FROM ddl_trips") == [("a", None), ("b", None)]
        # positional, as in Hudi: the meta columns are not the statement's
        spark.sql("INSERT INTO ddl_trips VALUES ('c', 1, 3.0, 0.5, 'sf')")
        assert _rows(spark, "SELECT id, tip FROM ddl_trips WHERE tip IS NOT NULL") == [("c", 0.5)]
        latest = pyhudi.HudiTable(location).commits()[-2]  # the ALTER, before the INSERT
        assert latest.action.value == "deltacommit"
        altered = pyhudi.HudiTable(location).commit_metadata(latest.time)
        assert altered.operation_type.value == "ALTER_SCHEMA" and not altered.write_stats()
        with pytest.raises(pyhudi.ConfigError, match="has tip already"):
            spark.sql("ALTER TABLE ddl_trips ADD COLUMNS (tip double)")
        with pytest.raises(pyhudi.UnsupportedOperationError, match="ADD COLUMNS"):
            spark.sql("ALTER TABLE ddl_trips DROP COLUMN tip")
        spark.sql(
            "CREATE TABLE IF NOT EXISTS ddl_trips (id string) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )  # already there: nothing happens
        assert _rows(spark, "SELECT count(*) FROM ddl_trips") == [(3,)]
    finally:
        spark.sql("DROP TABLE IF EXISTS ddl_trips")
    assert TableContext.exists(location)  # an external table's files stay


@needs_catalog_tables
def test_managed_tables_ctas_and_drop_purge(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS ddl_db LOCATION '{tmp_path}/db'")
    try:
        spark.sql(
            "CREATE TABLE ddl_db.managed (id int, v string) USING hudi TBLPROPERTIES (primaryKey = 'id')"
        )
        managed = str(tmp_path / "db" / "managed")
        assert TableContext.open(managed).config.table_type.value == "COPY_ON_WRITE"
        spark.sql("INSERT INTO ddl_db.managed (id, v) VALUES (1, 'x')")
        spark.sql(
            """CREATE TABLE ddl_db.copied USING hudi TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')
               AS SELECT id, v, 7L AS ts FROM ddl_db.managed"""
        )
        copied = str(tmp_path / "db" / "copied")
        (commit,) = pyhudi.HudiTable(copied).commits()
        assert (
            pyhudi.HudiTable(copied).commit_metadata(commit.time).operation_type.value
            == "BULK_INSERT"
        )
        assert _rows(spark, "SELECT id, v, ts FROM ddl_db.copied") == [(1, "x", 7)]
        spark.sql("DROP TABLE ddl_db.managed")  # managed: the files go too, as in Hudi
        assert not os.path.exists(managed)
        external = str(tmp_path / "external")
        with pytest.raises(pyhudi.UnsupportedOperationError, match="without primaryKey"):
            spark.sql(f"CREATE TABLE ddl_db.ext USING hudi LOCATION '{external}' AS SELECT 1 AS id")
        assert not os.path.exists(external)
        spark.sql(
            f"""CREATE TABLE ddl_db.ext USING hudi TBLPROPERTIES (primaryKey = 'id')
                LOCATION '{external}' AS SELECT 1 AS id"""
        )
        assert TableContext.exists(external)
        spark.sql("DROP TABLE ddl_db.ext PURGE")
        assert not os.path.exists(external)
        with pytest.raises(pyhudi.ConfigError, match="PARTITIONED BY names no column"):
            spark.sql(
                f"""CREATE TABLE ddl_db.bad (id int) USING hudi PARTITIONED BY (day)
                    TBLPROPERTIES (primaryKey = 'id') LOCATION '{tmp_path}/bad'"""
            )
        assert not os.path.exists(tmp_path / "bad")
    finally:
        spark.sql("DROP DATABASE IF EXISTS ddl_db CASCADE")


def test_create_table_using_hudi_is_made_only_where_spark_can_read_it(spark, tmp_path):  # type: ignore[no-untyped-def]
    """Spark reads a catalog table of the `hudi` format through the data source: pyspark 3.5 has
    none, so there the statement is refused before anything is written."""
    pyhudi.register(spark)
    location = tmp_path / "where"
    statement = (
        "CREATE TABLE ddl_where (id string) USING hudi TBLPROPERTIES (primaryKey = 'id') "
        f"LOCATION '{location}'"
    )
    if DATA_SOURCE:
        spark.sql(statement)
        try:
            config = TableContext.open(str(location)).config
            assert config.props["hoodie.table.recordkey.fields"] == "id"
        finally:
            spark.sql("DROP TABLE IF EXISTS ddl_where")
        return
    with pytest.raises(UnsupportedOperationError, match=r"USING hudi needs .*pyspark>=4"):
        spark.sql(statement)
    assert not location.exists() and not spark.catalog.tableExists("ddl_where")
