"""File sizing: which file group each insert goes to (Hudi's `UpsertPartitioner` rules).

Per partition, inserts first fill small files (base files under `hoodie.parquet.small.file.limit`,
up to `hoodie.parquet.max.file.size` at the average record size of earlier commits), the rest go
to new file groups of `max.file.size / record size` records each (or
`hoodie.copyonwrite.insert.split.size` without auto split). Records are spread over a partition's
buckets by a hash of their key against the buckets' cumulative weights: a broadcast range join.
"""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass
from typing import cast

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec.file_names import LOG_FILE_RE, new_file_id
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.control_columns import BASE, FID
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import BaseFile, FileSlice
from pyhudi.model.instant import Action
from pyhudi.spark_env import rows_frame
from pyhudi.table.context import TableContext
from pyhudi.writer.config import SizingConfig
from pyhudi.writer.job import TASK_RECORDS, WriteJob

HASH_RANGE = 1_000_000
_RANGE_FIELDS = [
    pa.field("b_partition", pa.string()),
    pa.field("b_low", pa.int32()),
    pa.field("b_high", pa.int32()),
    pa.field("b_fid", pa.string()),
    pa.field("b_base", pa.string()),
]


@dataclass(frozen=True)
class InsertBucket:
    partition: str
    file_id: str
    base_file_name: str | None
    records: int


def average_record_size(ctx: TableContext | None, sizing: SizingConfig) -> int:
    """Bytes per record from the newest commit that wrote more than the small-file limit; a
    deltacommit counts its base files only (Hudi's `AverageRecordSizeUtils`: log bytes are no
    measure of a record's size in parquet)."""
    if ctx is None:
        return sizing.record_size_estimate_bytes
    for instant in reversed(ctx.active.timeline.commits().instants):
        stats = ctx.active.commit_metadata(instant).write_stats()
        if instant.action is Action.DELTA_COMMIT:
            stats = [
                s for s in stats if s.path and not LOG_FILE_RE.match(posixpath.basename(s.path))
            ]
        total_bytes = sum(s.total_write_bytes or 0 for s in stats)
        total_records = sum(s.num_writes or 0 for s in stats)
        if total_bytes > sizing.small_file_limit_bytes and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return sizing.record_size_estimate_bytes


def small_file_slices(
    ctx: TableContext, partitions: list[str], sizing: SizingConfig, *, merge_on_read: bool
) -> dict[str, list[FileSlice]]:
    """The slices of each partition that take inserts (Hudi's `UpsertPartitioner` small files,
    `SparkUpsertDeltaCommitPartitioner` on merge-on-read), none under pending clustering.

    Copy-on-write: every base file under the small-file limit. Merge-on-read (no index of pyhudi's
    sees keys in log files): only slices without log files, not under pending compaction, and of
    those only the smallest `small_file_candidates` (default 1); a pending clustering of one of them
    drops it without taking the next (Hudi limits the candidates first).
    """
    if sizing.small_file_limit_bytes <= 0:
        return {}
    clustering = set(pending_clustering_file_groups(ctx.active))
    compaction = set(pending_compaction_operations(ctx.active))
    result: dict[str, list[FileSlice]] = {}
    for file_slice in ctx.view().latest_file_slices(partitions=partitions):
        base = file_slice.base_file
        if base is None or base.size_bytes >= sizing.small_file_limit_bytes:
            continue
        if merge_on_read and (
            file_slice.has_log_files
            or (file_slice.partition_path, file_slice.file_id) in compaction
        ):
            continue
        result.setdefault(file_slice.partition_path, []).append(file_slice)
    if merge_on_read:
        result = {
            partition: sorted(slices, key=_base_size)[: max(sizing.small_file_candidates, 0)]
            for partition, slices in result.items()
        }
    return {
        partition: kept
        for partition, slices in result.items()
        if (kept := [s for s in slices if (s.partition_path, s.file_id) not in clustering])
    }


def _base_size(file_slice: FileSlice) -> int:
    return cast(BaseFile, file_slice.base_file).size_bytes


