"""Merge-on-read writes: log files, bucket index, rollback of failed deltacommits, both readers agree."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from tests.helpers.builders import df_of, trip, trips, trips_options
from tests.helpers.crash import crashed_write
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.codec.log.inspect import inspect_log
from pyhudi.index.bucket import bucket_ids
from pyhudi.model.enums import LogBlockType

MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COLUMNS = ["_hoodie_record_key", "uuid", "city", "ts", "fare"]


def _logs(path):
    return sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk(path)
        for f in fs
        if ".log." in f and ".hoodie" not in d
    )


def _same(spark, path):
    theirs = rows(hudi_rs_table(path), columns=COLUMNS)
    ours = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert ours == theirs
    return ours


def test_updates_and_deletes_go_to_new_log_versions(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.parquet.small.file.limit": "0"}
    pyhudi.write(
        df_of(spark, trips(0, 12)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    result = pyhudi.write(
        df_of(spark, trips(0, 3, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert result.action == "deltacommit" and result.num_updates == 3
    first_logs = _logs(path)
    assert first_logs and all(".log.1_" in p for p in first_logs)
    pyhudi.write(
        df_of(spark, trips(0, 3, ts=3)).select("uuid", "city"),
        path,
        {**options, "hoodie.datasource.write.operation": "delete"},
    )
    logs = _logs(path)
    assert set(first_logs) < set(logs) and any(".log.2_" in p for p in logs)
    kinds = {b.block_type for p in logs for b in inspect_log(p).blocks}
    assert kinds == {LogBlockType.AVRO_DATA_BLOCK.name, LogBlockType.DELETE_BLOCK.name}
    assert [r["uuid"] for r in _same(spark, path)] == [f"id-{i:05d}" for i in range(3, 12)]
    ro = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"})
    assert ro.count() == 12 and ro.filter("ts > 1").count() == 0


def test_failed_deltacommit_is_rolled_back_with_a_command_block(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.parquet.small.file.limit": "0"}
    pyhudi.write(
        df_of(spark, trips(0, 9)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    failed = crashed_write(
        spark,
        path,
        df_of(spark, trips(0, 3, ts=7)),
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert _logs(path)
    # Neither reader sees the uncommitted log blocks.
    assert all(r["ts"] == 1 for r in _same(spark, path))
    result = pyhudi.write(
        df_of(spark, trips(5, 1, ts=9)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert result.rolled_back == (failed,)
    commands = [p for p in _logs(path) if p.split(".log.")[1].split("_")[1] == "1-0-1"]
    assert commands
    blocks = inspect_log(commands[0]).blocks
    assert len(blocks) == 1 and blocks[0].header.get("TARGET_INSTANT_TIME") == failed
    assert sorted(r["ts"] for r in _same(spark, path)) == [1] * 8 + [9]


def test_event_time_ordering_keeps_newer_base_records(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **MOR,
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    }
    pyhudi.write(
        df_of(spark, trips(0, 6, ts=5)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    pyhudi.write(
        df_of(spark, [trip(0, ts=3, fare=-1.0), trip(1, ts=8, fare=8.0)]),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    fares = {r["uuid"]: r["fare"] for r in _same(spark, path)}
    assert fares["id-00000"] == trips(0, 1, ts=5)[0]["fare"] and fares["id-00001"] == 8.0


def test_bucket_index_routes_keys_to_their_bucket_file_groups(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **MOR,
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "4",
    }
    pyhudi.write(
        df_of(spark, trips(0, 40)), path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    slices = pyhudi.HudiTable(path).latest_file_slices()
    assert all(int(s.file_id[:8]) < 4 for s in slices) and len(slices) <= 12
    data = pyhudi.read(spark, path).select("_hoodie_record_key", "_hoodie_file_name").toArrow()
    expected = bucket_ids(data.column("_hoodie_record_key").combine_chunks(), 4)
    actual = [int(name[:8]) for name in data.column("_hoodie_file_name").to_pylist()]
    assert list(expected) == actual
    result = pyhudi.write(
        df_of(spark, trips(0, 5, ts=2) + trips(100, 5, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert result.files_written >= 1 and _logs(path)
    assert len(_same(spark, path)) == 45


def _java_bucket(key: str, buckets: int) -> int:
    """Hudi's bucket of a simple key, spelled out: (List.of(key).hashCode() & MAX_VALUE) % buckets."""
    data = key.encode("utf-16-le")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return (((31 + h) & 0xFFFFFFFF) & 0x7FFFFFFF) % buckets


