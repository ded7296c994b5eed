"""Query types, partition pruning and the Spark plans behind reads."""

from __future__ import annotations

import pytest
from tests.helpers.builders import df_of, trips, trips_options

import pyhudi
from pyhudi.exceptions import ConfigError
from pyhudi.reader.planner import plan_read
from pyhudi.table.context import TableContext


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("reads") / "t")
    options = {**trips_options(), "hoodie.datasource.write.hive_style_partitioning": "true"}
    first = pyhudi.write(
        df_of(spark, trips(0, 30)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    second = pyhudi.write(
        df_of(spark, trips(0, 3, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    return path, first.instant_time, second.instant_time


def test_snapshot_reads_use_sparks_native_parquet_scan(spark, table):
    path, _, _ = table
    plan = pyhudi.read(spark, path)._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "PythonScan" not in plan


def test_partition_filters_prune_partitions_before_listing_files(spark, table):
    path, _, _ = table
    ctx = TableContext.open(path)
    plan = plan_read(ctx, {}, [("city", "=", "sf")])
    assert {s.partition_path for s in plan.base_only} == {"city=sf"}
    df = pyhudi.read(spark, path, filters=[("city", "in", ["sf", "chennai"]), ("ts", ">=", 1)])
    assert df.count() == 20 and {r.city for r in df.collect()} == {"sf", "chennai"}


def test_time_travel_accepts_hudi_instant_formats(spark, table):
    path, first, second = table
    assert pyhudi.read(spark, path, {"as.of.instant": first}).filter("ts = 2").count() == 0
    readable = f"{first[:4]}-{first[4:6]}-{first[6:8]} {first[8:10]}:{first[10:12]}:{first[12:14]}.{first[14:17]}"
    assert pyhudi.read(spark, path, {"as.of.instant": readable}).filter("ts = 2").count() == 0
    assert pyhudi.read(spark, path, {"as.of.instant": second}).filter("ts = 2").count() == 3
    assert pyhudi.read(spark, path, {"as.of.instant": "2000-01-01"}).count() == 0
    with pytest.raises(ConfigError, match=r"as\.of\.instant"):
        pyhudi.read(spark, path, {"as.of.instant": "yesterday"})


def test_incremental_needs_a_begin_instant_and_honours_the_end(spark, table):
    path, first, _ = table
    incremental = {"hoodie.datasource.query.type": "incremental"}
    with pytest.raises(ConfigError, match=r"begin\.instanttime"):
        pyhudi.read(spark, path, incremental)
    after_first = pyhudi.read(
        spark, path, {**incremental, "hoodie.datasource.read.begin.instanttime": first}
    )
    assert sorted(r.uuid for r in after_first.collect()) == ["id-00000", "id-00001", "id-00002"]
    up_to_first = pyhudi.read(
        spark,
        path,
        {
            **incremental,
            "hoodie.datasource.read.begin.instanttime": "000",
            "hoodie.datasource.read.end.instanttime": first,
        },
    )
    assert up_to_first.count() == 30 and up_to_first.filter("ts = 2").count() == 0


def test_read_optimized_on_copy_on_write_equals_snapshot(spark, table):
    path, _, _ = table
    ro = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"})
    assert sorted(ro.collect()) == sorted(pyhudi.read(spark, path).collect())


def test_data_source_reader_prunes_with_pushed_filters(spark, table):
    path, _, _ = table
    df = spark.read.format("hudi").load(path).filter("city = 'sao_paulo'")
    assert df.count() == 10
    assert sorted(spark.read.format("hudi").load(path).collect()) == sorted(
        pyhudi.read(spark, path).collect()
    )
    as_of = spark.read.format("hudi").option("as.of.instant", table[1]).load(path)
    assert as_of.filter("ts = 2").count() == 0


def test_filters_with_unknown_operators_are_rejected(spark, table):
    with pytest.raises(ConfigError, match="op"):
        pyhudi.read(spark, table[0], filters=[("city", "~", "sf")])
