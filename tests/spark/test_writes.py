"""Write operations on copy-on-write tables: sizing, schema evolution, soft deletes, global index."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import functions as F
from tests.helpers.builders import df_of, trip, trips, trips_options
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.spark.source_operations import runs_as_data_source
from pyhudi.spark_compat import pyspark_version
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext
from pyhudi.writer import partitioner
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.job import TASK_RECORDS, WriteJob, write_tasks
from pyhudi.writer.operations import rewritable_groups


def test_inserts_fill_small_files_before_new_file_groups(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options(**{"hoodie.datasource.write.partitionpath.field": ""})
    options.pop("hoodie.datasource.write.partitionpath.field")
    pyhudi.write(
        df_of(spark, trips(0, 10)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    first = pyhudi.HudiTable(path).latest_file_slices()
    assert len(first) == 1
    pyhudi.write(
        df_of(spark, trips(10, 10)),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    second = pyhudi.HudiTable(path).latest_file_slices()
    assert [s.file_id for s in second] == [first[0].file_id]  # appended into the small file
    assert hudi_rs_table(path).num_rows == 20


def test_insert_split_size_bounds_new_file_groups(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.copyonwrite.insert.auto.split": "false",
        "hoodie.copyonwrite.insert.split.size": "10",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.operation": "insert",
    }
    pyhudi.write(df_of(spark, trips(0, 90, city="sf")), path, options)
    slices = pyhudi.HudiTable(path).latest_file_slices()
    assert len(slices) == 9
    counts = [
        pyhudi.read(spark, path).filter(F.col("_hoodie_file_name") == s.base_file.file_name).count()
        for s in slices
    ]
    assert sum(counts) == 90 and max(counts) < 30  # key-hash spreading, as Hudi does


def test_bulk_insert_rolls_over_at_max_file_size(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.parquet.max.file.size": "1",
        "hoodie.datasource.write.operation": "bulk_insert",
        "hoodie.parquet.bloom.filter.enabled": "false",
    }
    rows = (
        spark.range(0, 40000)
        .select(
            F.format_string("k%d", "id").alias("uuid"),
            F.lit("sf").alias("city"),
            F.lit(1).cast("long").alias("ts"),
            F.lit("r").alias("rider"),
            F.rand().alias("fare"),
        )
        .coalesce(1)
    )
    pyhudi.write(rows, path, options)
    slices = pyhudi.HudiTable(path).latest_file_slices()
    assert (
        len(slices) == 4
    )  # every 10,000-row Arrow batch overflows the 1-byte target: a new file each
    assert (
        len({s.file_id.rsplit("-", 1)[0] for s in slices}) == 1
    )  # one file-id prefix, numbered -0..-3
    assert hudi_rs_table(path).num_rows == 40000


def test_new_nullable_column_is_accepted_and_old_files_read_null(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(df_of(spark, trips(0, 6)), path, options)
    wider = (
        df_of(spark, trips(100, 3, city="sf"))
        .withColumn("tip", F.lit(2.5))
        .withColumn("ts", F.col("ts").cast("long"))
    )
    pyhudi.write(wider, path, options)
    df = pyhudi.read(spark, path)
    assert "tip" in df.columns
    assert df.filter("tip is null").count() == 6
    assert df.filter("tip = 2.5").count() == 3
    theirs = hudi_rs_table(path)
    assert sorted(v for v in theirs.column("tip").to_pylist() if v is not None) == [2.5, 2.5, 2.5]


@pytest.mark.xfail(
    pyspark_version() < (4, 0),
    reason="Spark 3.5's Parquet reader does not widen the older INT32 files to bigint",
    strict=True,
)
def test_widening_int_to_long_rewrites_with_the_wider_type(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "upsert"}
    narrow = df_of(spark, trips(0, 4)).withColumn("ts", F.col("ts").cast("int"))
    pyhudi.write(narrow, path, options)
    pyhudi.write(df_of(spark, trips(0, 2, ts=7)), path, options)
    df = pyhudi.read(spark, path)
    assert dict(df.dtypes)["ts"] == "bigint"
    assert sorted(r.ts for r in df.collect()) == [1, 1, 7, 7]


def test_soft_deletes_remove_records(spark, tmp_path):
    path = str(tmp_path / "t")
    schema = (
        "uuid string, city string, ts long, rider string, fare double, _hoodie_is_deleted boolean"
    )
    options = {**trips_options(), "hoodie.datasource.write.operation": "upsert"}
    rows = [{**r, "_hoodie_is_deleted": False} for r in trips(0, 6)]
    pyhudi.write(df_of(spark, rows, schema), path, options)
    deletes = [
        {**trip(1, ts=2), "_hoodie_is_deleted": True},
        {**trip(50, ts=2), "_hoodie_is_deleted": True},
    ]
    result = pyhudi.write(df_of(spark, deletes, schema), path, options)
    assert result.num_deletes == 1 and result.num_inserts == 0
    assert sorted(hudi_rs_table(path).column("uuid").to_pylist()) == [
        f"id-{i:05d}" for i in (0, 2, 3, 4, 5)
    ]


def test_global_index_moves_a_key_to_its_new_partition(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.index.type": "GLOBAL_SIMPLE",
        "hoodie.datasource.write.operation": "upsert",
    }
    pyhudi.write(df_of(spark, trips(0, 6)), path, options)
    moved = [trip(0, ts=2, city="chennai")]
    pyhudi.write(df_of(spark, moved), path, options)
    theirs = {r["uuid"]: r["city"] for r in hudi_rs_table(path).to_pylist()}
    assert len(theirs) == 6 and theirs["id-00000"] == "chennai"


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "BLOOM"])
def test_a_key_in_two_partitions_is_updated_only_in_its_own(spark, tmp_path, index, table_type):
    """Non-global indexes match (key, partition): the same key stored in another partition is
    not this record's location, so the other partition's row stays as it was."""
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.index.type": index,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.operation": "upsert",
    }
    both = [trip(1, city="sf", fare=1.0), trip(1, city="nyc", fare=2.0), trip(2, city="sf")]
    pyhudi.write(df_of(spark, both), path, options)
    result = pyhudi.write(df_of(spark, [trip(1, ts=2, city="nyc", fare=9.0)]), path, options)
    assert (result.num_updates, result.num_inserts) == (1, 0)
    fares = {(r["uuid"], r["city"]): r["fare"] for r in hudi_rs_table(path).to_pylist()}
    assert fares == {("id-00001", "sf"): 1.0, ("id-00001", "nyc"): 9.0, ("id-00002", "sf"): 2.1}


def test_bloom_index_upsert_matches_simple_index(spark, tmp_path):
    results = {}
    for index in ("SIMPLE", "BLOOM"):
        path = str(tmp_path / index)
        options = {
            **trips_options(),
            "hoodie.index.type": index,
            "hoodie.datasource.write.operation": "upsert",
        }
        pyhudi.write(df_of(spark, trips(0, 30)), path, options)
        result = pyhudi.write(df_of(spark, trips(20, 20, ts=3)), path, options)
        results[index] = (result.num_updates, result.num_inserts, hudi_rs_table(path).num_rows)
    assert results["SIMPLE"] == results["BLOOM"] == (10, 10, 40)


def test_commit_metadata_records_schema_and_extra_metadata(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.datasource.write.operation": "insert",
        "_checkpoint": "kafka:42",
    }
    result = pyhudi.write(df_of(spark, trips(0, 3)), path, options)
    metadata = pyhudi.HudiTable(path).commit_metadata(result.instant_time)
    assert metadata.extra_metadata["_checkpoint"] == "kafka:42"
    assert (
        '"name":"trips_record"' in metadata.schema
        and '"namespace":"hoodie.trips"' in metadata.schema
    )
    props = pyhudi.HudiTable(path).properties
    assert props["hoodie.table.version"] == "6" and props["hoodie.table.timeline.timezone"] == "UTC"


def test_write_stage_gives_a_task_to_each_rewrite_and_to_each_large_new_file_group(spark, tmp_path):
    """One write task per base file rewritten and per new file group of `TASK_RECORDS` records or
    more; smaller new groups share tasks (each Python task costs JVM set-up)."""
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.copyonwrite.insert.auto.split": "false",
        "hoodie.copyonwrite.insert.split.size": str(2 * TASK_RECORDS),
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.datasource.write.operation": "upsert",
    }
    pyhudi.write(df_of(spark, trips(0, 10)), path, options)
    cfg = resolve_write_config(options, None)
    job = WriteJob(spark, TableContext.open(path), cfg, None, None)  # type: ignore[arg-type]
    cores = default_parallelism(spark)
    small = {"a": TASK_RECORDS // 10, "b": TASK_RECORDS // 10, "c": TASK_RECORDS // 10}
    assert len(partitioner.plan_for_job(job, small, small_files=True)) == 3
    assert job.new_file_units == pytest.approx(0.3)
    assert write_tasks(job, 0) == cores  # three small groups: a share of one task
    assert write_tasks(job, 7) == max(cores, 8)  # plus seven base files rewritten
    # 6 x TASK_RECORDS in groups of at most 2 x TASK_RECORDS: three groups, a task each
    assert len(partitioner.plan_for_job(job, {"d": 6 * TASK_RECORDS}, small_files=True)) == 3
    assert write_tasks(job, 0) == max(cores, 4)
    parallel = resolve_write_config({**options, "hoodie.upsert.shuffle.parallelism": "3"}, None)
    assert write_tasks(WriteJob(spark, job.ctx, parallel, None, None), 7) == 3  # type: ignore[arg-type]


def test_copy_on_write_stage_is_sized_by_the_slices_its_records_can_reach(spark, tmp_path):
    """A small upsert into a large copy-on-write table does not start a task per file group of the
    table: only the slices of its partitions count, and at most one per record."""
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.copyonwrite.insert.split.size": "5"}
    options["hoodie.copyonwrite.insert.auto.split"] = "false"
    data = trips(0, 20, city="sf") + trips(20, 30, city="nyc")
    pyhudi.write(
        df_of(spark, data), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    ctx = TableContext.open(path)
    by_city = Counter(s.partition_path for s in ctx.view().latest_file_slices())
    assert by_city == {"sf": 4, "nyc": 6}
    job = WriteJob(spark, ctx, resolve_write_config(options, None), None, None)  # type: ignore[arg-type]
    assert rewritable_groups(job) == 10  # partitions not counted: every slice
    job.incoming_counts = {"sf": 3}
    assert rewritable_groups(job) == 3  # three records reach three slices at most
    job.incoming_counts = {"sf": 50}
    assert rewritable_groups(job) == 4
    global_index = {**options, "hoodie.index.type": "GLOBAL_SIMPLE"}
    job.cfg = resolve_write_config(global_index, None)
    assert rewritable_groups(job) == 10  # records may move to any partition


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["insert", "upsert"])
def test_drop_duplicates_keeps_the_stored_records(spark, tmp_path, operation, table_type):
    """`hoodie.datasource.write.insert.drop.duplicates`: incoming records whose key the table holds
    are dropped, on inserts and upserts as in Hudi 0.14, which commits such an upsert as an insert
    (an upsert used to overwrite them)."""
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.table.type": table_type}
    pyhudi.write(
        df_of(spark, trips(0, 5, city="sf")),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    drop = {
        **options,
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.insert.drop.duplicates": "true",
    }
    pyhudi.write(df_of(spark, trips(3, 4, ts=9, city="sf")), path, drop)
    expected = [(f"id-{i:05d}", 1) for i in range(5)] + [(f"id-{i:05d}", 9) for i in (5, 6)]
    assert sorted((r.uuid, r.ts) for r in pyhudi.read(spark, path).collect()) == expected
    ctx = TableContext.open(path)
    last = ctx.active.commit_metadata(ctx.active.timeline.commits().last)
    assert last.operation_type.value == "INSERT"
    table = hudi_rs_table(path)
    assert sorted(zip(table.column("uuid").to_pylist(), table.column("ts").to_pylist())) == expected
    if operation == "insert":  # the data source cannot look keys up: `pyhudi.write` runs it
        pyhudi.register(spark)
        assert not runs_as_data_source(path, drop, overwrite=False)
        writer = df_of(spark, trips(3, 5, ts=11, city="sf")).write.format("hudi").options(**drop)
        writer.mode("append").save(path)
        expected.append(("id-00007", 11))
        assert sorted((r.uuid, r.ts) for r in pyhudi.read(spark, path).collect()) == expected


@pytest.mark.parametrize(
    ("operation", "extra", "refusal"),
    [
        ("bulk_insert", {}, "with bulk_insert is not supported"),
        ("insert", {"hoodie.index.type": "BUCKET"}, "with hoodie.index.type=BUCKET"),
        ("upsert", {"hoodie.index.type": "BUCKET"}, "with hoodie.index.type=BUCKET"),
    ],
)
def test_drop_duplicates_where_it_cannot_look_keys_up_is_refused(operation, extra, refusal):
    options = {
        **trips_options(),
        **extra,
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.insert.drop.duplicates": "true",
    }
    with pytest.raises(pyhudi.UnsupportedOperationError, match=refusal):
        resolve_write_config(options, None)
