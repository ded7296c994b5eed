"""Every table pyhudi writes is read by the independent reader hudi-rs with exactly the expected rows:
snapshot after each write, time travel to every instant, incremental between instants."""

from __future__ import annotations

import pytest
from tests.helpers.builders import df_of, trip, trips, trips_options
from tests.helpers.model import TableModel, project
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi

COLUMNS = ["_hoodie_commit_time", "_hoodie_record_key", "uuid", "city", "ts", "rider", "fare"]


def _check_all(spark, path: str, model: TableModel) -> None:
    for instant in model.instants:
        expected = model.snapshot(instant)
        assert project(rows(hudi_rs_table(path, as_of=instant)), COLUMNS) == expected, (
            f"hudi-rs as of {instant}"
        )
        ours = pyhudi.read(spark, path, {"as.of.instant": instant}).toArrow()
        assert project(rows(ours), COLUMNS) == expected, f"pyhudi as of {instant}"
    for begin, end in zip(["00000000000000000", *model.instants[:-1]], model.instants):
        expected = model.incremental(begin, end)
        theirs = hudi_rs_table(path, start=begin, end=end)
        assert project(rows(theirs), COLUMNS) == expected, f"hudi-rs incremental ({begin}, {end}]"
        ours = pyhudi.read(
            spark,
            path,
            {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": begin,
                "hoodie.datasource.read.end.instanttime": end,
            },
        ).toArrow()
        assert project(rows(ours), COLUMNS) == expected, f"pyhudi incremental ({begin}, {end}]"


@pytest.mark.parametrize(
    "table_type,block_format",
    [("COPY_ON_WRITE", "avro"), ("MERGE_ON_READ", "avro"), ("MERGE_ON_READ", "parquet")],
)
def test_lifecycle_is_read_identically_by_hudi_rs(spark, tmp_path, table_type, block_format):
    path = str(tmp_path / "trips")
    options = trips_options(
        **{
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.datasource.write.table.type": table_type,
            "hoodie.logfile.data.block.format": block_format,
        }
    )
    model = TableModel(key="uuid", partition="city")

    first = trips(0, 30)
    r = pyhudi.write(
        df_of(spark, first), path, {**options, "hoodie.datasource.write.operation": "bulk_insert"}
    )
    model.insert(r.instant_time, first)
    assert project(rows(hudi_rs_table(path)), COLUMNS) == model.snapshot()

    batch = (
        trips(0, 10, ts=2)
        + trips(30, 5, ts=2)
        + [trip(1, ts=1, fare=-1.0), trip(2, ts=5, fare=99.0)]
    )
    r = pyhudi.write(
        df_of(spark, batch), path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    model.upsert(r.instant_time, batch, ordering="ts")
    assert (r.num_updates, r.num_inserts) == (10, 5)
    assert project(rows(hudi_rs_table(path)), COLUMNS) == model.snapshot()

    gone = [trip(i) for i in (3, 4, 31)]
    r = pyhudi.write(
        df_of(spark, gone).select("uuid", "city"),
        path,
        {**options, "hoodie.datasource.write.operation": "delete"},
    )
    model.delete(r.instant_time, [g["uuid"] for g in gone])
    assert r.num_deletes == 3

    extra = trips(40, 4, ts=3)
    r = pyhudi.write(
        df_of(spark, extra), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    model.insert(r.instant_time, extra)

    sf_only = trips(100, 3, ts=4, city="sf")
    r = pyhudi.write(
        df_of(spark, sf_only),
        path,
        {**options, "hoodie.datasource.write.operation": "insert_overwrite"},
    )
    model.overwrite(r.instant_time, sf_only, whole_table=False)
    assert r.replaced_file_groups >= 1

    r = pyhudi.write(
        df_of(spark, []),
        path,
        {
            **options,
            "hoodie.datasource.write.operation": "delete_partition",
            "hoodie.datasource.write.partitions.to.delete": "city=chennai",
        },
    )
    model.drop_partitions(r.instant_time, {"chennai"})
    assert project(rows(hudi_rs_table(path)), COLUMNS) == model.snapshot()
    _check_all(spark, path, model)


def test_cow_non_partitioned_complex_keys_read_by_hudi_rs(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "uuid,rider",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
    }
    data = trips(0, 12)
    pyhudi.write(
        df_of(spark, data), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    changed = trips(0, 4, ts=9)
    pyhudi.write(
        df_of(spark, changed), path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    table = hudi_rs_table(path)
    keys = sorted(table.column("_hoodie_record_key").to_pylist())
    assert keys == sorted(f"uuid:{r['uuid']},rider:{r['rider']}" for r in data)
    assert set(table.column("_hoodie_partition_path").to_pylist()) == {""}
    fares = {r["uuid"]: r["fare"] for r in table.to_pylist()}
    assert fares["id-00000"] == changed[0]["fare"] and fares["id-00011"] == data[11]["fare"]


def test_cow_event_time_payload_keeps_newer_stored_record(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options(
        **{
            "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
        }
    )
    model = TableModel(key="uuid", partition="city")
    data = trips(0, 6, ts=5)
    r = pyhudi.write(
        df_of(spark, data), path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    model.upsert(r.instant_time, data, ordering="ts", event_time=True)
    late = [trip(0, ts=3, fare=-3.0), trip(1, ts=7, fare=7.0)]
    r = pyhudi.write(
        df_of(spark, late), path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    model.upsert(r.instant_time, late, ordering="ts", event_time=True)
    snapshot = project(rows(hudi_rs_table(path)), COLUMNS)
    assert snapshot == model.snapshot()
    fares = {row["uuid"]: row["fare"] for row in snapshot}
    assert fares["id-00000"] == data[0]["fare"] and fares["id-00001"] == 7.0


ALL_TYPES = (
    "uuid string, city string, ts long, flag boolean, small int, ratio float, amount decimal(12,3), "
    "day date, at timestamp, blob binary"
)
NESTED = ", tags array<string>, attrs map<string,int>, point struct<x:double,y:double>"


def _typed_rows(start: int, count: int, ts: int, nested: bool) -> list[tuple]:
    import datetime as dt
    from decimal import Decimal

    out = []
    for i in range(start, start + count):
        row = (
            f"k{i:05d}",
            ("sf", "nyc")[i % 2],
            ts,
            i % 3 == 0,
            i,
            i / 7,
            Decimal(i) / 1000 - Decimal("0.5"),
            dt.date(2024, 1, 1) + dt.timedelta(days=i),
            dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=i * ts),
            bytes([i % 256, ts % 256]),
        )
        if nested:
            row += ([f"t{i}", "x"], {"a": i, "b": ts}, {"x": float(i), "y": float(ts)})
        out.append(row)
    return out


@pytest.mark.parametrize("nested", [False, True], ids=["flat-columnar-avro", "nested-fastavro"])
def test_merge_on_read_with_every_type_is_read_identically_by_hudi_rs(spark, tmp_path, nested):
    path = str(tmp_path / "typed")
    schema = ALL_TYPES + (NESTED if nested else "")
    options = {
        **trips_options("typed"),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    pyhudi.write(
        spark.createDataFrame(_typed_rows(0, 300, 1, nested), schema),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    updates = spark.createDataFrame(
        _typed_rows(0, 200, 2, nested), schema
    )  # >= 64 records per log block
    pyhudi.write(updates, path, {**options, "hoodie.datasource.write.operation": "upsert"})
    ours = rows(pyhudi.read(spark, path).toArrow())
    theirs = rows(hudi_rs_table(path))
    assert len(ours) == 300 and ours == theirs
    assert sum(1 for r in ours if r["ts"] == 2) == 200
