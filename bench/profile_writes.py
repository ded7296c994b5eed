"""Phase profile of the write-side measures: wall seconds and the Spark stages of each write (from
the UI's REST API, attributed by the call site Spark records), pyhudi and its baseline interleaved.

    python -m bench.profile_writes [bulk|upsert|small|bucket|bootstrap|large|driver] ...
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from collections import defaultdict

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    fresh,
    materialize,
    path,
    profile_session,
    source_data,
    upsert_batch,
)
from bench.profile_reads import profiled
from bench.upserts import BUCKET, COW, MOR, SMALL_BATCH_ROWS

RUNS = 3


def _write(df, target: str, options: dict[str, str], operation: str) -> None:  # type: ignore[no-untyped-def]
    pyhudi.write(df, target, {**options, "hoodie.datasource.write.operation": operation})


def bulk(spark: SparkSession) -> None:
    source = materialize(spark, source_data(spark), path("source"))
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(RUNS):
        times["plain"].append(
            profiled(
                spark,
                "plain partitionBy().parquet",
                lambda: (
                    source.write.mode("overwrite")
                    .option("compression", "snappy")
                    .partitionBy("part")
                    .parquet(fresh(path("plain_bulk")))
                ),
            )
        )
        times["pyhudi"].append(
            profiled(
                spark,
                "pyhudi bulk_insert",
                lambda: _write(source, fresh(path("cow_bulk")), HUDI_OPTIONS, "bulk_insert"),
            )
        )
    _summary(times)


def upsert(spark: SparkSession) -> None:
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(RUNS):
        fresh(path("cow_upsert"))
        shutil.copytree(path("cow_bulk"), path("cow_upsert"))

        def baseline() -> None:
            current = spark.read.parquet(path("plain_bulk"))
            kept = current.join(batch.select("key"), on="key", how="left_anti")
            kept.unionByName(batch).write.mode("overwrite").option(
                "compression", "snappy"
            ).partitionBy("part").parquet(fresh(path("plain_upsert_out")))

        times["baseline"].append(profiled(spark, "spark anti-join/union/overwrite", baseline))
        times["pyhudi"].append(
            profiled(
                spark,
                "pyhudi upsert",
                lambda: _write(batch, path("cow_upsert"), HUDI_OPTIONS, "upsert"),
            )
        )
    _summary(times)


def small(spark: SparkSession) -> None:
    source = materialize(spark, source_data(spark), path("source"))
    small_batch = materialize(
        spark, upsert_batch(spark).limit(SMALL_BATCH_ROWS), path("small_batch")
    )
    for name, options in (("large_cow", COW), ("large_mor", MOR)):
        if not os.path.exists(path(name, ".hoodie")):
            _write(source, fresh(path(name)), options, "bulk_insert")
    times: dict[str, list[float]] = defaultdict(list)
    for name, options in (("large_mor", MOR), ("large_cow", COW)):
        target = fresh(path(f"{name}_upsert"))
        shutil.copytree(path(name), target)
        _write(small_batch, target, options, "upsert")  # warm
        for _ in range(RUNS):
            times[name].append(
                profiled(
                    spark,
                    f"{name} 1k upsert",
                    lambda t=target, o=options: _write(small_batch, t, o, "upsert"),
                )
            )
    _summary(times)


def bucket(spark: SparkSession) -> None:
    """Bucket-indexed loads (MOR, 2 buckets per partition) against a plain pyhudi bulk_insert and
    the floor: plain Spark shuffling the rows by (partition, bucket), the bucket from the same JVM
    hash expression, then `partitionBy(part).parquet`."""
    from pyhudi.index.bucket import bucket_id_column

    source = materialize(spark, source_data(spark), path("source"))
    floor = source.withColumn("__bucket", bucket_id_column(F.col("key"), 2, None, False))
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(RUNS):
        times["floor"].append(
            profiled(
                spark,
                "floor repartition(part, bucket) partitionBy().parquet",
                lambda: (
                    floor.repartition("part", "__bucket")
                    .drop("__bucket")
                    .write.mode("overwrite")
                    .option("compression", "snappy")
                    .partitionBy("part")
                    .parquet(fresh(path("bucket_floor")))
                ),
            )
        )
        times["bulk_insert"].append(
            profiled(
                spark,
                "pyhudi MOR bulk_insert",
                lambda: _write(source, fresh(path("simple_load")), MOR, "bulk_insert"),
            )
        )
        for operation in ("bulk_insert", "insert"):
            times[f"bucket {operation}"].append(
                profiled(
                    spark,
                    f"pyhudi bucket {operation}",
                    lambda o=operation: _write(source, fresh(path("bucket_load")), BUCKET, o),
                )
            )
    _summary(times)


def bootstrap(spark: SparkSession) -> None:
    """METADATA_ONLY bootstrap against the Spark copy, the plain-Spark skeleton floor and what
    pyarrow alone needs for the skeletons (read the key column, write the five meta columns; with
    and without the bloom filter), interleaved."""
    from bench.bootstrap import _options, existing_table
    from bench.profile_reads import skeleton_floor

    source = existing_table(spark)
    empty = spark.createDataFrame([], "x int")
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(RUNS):
        times["spark copy"].append(
            profiled(
                spark,
                "spark copy",
                lambda: (
                    spark.read.parquet(source)
                    .write.partitionBy("part")
                    .parquet(fresh(path("bootstrap_plain_copy")))
                ),
            )
        )
        times["pyhudi metadata_only"].append(
            profiled(
                spark,
                "pyhudi METADATA_ONLY",
                lambda: pyhudi.write(
                    empty,
                    fresh(path("bootstrap_metadataonly")),
                    _options(source, "MetadataOnly"),
                ),
            )
        )
        times["spark skeleton floor"].append(
            profiled(
                spark,
                "spark skeleton floor",
                lambda: skeleton_floor(spark, source, fresh(path("skeleton_floor"))),
            )
        )
        for bloom in (False, True):
            times[f"pyarrow skeletons bloom={bloom}"].append(
                _timed(lambda b=bloom: _pyarrow_skeletons(source, path("skeleton_arrow"), b))
            )
    _summary(times)


def _timed(action) -> float:  # type: ignore[no-untyped-def]
    import time

    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _pyarrow_skeletons(source: str, target: str, bloom: bool) -> None:
    """The fastest skeleton write this machine allows: pyarrow on 2 threads, per source file read
    the key column, build the five meta columns, write snappy parquet (optionally with the bloom
    filter Hudi's footer needs); no Spark, no timeline, no index."""
    import glob
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pyhudi.codec.bloom import new_bloom_filter

    fresh(target)
    files = sorted(glob.glob(os.path.join(source, "part=*", "*.parquet")))

    def one(index: int) -> None:
        keys = pq.read_table(files[index], columns=["key"]).column(0)
        n = len(keys)
        numbers = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
        table = pa.table(
            {
                "_hoodie_commit_time": pa.repeat("00000000000001", n).cast(pa.string()),
                "_hoodie_commit_seqno": pc.binary_join_element_wise(
                    pa.repeat("00000000000001_0_", n), numbers, ""
                ),
                "_hoodie_record_key": keys,
                "_hoodie_partition_path": pa.repeat("part", n).cast(pa.string()),
                "_hoodie_file_name": pa.repeat(f"s{index}.parquet", n).cast(pa.string()),
            }
        )
        metadata = {}
        if bloom:
            bloom_filter = new_bloom_filter(60000, 1e-9, "DYNAMIC_V0", 100000)
            bloom_filter.add_keys(keys)
            metadata = {b"org.apache.hudi.bloomfilter": bloom_filter.serialize().encode()}
        table = table.replace_schema_metadata(metadata)
        os.makedirs(target, exist_ok=True)
        pq.write_table(table, os.path.join(target, f"s{index}.parquet"), compression="snappy")

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(one, range(len(files))))


