"""A write left requested/inflight by a crash is invisible, then rolled back by the next write."""

from __future__ import annotations

import os
import time

import pytest
from pyspark.errors import PythonException
from pyspark.sql import functions as F
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.crash import crashed_write
from tests.helpers.oracle import hudi_rs_table
from tests.helpers.pyspark_versions import raises_from_format_hudi

import pyhudi
from pyhudi.codec import avro_schemas
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.model.enums import LogBlockType


def _files(path):
    return sorted(
        os.path.relpath(os.path.join(d, f), path)
        for d, _, fs in os.walk(path)
        for f in fs
        if f.endswith(".parquet")
    )


def test_crashed_upsert_is_invisible_and_rolled_back_by_next_write(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    pyhudi.write(
        df_of(spark, trips(0, 12)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    committed_files = _files(path)

    failed = crashed_write(
        spark,
        path,
        df_of(spark, trips(0, 6, ts=9) + trips(50, 3, ts=9)),
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    uncommitted = set(_files(path)) - set(committed_files)
    assert uncommitted
    assert os.path.exists(os.path.join(path, ".hoodie", f"{failed}.inflight"))
    # Neither reader sees the uncommitted files.
    assert hudi_rs_table(path).num_rows == 12
    assert sorted(set(hudi_rs_table(path).column("ts").to_pylist())) == [1]
    assert pyhudi.read(spark, path).filter("ts = 9").count() == 0

    result = pyhudi.write(
        df_of(spark, trips(60, 2, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    assert result.rolled_back == (failed,)
    meta = os.path.join(path, ".hoodie")
    assert not any(name.startswith(failed) for name in os.listdir(meta))
    rollback = [n for n in os.listdir(meta) if n.endswith(".rollback")]
    assert len(rollback) == 1
    with open(os.path.join(meta, rollback[0]), "rb") as handle:
        metadata = avro_schemas.decode_container(handle.read())
    assert metadata["commitsRollback"] == [failed]
    assert metadata["totalFilesDeleted"] == len(uncommitted)
    assert not uncommitted & set(_files(path))
    assert not os.path.exists(os.path.join(meta, ".temp", failed))
    assert hudi_rs_table(path).num_rows == pyhudi.read(spark, path).count() == 14


def test_failed_job_is_undone_at_once(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    pyhudi.write(
        df_of(spark, trips(0, 5)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    before = sorted(os.listdir(os.path.join(path, ".hoodie")))
    rows = trips(10, 4)
    rows[2]["uuid"] = ""
    with pytest.raises(pyhudi.InvalidRecordError):
        pyhudi.write(
            df_of(spark, rows), path, {**options, "hoodie.datasource.write.operation": "insert"}
        )
    assert sorted(os.listdir(os.path.join(path, ".hoodie"))) == before
    assert hudi_rs_table(path).num_rows == 5


def test_eager_rollback_comes_before_the_next_writes_instant(spark, tmp_path):
    """On MOR the rollback of a failed deltacommit appends a command block to the log files the
    next write appends to; its instant must be earlier than that write's, as in Hudi's
    `startCommit`: a Hudi 0.14 log scan at the write's instant stops at the first block later
    than it and would miss the write's updates behind the command block."""
    path = str(tmp_path / "mor")
    options = {
        **trips_options(),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(
        df_of(spark, trips(0, 12)),
        path,
        {**upsert, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    failed = crashed_write(spark, path, df_of(spark, trips(0, 6, ts=7)), upsert)
    result = pyhudi.write(df_of(spark, trips(0, 6, ts=9)), path, upsert)
    assert result.rolled_back == (failed,)
    meta = os.path.join(path, ".hoodie")
    (rollback,) = [n.split(".")[0] for n in os.listdir(meta) if n.endswith(".rollback")]
    assert failed < rollback < result.instant_time
    commands = 0
    for folder, _, names in os.walk(path):
        for name in (n for n in names if ".log." in n and ".hoodie" not in folder):
            with open(os.path.join(folder, name), "rb") as handle:
                blocks = list(iter_blocks(handle.read(), read_content=False))
            commands += sum(b.block_type is LogBlockType.COMMAND_BLOCK for b in blocks)
            # no block is later than the latest commit: a Hudi 0.14 scan reads every one
            assert max(b.instant_time for b in blocks) <= result.instant_time
    assert commands  # the failed blocks were rolled back by command blocks in the logs
    assert sorted(r["ts"] for r in pyhudi.read(spark, path).collect()) == [1] * 6 + [9] * 6
    assert sorted(hudi_rs_table(path).column("ts").to_pylist()) == [1] * 6 + [9] * 6


def _data_files(path):
    return sorted(
        os.path.relpath(os.path.join(d, f), path)
        for d, _, fs in os.walk(path)
        for f in fs
        if ".hoodie" not in os.path.relpath(d, path).split(os.sep)
    )


@pytest.mark.parametrize(
    ("table_type", "via"),
    [
        ("COPY_ON_WRITE", "pyhudi.write"),
        ("MERGE_ON_READ", "pyhudi.write"),
        ("MERGE_ON_READ", "hudi"),
    ],
)
def test_a_failed_write_leaves_no_file_behind(spark, tmp_path, table_type, via):
    """One task of the write job fails (a null key at the end of its rows) while the other is
    writing its files: Spark fails the job without waiting for that task, whose Python worker
    goes on writing after the driver has rolled the write back. The late task finds the instant
    gone and removes its own files (`writer.late_tasks`; without it, `bulk_insert` left files in
    6 of 6 tries). The `format("hudi")` upsert into a bucket-indexed merge-on-read table (log
    files) used to write a null key without a word (`keygen.arrow.record_keys`); its tasks
    buffer their input, and this one has not been seen to outlive the abort."""
    path = str(tmp_path / "t")
    options = {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "key",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": "bulk_insert",
    }
    if via == "hudi":
        options.update({"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"})
    rows = 300_000
    ids = spark.range(0, rows, 1, numPartitions=2)  # two tasks, rows 0..149999 in the first
    key = F.concat(F.lit("k"), F.col("id").cast("string"))
    records = ids.select(
        F.when(F.col("id") == rows // 2 - 1, F.lit(None)).otherwise(key).alias("key"),
        F.concat(F.lit("p"), (F.col("id") % 3).cast("string")).alias("part"),
        F.col("id").alias("ts"),
        *[F.rand(i).alias(f"c{i}") for i in range(8)],
    )
    pyhudi.write(records.filter("key is not null").limit(10), path, options)
    before = _data_files(path)
    meta = sorted(os.listdir(os.path.join(path, ".hoodie")))
    if via == "hudi":
        upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
        with raises_from_format_hudi(PythonException, "InvalidRecordError", "null or empty"):
            records.write.format("hudi").options(**upsert).mode("append").save(path)
    else:
        with pytest.raises(pyhudi.InvalidRecordError, match="null or empty"):
            pyhudi.write(records, path, options)
    time.sleep(3)  # the other task's Python worker finishes its files meanwhile
    assert _data_files(path) == before
    assert sorted(os.listdir(os.path.join(path, ".hoodie"))) == meta
    assert not os.listdir(os.path.join(path, ".hoodie", ".temp"))
    assert hudi_rs_table(path).num_rows == pyhudi.read(spark, path).count() == 10
