"""A local SparkSession configured the way pyhudi runs best (demo, CLI, tests, benchmarks)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from pyspark.sql import SparkSession

from pyhudi.spark.datasource import register

DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.driver.memory": "4g",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.ui.showConsoleProgress": "false",
}


def local_session(
    app_name: str = "pyhudi", *, cores: int | str = "*", conf: Mapping[str, str] | None = None
) -> SparkSession:
    """Get or create a local SparkSession (`local[cores]`) with pyhudi's defaults."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(f"local[{cores}]").appName(app_name)
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def user_session(app_name: str, master: str) -> SparkSession:
    """A session on `master` (e.g. `spark://host:7077`) with Spark's defaults, as a user's job
    would make it, plus the `hudi` format (`pyhudi.register`)."""
    spark = SparkSession.builder.master(master).appName(app_name).getOrCreate()
    register(spark)
    return spark