def plan_insert_buckets(
    insert_counts: dict[str, int],
    small_files: dict[str, list[FileSlice]],
    record_size_bytes: int,
    sizing: SizingConfig,
) -> list[InsertBucket]:
    buckets: list[InsertBucket] = []
    for partition, total in sorted(insert_counts.items()):
        remaining = total
        for file_slice in sorted(small_files.get(partition, []), key=_base_size):
            base = file_slice.base_file
            assert base is not None
            capacity = (sizing.max_file_size_bytes - base.size_bytes) // record_size_bytes
            take = min(capacity, remaining)
            if take > 0:
                buckets.append(InsertBucket(partition, file_slice.file_id, base.file_name, take))
                remaining -= take
        if remaining > 0:
            per_bucket = (
                sizing.max_file_size_bytes // record_size_bytes
                if sizing.auto_split
                else sizing.insert_split_size
            )
            count = max(1, math.ceil(remaining / max(per_bucket, 1)))
            share, extra = divmod(remaining, count)
            for index in range(count):
                buckets.append(
                    InsertBucket(
                        partition, new_file_id(), None, share + (1 if index < extra else 0)
                    )
                )
    return buckets


def plan_for_job(job: WriteJob, counts: dict[str, int], *, small_files: bool) -> list[InsertBucket]:
    """Insert buckets for `counts` inserts per partition; notes the small files and the new file
    groups (in task units, `TASK_RECORDS`) on `job`: they size the write stage (`job.write_tasks`)."""
    sizing = job.cfg.sizing
    record_size = average_record_size(job.ctx, sizing)
    small = (
        small_file_slices(job.ctx, list(counts), sizing, merge_on_read=job.cfg.is_merge_on_read)
        if small_files
        else {}
    )
    buckets = plan_insert_buckets(counts, small, record_size, sizing)
    # Every small file of a partition with inserts, whether or not the inserts reach it (Hudi's
    # `getSmallFileIds`): on merge-on-read, such a group's updates rewrite its base file too.
    job.small_file_ids |= {
        s.file_id for partition, slices in small.items() if counts.get(partition) for s in slices
    }
    job.new_file_units += sum(
        min(1.0, b.records / TASK_RECORDS) for b in buckets if b.base_file_name is None
    )
    return buckets


def bucket_ranges(buckets: list[InsertBucket]) -> list[tuple[str, int, int, str, str | None]]:
    """(partition, low, high, file id, base file name): each bucket's share of its partition's
    hash range [0, HASH_RANGE), by its planned record count."""
    rows = []
    totals: dict[str, int] = {}
    for bucket in buckets:
        totals[bucket.partition] = totals.get(bucket.partition, 0) + bucket.records
    running: dict[str, int] = {}
    for bucket in buckets:
        before = running.get(bucket.partition, 0)
        after = before + bucket.records
        running[bucket.partition] = after
        total = totals[bucket.partition]
        low = before * HASH_RANGE // total
        high = HASH_RANGE if after == total else after * HASH_RANGE // total
        rows.append((bucket.partition, low, high, bucket.file_id, bucket.base_file_name))
    return rows


def assign_buckets(
    spark: SparkSession, inserts: DataFrame, buckets: list[InsertBucket]
) -> DataFrame:
    """Add `__pyhudi_fid` / `__pyhudi_base` to every insert, by key hash against bucket weights."""
    rows = bucket_ranges(buckets)
    table = rows_frame(spark, rows, _RANGE_FIELDS)
    hashed = inserts.withColumn(
        "__pyhudi_h", F.pmod(F.xxhash64(F.col(RECORD_KEY)), F.lit(HASH_RANGE))
    )
    condition = (
        (hashed[PARTITION_PATH] == table["b_partition"])
        & (hashed["__pyhudi_h"] >= table["b_low"])
        & (hashed["__pyhudi_h"] < table["b_high"])
    )
    joined = hashed.join(F.broadcast(table), on=condition, how="inner")
    return (
        joined.withColumn(FID, F.col("b_fid"))
        .withColumn(BASE, F.col("b_base"))
        .drop("__pyhudi_h", "b_partition", "b_low", "b_high", "b_fid", "b_base")
    )
