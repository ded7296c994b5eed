"""Phase profile of the read-side measures (run after `python -m bench.run bench.mor bench.bootstrap`,
which leaves the tables under bench/.work): driver phases timed in Python, Spark stages from the
UI's REST API (`/api/v1/.../stages`), medians of a few runs.

    python -m bench.profile_reads [mor|bootstrap_read|bootstrap] ...
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.bootstrap import _options, existing_table
from bench.common import fresh, path, profile_session

RUNS = 3


def stages(spark: SparkSession) -> dict[int, dict]:
    url = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/stages?status=complete") as r:
        return {s["stageId"]: s for s in json.load(r)}


def profiled(spark: SparkSession, label: str, action: Callable[[], object]) -> float:
    before = set(stages(spark))
    started = time.perf_counter()
    action()
    took = time.perf_counter() - started
    new = [s for k, s in sorted(stages(spark).items()) if k not in before]
    print(f"  {label}: {took:.3f}s wall, {len(new)} stages")
    for s in new:
        print(
            f"    stage {s['stageId']:4d} {s['numTasks']:3d} tasks run {s['executorRunTime'] / 1000:.3f}s "
            f"cpu {s['executorCpuTime'] / 1e9:.3f}s in {s.get('inputBytes', 0) / 1e6:.1f}MB "
            f"shuffle r/w {s.get('shuffleReadBytes', 0) / 1e6:.1f}/{s.get('shuffleWriteBytes', 0) / 1e6:.1f}MB "
            f"{s['name'][:60]}"
        )
    return took


def query(df):  # type: ignore[no-untyped-def]
    return df.agg(F.count(F.lit(1)), F.sum("fare")).collect()


def mor(spark: SparkSession) -> None:
    from pyhudi.reader import dataframe
    from pyhudi.reader.planner import plan_read
    from pyhudi.table.context import TableContext

    times: dict[str, list[float]] = defaultdict(list)
    for run in range(RUNS):
        print(f"run {run}")
        times["cow read"].append(
            profiled(spark, "cow", lambda: query(pyhudi.read(spark, path("cow_upsert_for_mor"))))
        )
        started = time.perf_counter()
        ctx = TableContext.open(path("mor_upsert"))
        plan = plan_read(ctx)
        times["mor plan"].append(time.perf_counter() - started)
        holder = {}
        times["mor build (pass 1 + DataFrame)"].append(
            profiled(
                spark,
                "mor build",
                lambda h=holder, c=ctx, p=plan: h.setdefault(
                    "df", dataframe.dataframe_for_plan(spark, c, p)
                ),
            )
        )
        times["mor query"].append(profiled(spark, "mor query", lambda h=holder: query(h["df"])))
        times["mor read total"].append(
            profiled(spark, "mor total", lambda: query(pyhudi.read(spark, path("mor_upsert"))))
        )
    for label, values in times.items():
        print(f"{label:28s} median {statistics.median(values):.3f}s  {values}")


def bootstrap_read(spark: SparkSession) -> None:
    source = existing_table(spark)
    table = path("bootstrap_metadataonly")
    times: dict[str, list[float]] = defaultdict(list)
    for run in range(RUNS):
        print(f"run {run}")
        times["source"].append(profiled(spark, "source", lambda: query(spark.read.parquet(source))))
        started = time.perf_counter()
        df = pyhudi.read(spark, table)
        times["plan+build"].append(time.perf_counter() - started)
        times["query"].append(profiled(spark, "query", lambda df=df: query(df)))
    for label, values in times.items():
        print(f"{label:28s} median {statistics.median(values):.3f}s  {values}")


def bootstrap(spark: SparkSession) -> None:
    source = existing_table(spark)
    table, copy = path("bootstrap_profile"), path("bootstrap_profile_copy")
    empty = spark.createDataFrame([], "x int")
    times: dict[str, list[float]] = defaultdict(list)
    for _run in range(RUNS):
        fresh(table)
        fresh(copy)
        times["spark copy"].append(
            profiled(
                spark,
                "copy",
                lambda: spark.read.parquet(source).write.partitionBy("part").parquet(copy),
            )
        )
        fresh(copy)
        times["spark skeleton (floor)"].append(
            profiled(spark, "floor", lambda: skeleton_floor(spark, source, copy))
        )
        opts = _options(source, "MetadataOnly")
        times["metadata only"].append(
            profiled(spark, "bootstrap", lambda o=opts: pyhudi.write(empty, table, o))
        )
    for label, values in times.items():
        print(f"{label:28s} median {statistics.median(values):.3f}s  {values}")


def skeleton_floor(spark: SparkSession, source: str, target: str) -> None:
    """What plain Spark needs for the bytes of the skeletons: read the key column, write the five
    meta columns per source file (no bloom filter, no Hudi footer, no timeline)."""
    rows = spark.read.parquet(source)
    rows.select(
        F.lit("00000000000001").alias("_hoodie_commit_time"),
        F.concat(F.lit("00000000000001_0_"), F.monotonically_increasing_id().cast("string")).alias(
            "_hoodie_commit_seqno"
        ),
        F.col("key").alias("_hoodie_record_key"),
        F.col("part").alias("_hoodie_partition_path"),
        F.lit("skeleton.parquet").alias("_hoodie_file_name"),
        F.col("part"),
    ).write.partitionBy("part").parquet(target)


def main(argv: list[str]) -> int:
    spark = profile_session("pyhudi-profile")
    for name in argv or ["mor", "bootstrap_read", "bootstrap"]:
        print(f"== {name}")
        globals()[name](spark)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
