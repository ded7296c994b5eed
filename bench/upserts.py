"""Write-side layouts of issue 12: merge-on-read upserts on base files that are not small (with and
without the bucket index), loading a bucket-indexed table, and warm 1,000-row upserts into the
2M-row table.

* `mor_upsert_vs_cow_upsert_large_files`: `hoodie.parquet.small.file.limit=0` on both tables (as
  Hudi users tune MOR tables), so MOR appends updates to log files and inserts open new file
  groups, while COW rewrites every touched base file;
* `mor_bucket_upsert_vs_cow_upsert`: the same MOR upsert with `hoodie.index.type=BUCKET` (2 buckets
  per partition: ~100k rows, as a user sizes buckets to the file size) vs the COW upsert above;
* `bucket_{bulk_insert,insert}_vs_bulk_insert`: loading the 2M rows into a bucket-indexed MOR table
  vs a plain (SIMPLE index) pyhudi bulk_insert; `bucket_bulk_insert_vs_floor`: the same load vs
  plain Spark `repartition(part, bucket)` + `partitionBy().parquet` (the bucket shuffle's floor);
* `small_upsert_{mor,cow,mor_bucket}_seconds`: a warm 1,000-row upsert (random existing keys) into
  the 2M-row table (MOR and COW: SIMPLE index; MOR: bucket index), median seconds against the issue's budget (baseline_s = budget: ratio <= 1 meets it).
"""

from __future__ import annotations

import shutil
import statistics

from pyspark.sql import DataFrame, SparkSession

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    RUNS,
    Measure,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    timed,
    upsert_batch,
)

LARGE = {"hoodie.parquet.small.file.limit": "0"}
COW = {**HUDI_OPTIONS, **LARGE}
MOR = {**COW, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
BUCKET = {**MOR, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
SMALL_BATCH_ROWS = 1000
SMALL_BUDGET_S = {"mor": 1.0, "cow": 3.0, "mor_bucket": 1.0}


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    small = materialize(spark, upsert_batch(spark).limit(SMALL_BATCH_ROWS), path("small_batch"))
    results = {
        "bucket_bulk_insert_vs_bulk_insert": bucket_load(source, "bulk_insert"),
        "bucket_bulk_insert_vs_floor": bucket_load_vs_floor(source),
        "bucket_insert_vs_bulk_insert": bucket_load(source, "insert"),
    }
    for name, options in (("large_cow", COW), ("large_mor", MOR)):
        _write(source, fresh(path(name)), options, "bulk_insert")
    upserts = _upsert_seconds(
        batch, {"large_cow": COW, "large_mor": MOR, "bucket_load": BUCKET}, warm=False
    )
    results["mor_upsert_vs_cow_upsert_large_files"] = Measure(
        upserts["large_mor"], upserts["large_cow"], target=0.4
    )
    results["mor_bucket_upsert_vs_cow_upsert"] = Measure(
        upserts["bucket_load"], upserts["large_cow"], target=0.3
    )
    small_upserts = _upsert_seconds(
        small, {"large_mor": MOR, "large_cow": COW, "bucket_load": BUCKET}, warm=True
    )
    for name, table in (("mor", "large_mor"), ("cow", "large_cow"), ("mor_bucket", "bucket_load")):
        results[f"small_upsert_{name}_seconds"] = Measure(
            small_upserts[table], SMALL_BUDGET_S[name], target=1.0
        )
    return results


def _write(df: DataFrame, target: str, options: dict[str, str], operation: str) -> None:
    pyhudi.write(df, target, {**options, "hoodie.datasource.write.operation": operation})


def bucket_load(source: DataFrame, operation: str) -> Measure:
    ours, theirs = median_pair(
        lambda run: None,
        lambda run: _write(source, fresh(path("bucket_load")), BUCKET, operation),
        lambda run: _write(source, fresh(path("simple_load")), MOR, "bulk_insert"),
    )
    return Measure(ours, theirs, target=1.0)


def bucket_load_vs_floor(source: DataFrame) -> Measure:
    """The bucket-indexed `bulk_insert` vs plain Spark shuffling the same rows by (partition,
    bucket) — the bucket from the same JVM hash expression — and writing `partitionBy().parquet`."""
    from pyspark.sql import functions as F

    from pyhudi.index.bucket import bucket_id_column

    num_buckets = int(BUCKET["hoodie.bucket.index.num.buckets"])
    bucketed = source.withColumn("b", bucket_id_column(F.col("key"), num_buckets, None, False))
    ours, theirs = median_pair(
        lambda run: None,
        lambda run: _write(source, fresh(path("bucket_load")), BUCKET, "bulk_insert"),
        lambda run: (
            bucketed.repartition("part", "b")
            .drop("b")
            .write.mode("overwrite")
            .option("compression", "snappy")
            .partitionBy("part")
            .parquet(fresh(path("bucket_floor")))
        ),
    )
    return Measure(ours, theirs, target=1.0)


def _upsert_seconds(
    batch: DataFrame, bases: dict[str, dict[str, str]], *, warm: bool
) -> dict[str, float]:
    """Median seconds of upserting `batch` into a fresh copy of each base table, interleaved run by
    run (after one unmeasured upsert into the copy when `warm`: the same session, caches and Python
    workers as a stream's next batch)."""
    times: dict[str, list[float]] = {name: [] for name in bases}
    for _ in range(RUNS):
        for name, options in bases.items():
            target = fresh(path(f"{name}_upsert"))
            shutil.copytree(path(name), target)
            if warm:
                _write(batch, target, options, "upsert")
            times[name].append(timed(lambda t=target, o=options: _write(batch, t, o, "upsert")))
    return {name: statistics.median(values) for name, values in times.items()}
