"""Hudi's `run_bootstrap` and `hive_sync` procedures through `spark.sql` in a registered
session: the bootstrap makes the Hudi table over an existing parquet table (read back equal to
the source), and `hive_sync` brings a catalog table's columns up to date after the Hudi table's
schema grew."""

from __future__ import annotations

import pytest
from tests.helpers.bootstrap import DATA_COLUMNS, SELECTOR, existing_table, source_rows
from tests.helpers.pyspark_versions import needs_catalog_tables

import pyhudi


def test_run_bootstrap_makes_the_hudi_table(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    source = existing_table(spark, str(tmp_path / "source"), hive=True)
    target = str(tmp_path / "boot")
    call = f"""CALL run_bootstrap(table => 'booted', table_type => 'COPY_ON_WRITE',
        bootstrap_path => '{source}', base_path => '{target}', rowKey_field => 'key',
        partition_path_field => 'dt', selector_class => '{SELECTOR.format("FullRecord")}'
        {{extra}})"""
    assert spark.sql(call.format(extra="")).collect()[0].status == 0
    table = pyhudi.HudiTable(target)
    assert table.table_type.value == "COPY_ON_WRITE" and table.name == "booted"
    got = sorted(pyhudi.read(spark, target).select(*DATA_COLUMNS).collect())
    assert got == source_rows(spark, source, hive=True)
    with pytest.raises(pyhudi.TableExistsError):
        spark.sql(call.format(extra=""))
    overwritten = spark.sql(call.format(extra=", bootstrap_overwrite => true")).collect()
    assert overwritten[0].status == 0 and len(pyhudi.HudiTable(target).commits()) == 1
    with pytest.raises(pyhudi.UnsupportedOperationError, match="base_file_format"):
        spark.sql(call.format(extra=", base_file_format => 'ORC'"))


@needs_catalog_tables
def test_hive_sync_brings_the_catalog_table_up_to_date(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    path = str(tmp_path / "synced")
    options = {
        "hoodie.table.name": "synced",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
    }
    pyhudi.write(spark.createDataFrame([("a", 1)], "id string, ts long"), path, options)
    spark.sql(f"CREATE TABLE synced_t USING hudi LOCATION '{path}'")
    try:
        wider = spark.createDataFrame([("b", 2, 0.5)], "id string, ts long, tip double")
        pyhudi.write(wider, path, options)
        assert "tip" not in spark.table("synced_t").columns  # the catalog kept the old schema
        (row,) = spark.sql("CALL hive_sync(table => 'synced_t')").collect()
        assert row.result == "hive sync success."
        assert "tip" in spark.table("synced_t").columns
        assert sorted(tuple(r) for r in spark.sql("SELECT id, tip FROM synced_t").collect()) == [
            ("a", None),
            ("b", 0.5),
        ]
        with pytest.raises(pyhudi.UnsupportedOperationError, match="metastore_uri"):
            spark.sql("CALL hive_sync(table => 'synced_t', metastore_uri => 'thrift://x:9083')")
    finally:
        spark.sql("DROP TABLE IF EXISTS synced_t")
