"""Copy-on-write benchmarks (issue: foundation): bulk_insert, upsert, snapshot read; and
`format("hudi")` upsert against `pyhudi.write` upsert (issue 45)."""

from __future__ import annotations

import shutil

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    Measure,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    upsert_batch,
)
from pyhudi.reader.planner import plan_read
from pyhudi.table.context import TableContext


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    results = {"cow_bulk_insert": bulk_insert(spark, source)}
    results["cow_upsert"] = upsert(spark, batch)
    results["cow_format_hudi_upsert_vs_write"] = format_upsert(spark, batch)
    results["cow_snapshot_read"] = snapshot_read(spark)
    return results


def bulk_insert(spark: SparkSession, source) -> Measure:  # type: ignore[no-untyped-def]
    options = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
    ours, theirs = median_pair(
        lambda run: (fresh(path("cow_bulk")), fresh(path("plain_bulk"))),
        lambda run: pyhudi.write(source, path("cow_bulk"), options),
        lambda run: (
            source.write.mode("overwrite")
            .option("compression", "snappy")
            .partitionBy("part")
            .parquet(path("plain_bulk"))
        ),
    )
    return Measure(ours, theirs, target=1.2)


def upsert(spark: SparkSession, batch) -> Measure:  # type: ignore[no-untyped-def]
    options = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "upsert"}

    def prepare(run: int) -> None:
        fresh(path("cow_upsert"))
        shutil.copytree(path("cow_bulk"), path("cow_upsert"))
        fresh(path("plain_upsert_out"))

    def baseline(run: int) -> None:
        current = spark.read.parquet(path("plain_bulk"))
        kept = current.join(batch.select("key"), on="key", how="left_anti")
        kept.unionByName(batch).write.mode("overwrite").option("compression", "snappy").partitionBy(
            "part"
        ).parquet(path("plain_upsert_out"))

    ours, theirs = median_pair(
        prepare, lambda run: pyhudi.write(batch, path("cow_upsert"), options), baseline
    )
    return Measure(ours, theirs, target=1.2)


def format_upsert(spark: SparkSession, batch) -> Measure:  # type: ignore[no-untyped-def]
    """`df.write.format("hudi")` with Hudi's default operation (upsert, routed to pyhudi.write by
    `pyhudi.register`) against `pyhudi.write` upsert, on copies of the same table."""
    pyhudi.register(spark)

    def prepare(run: int) -> None:
        for name in ("cow_format_upsert", "cow_write_upsert"):
            fresh(path(name))
            shutil.copytree(path("cow_bulk"), path(name))

    ours, theirs = median_pair(
        prepare,
        lambda run: (
            batch.write.format("hudi")
            .options(**HUDI_OPTIONS)
            .mode("append")
            .save(path("cow_format_upsert"))
        ),
        lambda run: pyhudi.write(
            batch,
            path("cow_write_upsert"),
            {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "upsert"},
        ),
    )
    return Measure(ours, theirs, target=1.1)


def snapshot_read(spark: SparkSession) -> Measure:
    table = path("cow_upsert")
    ctx = TableContext.open(table)
    files = [ctx.storage.uri(ctx.path(s.base_file.relative_path)) for s in plan_read(ctx).base_only]  # type: ignore[union-attr]

    def query(df):  # type: ignore[no-untyped-def]
        return df.agg(F.count(F.lit(1)), F.sum("fare")).collect()

    ours, theirs = median_pair(
        lambda run: None,
        lambda run: query(pyhudi.read(spark, table)),
        lambda run: query(spark.read.parquet(*files)),
        runs=5,
    )
    return Measure(ours, theirs, target=1.1, runs=5)