@pytest.mark.parametrize("keys", [["a"], ["id-00001", "trip-000001", "ü-key", "a" * 40]])
def test_bucket_ids_match_java_list_hash(keys):
    assert list(bucket_ids(pa.array(keys), 7)) == [_java_bucket(k, 7) for k in keys]


def test_spark_and_arrow_bucket_ids_agree(spark):
    from pyspark.sql import functions as F

    from pyhudi.index.bucket import bucket_id_column

    keys = ["id-00001", "trip-000001", "key-0000000042", "x", "uuid-ä", "emoji-\U0001f600"]
    df = spark.createDataFrame([(k,) for k in keys], "k string")
    spark_ids = [r[0] for r in df.select(bucket_id_column(F.col("k"), 256, None, False)).collect()]
    assert (
        spark_ids == list(bucket_ids(pa.array(keys), 256)) == [_java_bucket(k, 256) for k in keys]
    )


def _java_list_bucket(values: list[str], buckets: int) -> int:
    """(List.of(values...).hashCode() & MAX_VALUE) % buckets."""
    h = 1
    for value in values:
        data, s = value.encode("utf-16-le"), 0
        for i in range(0, len(data), 2):
            s = (31 * s + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
        h = (31 * h + s) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % buckets


def test_bucket_ids_of_complex_keys_hash_the_named_fields_in_order(spark):
    from pyspark.sql import functions as F

    from pyhudi.index.bucket import bucket_id_column

    keys = ["uuid:a1,city:sf", "uuid:b2,city:nyc", "uuid:c3,city:chennai"]
    df = spark.createDataFrame([(k,) for k in keys], "k string")
    ids = df.select(bucket_id_column(F.col("k"), 16, ("city", "uuid"), True)).collect()
    expected = [_java_list_bucket([k.split(",")[1][5:], k.split(",")[0][5:]], 16) for k in keys]
    assert [r[0] for r in ids] == expected


def test_bucket_index_upserts_and_deletes_through_the_data_source(spark, tmp_path):

    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **MOR,
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "3",
    }

    def write(df, operation):
        writer = df.write.format("hudi").options(
            **options, **{"hoodie.datasource.write.operation": operation}
        )
        writer.mode("append").save(path)

    write(df_of(spark, trips(0, 30)).repartition(3), "upsert")
    assert len(pyhudi.HudiTable(path).latest_file_slices()) <= 9
    write(df_of(spark, trips(0, 10, ts=2) + trips(50, 4, ts=2)).repartition(2), "upsert")
    write(df_of(spark, trips(20, 5)).select("uuid", "city"), "delete")
    expected = sorted(
        [f"id-{i:05d}" for i in range(0, 20)]
        + [f"id-{i:05d}" for i in range(25, 30)]
        + [f"id-{i:05d}" for i in range(50, 54)]
    )
    ours = _same(spark, path)
    assert [r["uuid"] for r in ours] == expected
    assert {r["uuid"]: r["ts"] for r in ours}["id-00005"] == 2
    assert [c.action.value for c in pyhudi.HudiTable(path).commits()] == ["deltacommit"] * 3
    claims = os.path.join(path, ".hoodie", ".aux", ".pyhudi-claims")
    assert (
        not os.path.exists(claims) or os.listdir(claims) == []
    )  # bucket claims go with the commit


