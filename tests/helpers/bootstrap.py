"""A hive-partitioned 'existing' parquet/ORC table to bootstrap, and the bootstrap options."""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal

from pyspark.sql import functions as F

SCHEMA = "key string, amount decimal(10,2), day date, at timestamp, flag boolean, blob binary, qty int, ts long, score double"
SELECTOR = "org.apache.hudi.client.bootstrap.selector.{}BootstrapModeSelector"
DATA_COLUMNS = ["key", "amount", "day", "at", "flag", "blob", "qty", "ts", "score", "dt"]


def sample_rows(count: int) -> list[tuple]:
    return [
        (
            f"k{i:04d}",
            Decimal(i) / 4,
            dt.date(2022, 10, 8) + dt.timedelta(days=i % 2),
            dt.datetime(2022, 10, 8, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i),
            i % 2 == 0,
            bytes([i % 256]),
            i,
            1,
            i * 1.5,
        )
        for i in range(count)
    ]


def existing_table(spark, root: str, *, hive: bool, file_format: str = "parquet") -> str:
    """An 'existing' table: partition folders `dt=2022-10-08` (hive) or `2022-10-08` (plain)."""
    frame = spark.createDataFrame(sample_rows(200), SCHEMA).withColumn(
        "dt", F.date_format("day", "yyyy-MM-dd")
    )
    for day in ("2022-10-08", "2022-10-09"):
        folder = os.path.join(root, f"dt={day}" if hive else day)
        part = frame.filter(F.col("dt") == day).drop("dt" if hive else "__none__").repartition(2)
        getattr(part.write.mode("overwrite"), file_format)(folder)
    return root


def bootstrap_options(source: str, selector: str = "MetadataOnly", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "bt",
        "hoodie.datasource.write.recordkey.field": "key",
        "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "bootstrap",
        "hoodie.bootstrap.base.path": source,
        "hoodie.bootstrap.mode.selector": SELECTOR.format(selector)
        if not selector.endswith("Selector")
        else f"org.apache.hudi.client.bootstrap.selector.{selector}",
        **extra,
    }


def source_rows(spark, source: str, hive: bool, file_format: str = "parquet"):
    reader = spark.read.option("basePath", source) if hive else spark.read
    data = getattr(reader.option("recursiveFileLookup", "false" if hive else "true"), file_format)(
        source
    )
    if hive:
        data = data.withColumn("dt", F.col("dt").cast("string"))
    return sorted(data.select(*DATA_COLUMNS).collect())
