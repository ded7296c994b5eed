"""Shared benchmark plumbing: data generation, timing (median of runs), result records."""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

ROWS = int(os.environ.get("PYHUDI_BENCH_ROWS", "2000000"))
RUNS = int(os.environ.get("PYHUDI_BENCH_RUNS", "3"))
PARTITIONS = 10
# One work folder per row count: materialized inputs are reused only at the size they were made.
WORK = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), ".work" if ROWS == 2_000_000 else f".work-{ROWS}"
)

HUDI_OPTIONS = {
    "hoodie.table.name": "bench",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.parquet.compression.codec": "snappy",
}


@dataclass(frozen=True)
class Measure:
    pyhudi_s: float
    baseline_s: float
    target: float
    higher_is_better: bool = False
    runs: int = RUNS

    @property
    def ratio(self) -> float:
        if self.higher_is_better:
            return self.pyhudi_s / self.baseline_s if self.baseline_s else 0.0
        return self.pyhudi_s / self.baseline_s if self.baseline_s else float("inf")

    def to_json(self) -> dict:
        data = asdict(self)
        data["ratio"] = round(self.ratio, 3)
        data["pyhudi_s"] = round(self.pyhudi_s, 3)
        data["baseline_s"] = round(self.baseline_s, 3)
        return data


@dataclass(frozen=True)
class Skipped:
    """A measure that cannot run yet (a feature it needs is missing): recorded, never faked."""

    reason: str

    def to_json(self) -> dict:
        return {"skipped": self.reason}


def path(*parts: str) -> str:
    return os.path.join(WORK, *parts)


def fresh(target: str) -> str:
    shutil.rmtree(target, ignore_errors=True)
    return target


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def median_pair(
    prepare: Callable[[int], None],
    ours: Callable[[int], object],
    baseline: Callable[[int], object],
    runs: int = RUNS,
) -> tuple[float, float]:
    """Median seconds of `ours` and `baseline`, interleaved run by run (the machine is noisy)."""
    mine, theirs = [], []
    for run in range(runs):
        prepare(run)
        theirs.append(timed(lambda run=run: baseline(run)))
        mine.append(timed(lambda run=run: ours(run)))
    return statistics.median(mine), statistics.median(theirs)


def source_data(spark: SparkSession, rows: int = ROWS, start: int = 0) -> DataFrame:
    ids = spark.range(start, start + rows)
    return ids.select(
        F.format_string("key-%010d", F.col("id")).alias("key"),
        F.format_string("p%02d", (F.col("id") % PARTITIONS)).alias("part"),
        (F.lit(1_700_000_000_000_000) + F.col("id") * 1000).cast("long").alias("ts"),
        F.timestamp_micros(F.lit(1_700_000_000_000_000) + F.col("id") * 1000).alias("event_time"),
        (F.rand(7) * 100).alias("fare"),
        (F.rand(11) * 10).alias("tip"),
        F.format_string("rider-%05d", (F.col("id") * 7919) % 50000).alias("rider"),
        F.format_string("driver-%04d", (F.col("id") * 104729) % 5000).alias("driver"),
    )


def materialize(spark: SparkSession, df: DataFrame, target: str) -> DataFrame:
    """Write `df` once as plain parquet, so every contender reads the same bytes."""
    if not os.path.exists(os.path.join(target, "_SUCCESS")):
        df.write.mode("overwrite").parquet(fresh(target))
    return spark.read.parquet(target)


def upsert_batch(spark: SparkSession, rows: int = ROWS) -> DataFrame:
    """10% random existing keys (new values, later ts) and 2% new keys."""
    base = source_data(spark, rows)
    updates = (
        base.sample(fraction=0.10, seed=42)
        .withColumn("ts", F.col("ts") + 1)
        .withColumn("fare", F.col("fare") + 1)
    )
    inserts = source_data(spark, rows // 50, start=rows)
    return updates.unionByName(inserts)


def profile_session(app: str, ui_port: str | None = None) -> SparkSession:
    """The local 2-core session the `profile_*` scripts run in, with the UI (and its REST API,
    for stage metrics) on `ui_port` (`PYHUDI_PROFILE_UI_PORT` overrides it)."""
    from pyhudi.spark.session import local_session

    conf = {
        "spark.driver.memory": "10g",
        "spark.sql.shuffle.partitions": "16",
        "spark.ui.enabled": "true",
    }
    port = os.environ.get("PYHUDI_PROFILE_UI_PORT", ui_port)
    if port:
        conf["spark.ui.port"] = port
    return local_session(app, cores=2, conf=conf)