def test_simple_index_finds_keys_that_live_only_in_log_files(spark, tmp_path):
    from pyhudi.codec.schema import arrow_to_avro_json
    from pyhudi.file_group.log_append import LogSpec, SliceState, append_log
    from pyhudi.model.enums import WriteOperationType
    from pyhudi.model.instant import Action
    from pyhudi.table.context import TableContext
    from pyhudi.table.schema import table_arrow_schema
    from pyhudi.writer.config import resolve_write_config
    from pyhudi.writer.job import Outcome
    from pyhudi.writer.pipeline import commit_metadata, task_spec
    from pyhudi.writer.transaction import WriteTransaction

    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.parquet.small.file.limit": "0"}
    pyhudi.write(
        df_of(spark, trips(0, 3, city="sf")),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    # A writer whose index sees log files (e.g. Hudi's bucket index) put new keys into a log-only file group.
    ctx = TableContext.open(path)
    cfg = resolve_write_config(
        {**options, "hoodie.datasource.write.operation": "upsert"}, ctx.config
    )
    schema = table_arrow_schema(ctx)
    transaction = WriteTransaction(ctx, Action.DELTA_COMMIT, WriteOperationType.UPSERT)
    instant = transaction.begin()
    spec = task_spec(ctx, cfg, schema, instant)
    rows = pa.Table.from_pylist(trips(10, 2, city="sf"), schema=schema)
    rows = rows.append_column("_hoodie_record_key", rows.column("uuid")).append_column(
        "_hoodie_partition_path", rows.column("city")
    )
    log_spec = LogSpec(arrow_to_avro_json(spec.file_schema, "trips", with_meta_fields=True), "avro")
    stat = append_log(
        spec,
        log_spec,
        SliceState(instant, None, (), 1),
        "sf",
        "logonly-0",
        "0-1-1",
        0,
        rows,
        rows.slice(0, 0),
        num_updates=0,
    )
    transaction.commit(commit_metadata(cfg, Outcome([stat]), schema))
    assert pyhudi.read(spark, path).count() == 5
    # An upsert of those keys updates them in place: no duplicates.
    result = pyhudi.write(
        df_of(spark, trips(10, 2, ts=5, city="sf")),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert result.num_inserts == 0
    data = pyhudi.read(spark, path).toArrow()
    assert data.num_rows == 5 and sorted(data.column("ts").to_pylist()) == [1, 1, 1, 5, 5]


@pytest.mark.parametrize("literal_max_words", [1 << 20, 0], ids=["bitmap literal", "anti-join"])
def test_snapshot_read_by_position_matches_hudi_rs(spark, tmp_path, monkeypatch, literal_max_words):
    """Base rows replaced or deleted by the logs are dropped by row position (a delete vector per
    base file), as a literal bitmap or, beyond its size limit, a broadcast anti-join."""
    from pyhudi.reader import mor_positions

    monkeypatch.setattr(mor_positions, "LITERAL_MAX_WORDS", literal_max_words)
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.parquet.small.file.limit": "0"}
    write = {**options, "hoodie.datasource.write.operation": "bulk_insert"}
    pyhudi.write(df_of(spark, trips(0, 200)), path, write)
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(df_of(spark, trips(0, 200, ts=2, fare=7.0)[::3] + trips(200, 5)), path, upsert)
    delete = {**options, "hoodie.datasource.write.operation": "delete"}
    pyhudi.write(df_of(spark, trips(1, 60)[::7]).select("uuid", "city"), path, delete)
    assert _logs(path)
    ansi = spark.conf.get("spark.sql.ansi.enabled")
    # Rows past a bitmap's last word are kept, without an index error under ANSI mode.
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        ours = _same(spark, path)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)
    assert len(ours) == 205 - 9  # 200 + 5 inserted, 9 deleted (some of them updated first)
