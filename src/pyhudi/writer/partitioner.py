"""File sizing: which file group each insert goes to (Hudi's `UpsertPartitioner` rules).

Per partition, inserts first fill small files (base files under `hoodie.parquet.small.file.limit`,
up to `hoodie.parquet.max.file.size` at the average record size of earlier commits), the rest go
to new file groups of `max.file.size / record size` records each (or
`hoodie.copyonwrite.insert.split.size` without auto split). Records are spread over a partition's
buckets by a hash of their key against the buckets' cumulative weights: a broadcast range join.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec.file_names import new_file_id
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.control_columns import BASE, FID
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import BaseFile, FileSlice
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
    """Bytes per record from the newest commit that wrote more than the small-file limit."""
    if ctx is None:
        return sizing.record_size_estimate_bytes
    for instant in reversed(ctx.active.timeline.commits().instants):
        metadata = ctx.active.commit_metadata(instant)
        total_bytes, total_records = (
            metadata.total("total_write_bytes"),
            metadata.total("num_writes"),
        )
        if total_bytes > sizing.small_file_limit_bytes and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return sizing.record_size_estimate_bytes


def small_file_slices(
    ctx: TableContext, partitions: list[str], sizing: SizingConfig, *, merge_on_read: bool
) -> dict[str, list[FileSlice]]:
    """Slices that take inserts: small base files, not under pending compaction or clustering.

    On merge-on-read only slices without log files qualify (the index cannot see keys in logs).
    """
    if sizing.small_file_limit_bytes <= 0:
        return {}
    blocked = set(pending_compaction_operations(ctx.active)) | set(
        pending_clustering_file_groups(ctx.active)
    )
    result: dict[str, list[FileSlice]] = {}
    for file_slice in ctx.view().latest_file_slices(partitions=partitions):
        base = file_slice.base_file
        if base is None or (file_slice.partition_path, file_slice.file_id) in blocked:
            continue
        if merge_on_read and file_slice.has_log_files:
            continue
        if base.size_bytes < sizing.small_file_limit_bytes:
            result.setdefault(file_slice.partition_path, []).append(file_slice)
    return result


def plan_insert_buckets(
    insert_counts: dict[str, int],
    small_files: dict[str, list[FileSlice]],
    record_size_bytes: int,
    sizing: SizingConfig,
) -> list[InsertBucket]:
    buckets: list[InsertBucket] = []
    for partition, total in sorted(insert_counts.items()):
        remaining = total
        for file_slice in sorted(
            small_files.get(partition, []), key=lambda s: cast(BaseFile, s.base_file).size_bytes
        ):
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
    job.small_file_ids |= {b.file_id for b in buckets if b.base_file_name is not None}
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
