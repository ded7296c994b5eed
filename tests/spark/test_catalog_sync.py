"""Catalog sync in a session without Hive support (the shared test session's in-memory catalog):
a Spark-only `USING hudi` table and a warning that says so. The Hive metastore path is tested in
tests/deploy/test_hive_sync.py (it needs a Hive-enabled session of its own)."""

from __future__ import annotations

import json
import logging

from tests.helpers.pyspark_versions import needs_catalog_tables

import pyhudi


@needs_catalog_tables
def test_sync_without_hive_support_registers_a_spark_only_table_and_warns(spark, tmp_path, caplog):
    df = spark.createDataFrame(
        [("a", "sf", 1), ("b", "nyc", 1)], "uuid string, city string, ts long"
    )
    options = {
        "hoodie.table.name": "fallback_sync",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "insert",
        "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.datasource.hive_sync.database": "fallback_db",
    }
    with caplog.at_level(logging.WARNING, logger="pyhudi.spark.sync"):
        pyhudi.write(df, str(tmp_path / "t"), options)
    warnings = [r.getMessage() for r in caplog.records if r.name == "pyhudi.spark.sync"]
    assert len(warnings) == 1
    assert "no Hive support" in warnings[0] and "Spark-only" in warnings[0]
    assert spark.table("fallback_db.fallback_sync").count() == 2
    spark.sql("DROP TABLE fallback_db.fallback_sync")


@needs_catalog_tables
def test_a_stream_syncs_the_catalog_after_its_micro_batches(spark, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    (source / "batch-0.json").write_text(
        "\n".join(json.dumps({"uuid": f"k{i}", "city": "sf", "ts": 1}) for i in range(3))
    )
    stream = spark.readStream.schema("uuid string, city string, ts long").json(str(source))
    options = {
        "hoodie.table.name": "streamed_sync",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.datasource.hive_sync.database": "stream_db",
    }
    query = pyhudi.stream_write(
        stream,
        str(tmp_path / "t"),
        options,
        checkpoint_location=str(tmp_path / "chk"),
        trigger={"availableNow": True},
    )
    query.awaitTermination()
    assert spark.table("stream_db.streamed_sync").count() == 3
    spark.sql("DROP TABLE stream_db.streamed_sync")
