"""Table-service benchmarks: compaction, clustering, streaming ingestion with async services."""

from __future__ import annotations

import os
import shutil
import time

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
from pyhudi.services.clustering.execute import run_clustering
from pyhudi.services.compaction.execute import run_compaction
from pyhudi.table.context import TableContext

MOR = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    return {
        "compaction_vs_spark_full_rewrite": compaction(spark, source, batch),
        "clustering_200_small_files_vs_spark_repartition": clustering(spark),
        "streaming_throughput_with_async_services": streaming(spark),
    }


def compaction(spark: SparkSession, source, batch) -> Measure:  # type: ignore[no-untyped-def]
    table = path("mor_for_compaction")
    if not os.path.exists(os.path.join(table, ".hoodie")):
        pyhudi.write(
            source, fresh(table), {**MOR, "hoodie.datasource.write.operation": "bulk_insert"}
        )
        pyhudi.write(batch, table, {**MOR, "hoodie.datasource.write.operation": "upsert"})

    def prepare(run: int) -> None:
        fresh(path("compaction_run"))
        shutil.copytree(table, path("compaction_run"))
        fresh(path("plain_rewrite"))

    def baseline(
        run: int,
    ) -> None:  # a plain table brought up to date the only way plain parquet can
        current = spark.read.parquet(path("source"))
        kept = current.join(batch.select("key"), on="key", how="left_anti")
        kept.unionByName(batch).write.mode("overwrite").partitionBy("part").parquet(
            path("plain_rewrite")
        )

    ours, theirs = median_pair(
        prepare,
        lambda run: run_compaction(
            spark, TableContext.open(path("compaction_run")), MOR, force=True
        ),
        baseline,
    )
    return Measure(ours, theirs, target=1.3)


def clustering(spark: SparkSession, files: int = 200) -> Measure:
    small = path("small_files_table")
    if not os.path.exists(os.path.join(small, ".hoodie")):
        data = source_data(spark, 1_000_000).withColumn("part", F.lit("p00")).repartition(files)
        pyhudi.write(
            data, fresh(small), {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
        )
    options = {
        **HUDI_OPTIONS,
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(64 * 1024 * 1024),
    }

    def prepare(run: int) -> None:
        fresh(path("clustering_run"))
        shutil.copytree(small, path("clustering_run"))
        fresh(path("plain_repartition"))

    def baseline(run: int) -> None:
        ctx = TableContext.open(small)
        uris = [
            ctx.storage.uri(ctx.path(s.base_file.relative_path))
            for s in ctx.view().latest_file_slices()
        ]
        count = _target_files(ctx, 64 * 1024 * 1024)
        spark.read.parquet(*uris).repartition(count).write.mode("overwrite").parquet(
            path("plain_repartition")
        )

    ours, theirs = median_pair(
        prepare,
        lambda run: run_clustering(spark, TableContext.open(path("clustering_run")), options),
        baseline,
    )
    return Measure(ours, theirs, target=1.3)


def _target_files(ctx: TableContext, target: int) -> int:
    total = sum(s.base_file.size_bytes for s in ctx.view().latest_file_slices() if s.base_file)
    return max(1, -(-total // target))


def streaming(spark: SparkSession, batches: int = 8, rows: int = 100_000) -> Measure:
    """Records per second of a stream of upserts into a MOR table, services on vs off (higher is better)."""
    folder = path("stream_input")
    if not os.path.exists(os.path.join(folder, "_done")):
        fresh(folder)
        os.makedirs(folder)
        for i in range(batches):
            frame = source_data(spark, rows, start=i * rows // 2)  # half new keys, half updates
            frame.write.mode("overwrite").parquet(os.path.join(folder, f"b{i:03d}"))
        open(os.path.join(folder, "_done"), "w").close()
    schema = spark.read.parquet(os.path.join(folder, "b000")).schema
    services_on = {
        **MOR,
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.cleaner.commits.retained": "2",
    }
    services_off = {
        **MOR,
        "hoodie.datasource.compaction.async.enable": "false",
        "hoodie.clean.automatic": "false",
        "hoodie.archive.automatic": "false",
    }

    def ingest(options: dict[str, str], name: str) -> float:
        table, checkpoint = fresh(path(f"stream_{name}")), fresh(path(f"stream_{name}_chk"))
        stream = (
            spark.readStream.schema(schema)
            .option("maxFilesPerTrigger", 1)
            .parquet(os.path.join(folder, "b*"))
        )
        started = time.perf_counter()
        query = pyhudi.stream_write(
            stream,
            table,
            options,
            checkpoint_location=checkpoint,
            trigger={"processingTime": "0 seconds"},
        )
        query.processAllAvailable()
        elapsed = time.perf_counter() - started
        query.stop()
        return batches * rows / elapsed

    with_services = [ingest(services_on, f"on{i}") for i in range(3)]
    without = [ingest(services_off, f"off{i}") for i in range(3)]
    with_services.sort()
    without.sort()
    return Measure(with_services[1], without[1], target=0.8, higher_is_better=True)
