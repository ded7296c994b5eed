"""Loading a bucket-indexed table that has no buckets yet (`bulk_insert` / `insert`): every record
opens its bucket's new file group, so the write is one shuffle by (partition path, bucket) and
tasks that stream each bucket into its new base file (`file_group.bulk_insert.bucket_load_function`).

The job that checks partition values before the instant also counts the records per partition
path (`checked_counts`, when `loads_new_buckets`): with those counts the buckets are packed into
one write task per core (or `hoodie.bulkinsert.shuffle.parallelism` tasks) by their expected rows
(`bucket_tasks`) and shuffled there by id (`repartitionById`, Spark 4.1+): a balanced write stage,
where hashing 20 buckets let adaptive execution coalesce them into 3 tasks on 2 cores (one core
idle for the last third). Without counts (or on Spark 4.0) the shuffle hashes (partition, bucket).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.config import index as index_keys
from pyhudi.exceptions import InvalidRecordError
from pyhudi.file_group.bulk_insert import bucket_load_function
from pyhudi.file_group.stats import STATS_DDL
from pyhudi.index.bucket import existing_buckets
from pyhudi.keygen.spark import partition_segments
from pyhudi.keygen.spec import KeyGenSpec
from pyhudi.model.enums import WriteOperationType
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig
from pyhudi.writer.job import WriteJob
from pyhudi.writer.partition_check import check_partition_values, invalid_segment

#: Operations that only add records: into a table without buckets yet, every record opens a new one.
LOADS = (WriteOperationType.BULK_INSERT, WriteOperationType.INSERT)
BUCKET_COLUMN = "__pyhudi_bucket"
#: Buckets the task-id expression names one by one (a literal map); beyond, a hash partitioning.
_MAX_NAMED_BUCKETS = 100_000


def loads_new_buckets(cfg: WriteConfig, existing: TableContext | None) -> bool:
    """The write is a bucket load: its partition check also counts the records per partition."""
    if cfg.index_type != "BUCKET" or cfg.operation not in LOADS:
        return False
    return existing is None or not existing_buckets(existing)


def checked_counts(records: DataFrame, spec: KeyGenSpec) -> dict[str, int]:
    """Records per partition path, counted by the job that checks the partition values (one hash
    aggregate of fixed-width values: whether any value of the partition is bad). A bad value is
    then named by `check_partition_values` (its record key, field and value), before anything
    exists: nothing is written."""
    aggregates = [F.count(F.lit(1)).alias("n")]
    parts = partition_segments(records, spec) if spec.partition_fields else []
    if parts:
        bad = reduce(lambda a, b: a | b, [invalid_segment(column) for _, column in parts])
        aggregates.append(F.max(bad.cast("int")).alias("bad"))
    try:
        rows = records.groupBy(PARTITION_PATH).agg(*aggregates).collect()
    except (PySparkException, Py4JJavaError):
        check_partition_values(
            records, spec
        )  # a key generator's error, named as the check names it
        raise
    if parts and any(row["bad"] for row in rows):
        check_partition_values(records, spec)
        raise InvalidRecordError(
            f"a partition value of {spec.partition_field_names} is not a folder name; nothing was written"
        )
    return {row[PARTITION_PATH]: row["n"] for row in rows}


def load_new_buckets(
    job: WriteJob, records: DataFrame, bucket_of: Callable[[Column], Column]
) -> list[dict]:
    """Shuffle `records` (prepared, with key columns) by (partition path, bucket) — `bucket_of`
    maps the record key column to the bucket number — and write each bucket as one new base file.
    No file group exists, so none can be under pending clustering."""
    columns = [c for c in records.columns if not c.startswith("__pyhudi_")]
    data = records.select(*columns, bucket_of(F.col(RECORD_KEY)).alias(BUCKET_COLUMN))
    result = _shuffled(job, data).mapInArrow(
        bucket_load_function(job.spec, BUCKET_COLUMN), STATS_DDL
    )
    return [row.asDict() for row in result.collect()]


def _shuffled(job: WriteJob, data: DataFrame) -> DataFrame:
    """`data` shuffled so that each (partition path, bucket) is in one task: with the counts, the
    buckets are packed into the tasks by their expected rows (`bucket_tasks`); else hashed."""
    num_buckets = index_keys.BUCKET_NUM.get(job.cfg.options)
    counts = job.incoming_counts
    tasks = job.cfg.parallelism if job.cfg.parallelism > 0 else default_parallelism(job.spark)
    if (
        counts is None
        or not hasattr(data, "repartitionById")  # Spark 4.1+
        or len(counts) * num_buckets > _MAX_NAMED_BUCKETS
    ):
        keys = [PARTITION_PATH, BUCKET_COLUMN]
        if job.cfg.parallelism > 0:
            return data.repartition(job.cfg.parallelism, *keys)
        return data.repartition(*keys)
    tasks = max(1, min(tasks, len(counts) * num_buckets))
    table = bucket_tasks(counts, num_buckets, tasks)
    by_partition = F.create_map(
        *[c for p, ids in table.items() for c in (F.lit(p), F.array(*map(F.lit, ids)))]
    )
    task = F.element_at(
        F.element_at(by_partition, F.col(PARTITION_PATH)), (F.col(BUCKET_COLUMN) + 1).cast("int")
    )
    return data.repartitionById(tasks, task.cast("int"))


def bucket_tasks(counts: dict[str, int], num_buckets: int, tasks: int) -> dict[str, list[int]]:
    """partition path -> the task of each of its buckets: largest expected bucket (records of the
    partition / buckets) first onto the least loaded task (balanced stages, one bucket per task
    when there are as many tasks as buckets)."""
    loads = [(0.0, task) for task in range(tasks)]
    table = {partition: [0] * num_buckets for partition in counts}
    expected = sorted(
        ((counts[p] / num_buckets, p, b) for p in counts for b in range(num_buckets)),
        key=lambda item: (-item[0], item[1], item[2]),
    )
    for size, partition, bucket in expected:
        load, task = heapq.heappop(loads)
        table[partition][bucket] = task
        heapq.heappush(loads, (load + size, task))
    return table
