"""Upserts of small batches: the index lookup and insert routing on the driver
(`pyhudi.index.driver_lookup`, `pyhudi.writer.small_batch`) write the same table as the Spark
lookup, on several file groups per partition, copy-on-write and merge-on-read, with deletes and
duplicate keys in the batch."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from tests.helpers.builders import df_of, trip, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.index import driver_lookup
from pyhudi.table.context import TableContext
from pyhudi.writer.config import resolve_write_config

COLUMNS = ["uuid", "city", "ts", "rider", "fare"]


def _options(table_type: str) -> dict[str, str]:
    return trips_options(
        **{
            "hoodie.datasource.write.table.type": table_type,
            "hoodie.copyonwrite.insert.auto.split": "false",
            "hoodie.copyonwrite.insert.split.size": "100",
            "hoodie.parquet.small.file.limit": "0",
        }
    )


def _batch(spark):  # type: ignore[no-untyped-def]
    updates = [trip(i, ts=2, fare=1000.0 + i) for i in range(0, 600, 7)]  # every file group
    # an older ordering value: still replaces the table's row (version 6 tables' default payload,
    # OverwriteWithLatestAvroPayload, does not compare with the stored record)
    stale = [trip(3, ts=0, fare=-1.0)]
    duplicates = [trip(14, ts=3, fare=3.0), trip(14, ts=4, fare=4.0)]  # the later one wins
    inserts = trips(600, 40, ts=2)
    deletes = [{**trip(21, ts=5), "_hoodie_is_deleted": True}]
    rows_in = [{**r, "_hoodie_is_deleted": False} for r in updates + stale + duplicates + inserts]
    schema = (
        "uuid string, city string, ts long, rider string, fare double, _hoodie_is_deleted boolean"
    )
    return df_of(spark, rows_in + deletes, schema)


def _expected() -> list[dict]:
    table = {t["uuid"]: t for t in trips(0, 600)}
    for i in range(0, 600, 7):
        table[f"id-{i:05d}"] = trip(i, ts=2, fare=1000.0 + i)
    table["id-00003"] = trip(3, ts=0, fare=-1.0)
    table["id-00014"] = trip(14, ts=4, fare=4.0)
    table.update({t["uuid"]: t for t in trips(600, 40, ts=2)})
    del table["id-00021"]
    return sorted(table.values(), key=lambda r: r["uuid"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_driver_lookup_writes_what_the_spark_lookup_writes(
    spark, tmp_path, monkeypatch, table_type
):
    options = _options(table_type)
    base = str(tmp_path / "base")
    pyhudi.write(
        df_of(spark, trips(0, 600)),
        base,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    groups = pyhudi.HudiTable(base).latest_file_slices()
    assert len(groups) >= 6  # two or more file groups per partition
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    results = {}
    for lookup, max_rows in (("driver", driver_lookup.DRIVER_LOOKUP_MAX_ROWS), ("spark", 0)):
        monkeypatch.setattr(driver_lookup, "DRIVER_LOOKUP_MAX_ROWS", max_rows)
        path = str(tmp_path / lookup)
        shutil.copytree(base, path)
        results[lookup] = pyhudi.write(_batch(spark), path, upsert)
        read = rows(hudi_rs_table(path), key="uuid", columns=COLUMNS)
        assert read == rows(_pyarrow(_expected()), key="uuid", columns=COLUMNS), lookup
        ours = pyhudi.read(spark, path).select(*COLUMNS).orderBy("uuid").collect()
        assert [r.asDict() for r in ours] == read
    driver, spark_side = results["driver"], results["spark"]
    assert driver.num_updates == spark_side.num_updates
    assert driver.num_inserts == spark_side.num_inserts == 40
    assert driver.partitions_written == spark_side.partitions_written
    # the updated file groups are the same ones (inserts open new file groups of random ids)
    assert _updated_groups(tmp_path / "driver", groups) == _updated_groups(
        tmp_path / "spark", groups
    )


def test_driver_lookup_is_skipped_for_large_batches_and_log_only_groups(spark, tmp_path):
    options = _options("MERGE_ON_READ")
    path = str(tmp_path / "t")
    pyhudi.write(
        df_of(spark, trips(0, 30)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    ctx = TableContext.open(path)
    cfg = resolve_write_config(
        {**options, "hoodie.datasource.write.operation": "upsert"}, ctx.config
    )
    partitions = ctx.view().partition_paths()
    files = driver_lookup.driver_lookup_files(ctx, cfg, partitions, 1000)
    assert files is not None and len(files) == len(ctx.view().latest_file_slices())
    too_many = driver_lookup.DRIVER_LOOKUP_MAX_ROWS + 1
    assert driver_lookup.driver_lookup_files(ctx, cfg, partitions, too_many) is None
    global_cfg = resolve_write_config(
        {
            **options,
            "hoodie.index.type": "GLOBAL_SIMPLE",
            "hoodie.datasource.write.operation": "upsert",
        },
        ctx.config,
    )
    assert driver_lookup.driver_lookup_files(ctx, global_cfg, partitions, 10) is None


def _updated_groups(path, before) -> set[str]:  # type: ignore[no-untyped-def]
    old = {s.file_id: s for s in before}
    changed = set()
    for file_slice in pyhudi.HudiTable(str(path)).latest_file_slices():
        previous = old.get(file_slice.file_id)
        if previous is not None and file_slice != previous:
            changed.add(file_slice.file_id)
    return changed


def _pyarrow(records: list[dict]):  # type: ignore[no-untyped-def]
    return pa.Table.from_pylist(records)


def test_small_batch_upsert_reads_back_with_filters(spark, tmp_path):
    """A second small upsert over the first one (the driver lookup finds keys written by it)."""
    options = _options("COPY_ON_WRITE")
    path = str(tmp_path / "t")
    pyhudi.write(
        df_of(spark, trips(0, 300)),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(df_of(spark, trips(290, 20, ts=2)), path, upsert)
    pyhudi.write(df_of(spark, trips(305, 10, ts=3)), path, upsert)
    read = pyhudi.read(spark, path)
    assert read.count() == 315
    assert read.filter(F.col("ts") == 3).count() == 10
    assert read.filter(F.col("ts") == 2).count() == 15
    assert hudi_rs_table(path).num_rows == 315
