"""Bootstrap benchmarks: METADATA_ONLY and FULL_RECORD against a plain Spark copy, stitched reads."""

from __future__ import annotations

import os

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import HUDI_OPTIONS, Measure, fresh, median_pair, path, source_data

SELECTOR = "org.apache.hudi.client.bootstrap.selector.{}BootstrapModeSelector"


def run(spark: SparkSession) -> dict[str, Measure]:
    source = existing_table(spark)
    return {
        "bootstrap_metadata_only_vs_spark_copy": bootstrap(spark, source, "MetadataOnly", 0.2),
        "bootstrap_full_record_vs_spark_copy": bootstrap(spark, source, "FullRecord", 1.3),
        "bootstrap_metadata_only_snapshot_read_vs_source": snapshot_read(spark, source),
        "bootstrap_metadata_only_snapshot_read_columns_vs_source": snapshot_read(
            spark, source, columns=["fare"]
        ),
    }


def existing_table(spark: SparkSession) -> str:
    """The 'existing' hive-style table: 2M rows in 10 `part=pNN` folders of plain parquet."""
    target = path("bootstrap_source")
    if not os.path.exists(os.path.join(target, "_SUCCESS")):
        source_data(spark).write.mode("overwrite").partitionBy("part").parquet(fresh(target))
    return target


def _options(source: str, selector: str) -> dict[str, str]:
    return {
        **HUDI_OPTIONS,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.operation": "bootstrap",
        "hoodie.bootstrap.base.path": source,
        "hoodie.bootstrap.mode.selector": SELECTOR.format(selector),
    }


def bootstrap(spark: SparkSession, source: str, selector: str, target: float) -> Measure:
    empty = spark.createDataFrame([], "x int")
    table, copy = path(f"bootstrap_{selector.lower()}"), path("bootstrap_plain_copy")

    def prepare(run: int) -> None:
        fresh(table)
        fresh(copy)

    def baseline(run: int) -> None:  # what a user does without Hudi: copy the table
        spark.read.parquet(source).write.partitionBy("part").parquet(copy)

    ours, theirs = median_pair(
        prepare,
        lambda run: pyhudi.write(empty, table, _options(source, selector)),
        baseline,
    )
    return Measure(ours, theirs, target=target)


def snapshot_read(spark: SparkSession, source: str, columns: list[str] | None = None) -> Measure:
    """`count + sum(fare)` over the METADATA_ONLY table vs over the source files; with `columns`,
    the read names the columns it needs (`pyhudi.read(columns=)`: no meta column, so the scan is
    the source scan), as Spark's own read prunes them unasked."""
    table = path("bootstrap_metadataonly")
    if not os.path.exists(os.path.join(table, ".hoodie")):
        pyhudi.write(spark.createDataFrame([], "x int"), table, _options(source, "MetadataOnly"))

    def query(df):  # type: ignore[no-untyped-def]
        return df.agg(F.count(F.lit(1)), F.sum("fare")).collect()

    ours, theirs = median_pair(
        lambda run: None,
        lambda run: query(pyhudi.read(spark, table, columns=columns)),
        lambda run: query(spark.read.parquet(source)),
        runs=5,
    )
    return Measure(ours, theirs, target=1.2, runs=5)
