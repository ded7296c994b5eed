"""Spark's Python Data Source API: `df.write.format("hudi")` and `spark.read.format("hudi")`."""

from __future__ import annotations

from pyspark.sql import SparkSession

_registered: set[int] = set()


def register(spark: SparkSession) -> None:
    """Register the `hudi` format with this SparkSession (idempotent)."""
    key = id(spark)
    if key in _registered:
        return
    try:
        from pyhudi.spark.source import HudiDataSource
    except ImportError:
        return
    spark.dataSource.register(HudiDataSource)
    _registered.add(key)
