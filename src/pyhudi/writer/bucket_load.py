"""Loading a bucket-indexed table that has no buckets yet (`bulk_insert` / `insert`): every record
opens its bucket's new file group, so the write is one shuffle by (partition path, bucket) and
tasks that stream each bucket into its new base file (`file_group.bulk_insert.bucket_load_function`).

When every partition's buckets split evenly over the write tasks (`counts_pack_buckets` false:
the number of buckets a multiple of the tasks), bucket `b` goes to task `b % tasks` and the
partition check rides on the write job (`writer.partition_check.guarded`): no job before the
write. Otherwise the job that checks partition values before the instant also counts the records
per partition path (`writer.partition_check.check_and_count`): with those counts the buckets are
packed into one write task per core (or `hoodie.bulkinsert.shuffle.parallelism`
tasks) by their expected rows (`bucket_tasks`) and shuffled there by id (`repartitionById`, Spark
4.1+): a balanced write stage, where hashing 20 buckets let adaptive execution coalesce them into
3 tasks on 2 cores (one core idle for the last third). Without counts, on Spark 4.0 or beyond
`MAX_NAMED_BUCKETS` the shuffle hashes (partition, bucket) (`packed_tasks` picks).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.config import index as index_keys
from pyhudi.file_group.bulk_insert import bucket_load_function
from pyhudi.file_group.stats import STATS_DDL
from pyhudi.index.bucket import existing_buckets
from pyhudi.model.enums import WriteOperationType
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig
from pyhudi.writer.job import WriteJob
from pyhudi.writer.late_tasks import settled_batches

#: Operations that only add records: into a table without buckets yet, every record opens a new one.
LOADS = (WriteOperationType.BULK_INSERT, WriteOperationType.INSERT)
BUCKET_COLUMN = "__pyhudi_bucket"
#: Buckets the task-id expression names one by one (a literal map); beyond, a hash partitioning.
#: Internal: tests lower it to run the hash fallback on a Spark with `repartitionById`.
MAX_NAMED_BUCKETS = 100_000


def loads_new_buckets(cfg: WriteConfig, existing: TableContext | None) -> bool:
    """The write is a bucket load: its partition check also counts the records per partition."""
    if not cfg.index_type.routes_by_bucket or cfg.operation not in LOADS:
        return False
    return existing is None or not existing_buckets(existing)


def _write_tasks(cfg: WriteConfig, spark: SparkSession) -> int:
    return cfg.parallelism if cfg.parallelism > 0 else default_parallelism(spark)


def _splits_evenly(num_buckets: int, tasks: int) -> bool:
    """Every partition's buckets go round the tasks evenly (bucket `b` to task `b % tasks`)."""
    return num_buckets % tasks == 0


def counts_pack_buckets(cfg: WriteConfig, spark: SparkSession) -> bool:
    """A bucket load needs its records counted per partition to balance its write tasks unless
    every partition has a multiple of the tasks' number of buckets: then bucket `b` goes to task
    `b % tasks` (`_shuffled`), each task gets the same share of every partition (buckets of one
    partition hold the same rows in expectation: the hash spreads keys evenly), and the load
    skips the counting job (its partition check rides on the write, `partition_check.guarded`).
    On Spark 4.0 (no `repartitionById`) the load hashes anyway: no counts either."""
    if not hasattr(DataFrame, "repartitionById"):
        return False
    return not _splits_evenly(index_keys.BUCKET_NUM.get(cfg.options), _write_tasks(cfg, spark))


def load_new_buckets(
    job: WriteJob, records: DataFrame, bucket_of: Callable[[Column], Column]
) -> list[dict]:
    """Shuffle `records` (prepared, with key columns) by (partition path, bucket) — `bucket_of`
    maps the record key column to the bucket number — and write each bucket as one new base file.
    Every file group is new, so none can be under pending clustering (a load into a table
    without buckets, or an insert_overwrite of partitions)."""
    columns = [c for c in records.columns if not c.startswith("__pyhudi_")]
    data = records.select(*columns, bucket_of(F.col(RECORD_KEY)).alias(BUCKET_COLUMN))
    result = _shuffled(job, data).mapInArrow(
        settled_batches(job.spec, bucket_load_function(job.spec, BUCKET_COLUMN)), STATS_DDL
    )
    return [row.asDict() for row in result.collect()]


def _shuffled(job: WriteJob, data: DataFrame) -> DataFrame:
    """`data` shuffled so that each (partition path, bucket) is in one task: packed into the tasks
    by their expected rows when `packed_tasks` can (`bucket_tasks`); else hashed."""
    num_buckets = index_keys.BUCKET_NUM.get(job.cfg.options)
    tasks = _write_tasks(job.cfg, job.spark)
    by_id = hasattr(data, "repartitionById")  # Spark 4.1+
    if by_id and job.incoming_counts is None and _splits_evenly(num_buckets, tasks):
        return data.repartitionById(tasks, F.pmod(F.col(BUCKET_COLUMN), F.lit(tasks)).cast("int"))
    table = packed_tasks(job.incoming_counts, num_buckets, tasks, by_id=by_id)
    if table is None:
        keys = [PARTITION_PATH, BUCKET_COLUMN]
        if job.cfg.parallelism > 0:
            return data.repartition(job.cfg.parallelism, *keys)
        return data.repartition(*keys)
    by_partition = F.create_map(
        *[c for p, ids in table.items() for c in (F.lit(p), F.array(*map(F.lit, ids)))]
    )
    task = F.element_at(
        F.element_at(by_partition, F.col(PARTITION_PATH)), (F.col(BUCKET_COLUMN) + 1).cast("int")
    )
    used = 1 + max((t for ids in table.values() for t in ids), default=0)
    return data.repartitionById(used, task.cast("int"))


def packed_tasks(
    counts: dict[str, int] | None, num_buckets: int, tasks: int, *, by_id: bool
) -> dict[str, list[int]] | None:
    """partition path -> the write task of each bucket (`bucket_tasks` over at most `tasks`
    tasks), or None when the load hashes (partition, bucket) instead: no counts, no
    `repartitionById` (`by_id` false: Spark 4.0), or more than `MAX_NAMED_BUCKETS` buckets."""
    if counts is None or not by_id or len(counts) * num_buckets > MAX_NAMED_BUCKETS:
        return None
    return bucket_tasks(counts, num_buckets, max(1, min(tasks, len(counts) * num_buckets)))


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
