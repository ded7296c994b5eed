"""What a SparkSession offers, asked the same way of a classic session and of a Spark Connect one.

A Spark Connect client has no `sparkContext`, RDDs or py4j gateway; the writer, reader, services
and bootstrap ask here instead, so every public entry point runs from a Connect client too.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.spark_compat import arrow_to_frame
from pyhudi.storage.s3conf import KEYS as S3A_KEYS

#: Spark's own knob for the default number of tasks, honoured when set.
DEFAULT_PARALLELISM_CONF = "spark.default.parallelism"
#: Thread-local property choosing the FAIR scheduler pool of a classic session's jobs.
SCHEDULER_POOL_PROPERTY = "spark.scheduler.pool"
_parallelism: weakref.WeakKeyDictionary[SparkSession, int] = weakref.WeakKeyDictionary()


def is_connect(spark: SparkSession) -> bool:
    """True for a Spark Connect client session (`SparkSession.builder.remote(...)`)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """The cluster's default task count (total executor cores unless configured)."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    cached = _parallelism.get(spark)
    if cached is None:
        cached = _parallelism[spark] = _connect_parallelism(spark)
    return cached


def _connect_parallelism(spark: SparkSession) -> int:
    configured = spark.conf.get(DEFAULT_PARALLELISM_CONF, None)
    if configured:
        return max(1, int(configured))
    # `spark.range` splits into the leaf-node default parallelism, which is the default
    # parallelism unless configured: count its partitions with one small job.
    probe = spark.range(0, 1 << 16).select(F.spark_partition_id().alias("p")).distinct()
    return max(1, probe.count())


@contextlib.contextmanager
def scheduler_pool(spark: SparkSession, pool: str) -> Iterator[None]:
    """Run the enclosed jobs in a FAIR scheduler pool. A Connect client cannot set thread-local
    properties of the server's scheduler: its jobs run in the server's default pool."""
    if is_connect(spark):
        yield
        return
    context = spark.sparkContext
    previous = context.getLocalProperty(SCHEDULER_POOL_PROPERTY)
    context.setLocalProperty(SCHEDULER_POOL_PROPERTY, pool)
    try:
        yield
    finally:
        context.setLocalProperty(SCHEDULER_POOL_PROPERTY, previous)  # type: ignore[arg-type]


def checkpointed(df: DataFrame) -> DataFrame:
    """`df` computed once, by the first job that reads it, and kept for the jobs after (a local
    checkpoint: the rows as they are, where `persist` would encode them into the columnar cache,
    which costs about as much again as computing them). Free it with `release`."""
    return df.localCheckpoint(eager=False)


def release(df: DataFrame) -> None:
    """Drop the blocks of a `checkpointed` DataFrame now (a Connect server drops them when the
    client's DataFrame is gone; a classic session when the driver's garbage collector finds it)."""
    if is_connect(df.sparkSession):
        return
    plan = df._jdf.queryExecution().analyzed()
    if plan.getClass().getSimpleName() == "LogicalRDD":
        plan.rdd().unpersist(False)


def rows_frame(
    spark: SparkSession, rows: Sequence[tuple[Any, ...]], fields: Sequence[pa.Field]
) -> DataFrame:
    """A small driver-side table as a DataFrame through Arrow: the JVM reads it (a list of rows
    would be unpickled by Python worker tasks in every job that reads it). One chunk per column:
    pyspark reads only the first rows of a table whose columns are chunked differently."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in fields]
    arrays = [pa.array(values, field.type) for values, field in zip(columns, fields, strict=True)]
    return arrow_to_frame(spark, pa.table(arrays, schema=pa.schema(fields)))


def s3a_conf(spark: SparkSession) -> dict[str, str]:
    """The S3A keys (`fs.s3a.*`) someone set for this session: a classic session's Hadoop
    configuration (per-bucket keys included), or a Connect server's `spark.hadoop.fs.s3a.*`
    conf. Hadoop's own defaults (`core-default.xml`) are not the user's choice: left out."""
    if is_connect(spark):
        conf = {}
        for key in S3A_KEYS:
            try:
                value = spark.conf.get(f"spark.hadoop.fs.s3a.{key}", None)
            except Exception:  # a server refusing to show a conf: the environment decides
                value = None
            if value is not None:
                conf[f"fs.s3a.{key}"] = str(value)
        return conf
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()  # type: ignore[union-attr]
    found = hadoop.getPropsWithPrefix("fs.s3a.")
    conf = {}
    for key in found.keySet().toArray():
        name = str(key)
        per_bucket = name.startswith("bucket.") and any(name.endswith(f".{k}") for k in S3A_KEYS)
        if not (per_bucket or name in S3A_KEYS):
            continue
        sources = hadoop.getPropertySources(f"fs.s3a.{name}") or []
        if sources and all(str(source).endswith("-default.xml") for source in sources):
            continue
        conf[f"fs.s3a.{name}"] = str(found.get(key))
    return conf
