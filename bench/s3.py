"""pyhudi on S3 (issue 30): the same work on an S3 endpoint and on local disk, and what the
metadata table buys when listing is a network call.

The endpoint is moto's S3 server on 127.0.0.1 (in memory, started here; the one the tests use),
reached through pyarrow's S3 file system and obstore (pyhudi) and Spark's S3A (base-file scans).
It measures the cost of going through an S3 API, not a real network: treat the ratios as a
lower bound of what S3 adds.

* `s3_upsert_vs_local`: the bench's 10% + 2% upsert into a copy-on-write table of `ROWS / 10`
  rows on S3 vs the same upsert into the same table on local disk (ratio: S3 / local).
* `s3_snapshot_read_vs_local`: a full snapshot read (count and sum) of that table, S3 vs local.
* `plain_spark_s3_read_vs_local`: the floor of that ratio on this endpoint: plain Spark reading
  the same latest base files (`spark.read.parquet` of the files the snapshot plans), S3 vs local.
* `s3_planning_500_partitions`: snapshot planning (`TableContext.open` + `plan_read`, no data
  read) of a 500-partition table on S3 through the metadata table vs listing the partitions on
  S3 (`hoodie.metadata.enable=false`). Target: <= 0.2.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
import uuid
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    ROWS,
    Measure,
    fresh,
    median_pair,
    path,
    source_data,
    upsert_batch,
)
from pyhudi.reader.planner import plan_read
from pyhudi.table.context import TableContext

PLANNING_PARTITIONS = 500
_SERVER = None


def session_conf() -> dict[str, str]:
    """Start the S3 endpoint and give the bench's session S3A for it (before the session starts:
    Spark takes jars and the Python workers' environment at start-up)."""
    global _SERVER
    from tests.helpers.s3 import MotoServer, environment, free_port, s3a_conf, s3a_jars

    if _SERVER is None:
        log = Path(tempfile.mkdtemp(prefix="pyhudi-bench-moto-")) / "server.log"
        _SERVER = MotoServer.start(free_port(), log)
        os.environ.update(environment(_SERVER.url))
    return {"spark.jars": ",".join(s3a_jars()), **s3a_conf(_SERVER.url)}


def _bucket() -> str:
    import boto3

    name = f"bench-{uuid.uuid4().hex[:8]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return f"s3://{name}"


def run(spark: SparkSession) -> dict[str, Measure]:
    if _SERVER is None:
        raise RuntimeError("bench.s3 needs its endpoint before the session: run it via bench.run")
    bucket = _bucket()
    rows = max(ROWS // 10, 1000)
    options = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    source = source_data(spark, rows).cache()
    batch = upsert_batch(spark, rows).cache()
    source.count(), batch.count()
    local_root = fresh(path("s3_local"))
    tables = {"s3": f"{bucket}/cow", "local": os.path.join(local_root, "cow")}

    def prepare(run: int) -> None:
        for table in tables.values():
            target = f"{table}-{run}"
            pyhudi.write(
                source, target, {**options, "hoodie.datasource.write.operation": "bulk_insert"}
            )

    def upsert(where: str, run: int) -> None:
        target = f"{tables[where]}-{run}"
        pyhudi.write(batch, target, {**options, "hoodie.datasource.write.operation": "upsert"})

    results: dict[str, Measure] = {}
    mine, theirs = median_pair(
        prepare, lambda run: upsert("s3", run), lambda run: upsert("local", run)
    )
    results["s3_upsert_vs_local"] = Measure(mine, theirs, target=2.0)

    def read(where: str) -> list:
        df = pyhudi.read(spark, f"{tables[where]}-0")
        return df.agg(F.count(F.lit(1)), F.sum(F.col("ts") % 1_000_003), F.max("ts")).collect()

    if read("s3") != read("local"):
        raise AssertionError("the S3 and local tables read differently")
    mine, theirs = median_pair(lambda run: None, lambda run: read("s3"), lambda run: read("local"))
    results["s3_snapshot_read_vs_local"] = Measure(mine, theirs, target=2.0)

    def plain(where: str) -> list:
        ctx = TableContext.open(f"{tables[where]}-0")
        files = [
            posixpath.join(ctx.uri, s.base_file.relative_path)
            for s in plan_read(ctx, {}).base_only
            if s.base_file is not None
        ]
        df = spark.read.parquet(*files)
        return df.agg(F.count(F.lit(1)), F.sum(F.col("ts") % 1_000_003), F.max("ts")).collect()

    if plain("s3") != read("s3"):
        raise AssertionError("plain Spark reads the latest base files differently")
    mine, theirs = median_pair(
        lambda run: None, lambda run: plain("s3"), lambda run: plain("local")
    )
    results["plain_spark_s3_read_vs_local"] = Measure(mine, theirs, target=2.0)
    results["s3_planning_500_partitions"] = _planning(spark, bucket)
    source.unpersist(), batch.unpersist()
    return results


def _planning(spark: SparkSession, bucket: str) -> Measure:
    table = f"{bucket}/partitions"
    row_id = F.col("id")
    rows = spark.range(PLANNING_PARTITIONS * 2).select(
        F.format_string("key-%06d", row_id).alias("key"),
        F.format_string("d%04d", row_id % PLANNING_PARTITIONS).alias("part"),
        row_id.alias("ts"),
    )
    options = {**HUDI_OPTIONS, "hoodie.metadata.enable": "true"}
    pyhudi.write(
        rows.coalesce(1), table, {**options, "hoodie.datasource.write.operation": "bulk_insert"}
    )

    def plan(enabled: str) -> int:
        ctx = TableContext.open(table)
        return len(plan_read(ctx, {"hoodie.metadata.enable": enabled}).base_only)

    listed, from_mdt = plan("false"), plan("true")
    if listed != from_mdt or listed < PLANNING_PARTITIONS:
        raise AssertionError(f"plans differ: {from_mdt} slices via the metadata table, {listed}")
    mine, theirs = median_pair(
        lambda run: None, lambda run: plan("true"), lambda run: plan("false"), runs=5
    )
    return Measure(mine, theirs, target=0.2, runs=5)