def driver(spark: SparkSession) -> None:
    """cProfile of the driver around one warm COW upsert of the 10% + 2% batch."""
    import cProfile
    import pstats

    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    for run in range(2):
        fresh(path("cow_upsert"))
        shutil.copytree(path("cow_bulk"), path("cow_upsert"))
        profiler = cProfile.Profile()
        profiler.enable()
        _write(batch, path("cow_upsert"), HUDI_OPTIONS, "upsert")
        profiler.disable()
        if run:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(
                r"pyhudi|java_gateway.py.*\(send_command", 60
            )


def large(spark: SparkSession) -> None:
    """The large-file upserts of `bench.upserts` (MOR, COW and MOR+BUCKET, `small.file.limit=0`):
    the stages of each (interleaved, on fresh copies of the bench tables), then the Python worker
    profile of one MOR upsert's file-group tasks (`spark.sql.pyspark.udf.profiler=perf`)."""
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    tables = {"large_mor": MOR, "large_cow": COW, "bucket_load": BUCKET}
    times: dict[str, list[float]] = defaultdict(list)
    for run in range(RUNS + 1):
        for name, options in tables.items():
            target = fresh(path(f"{name}_upsert"))
            shutil.copytree(path(name), target)
            took = profiled(
                spark, f"{name} upsert", lambda t=target, o=options: _write(batch, t, o, "upsert")
            )
            if run:  # the first run of a session is cold
                times[name].append(took)
    _summary(times)
    target = fresh(path("large_mor_upsert"))
    shutil.copytree(path("large_mor"), target)
    spark.conf.set("spark.sql.pyspark.udf.profiler", "perf")
    try:
        _write(batch, target, MOR, "upsert")
        spark.profile.show(type="perf")
    finally:
        spark.conf.unset("spark.sql.pyspark.udf.profiler")


def _summary(times: dict[str, list[float]]) -> None:
    for name, values in times.items():
        print(f"{name:30s} median {statistics.median(values):.3f}s  {values}")


def main(argv: list[str]) -> int:
    spark = profile_session("pyhudi-profile-writes", "4077")
    for name in argv or ["bulk", "upsert", "small", "driver"]:
        print(f"== {name}", flush=True)
        globals()[name](spark)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
