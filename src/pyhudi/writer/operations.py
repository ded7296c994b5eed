"""The write operations: each turns prepared records into written files (stats) and replacements."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pyhudi.codec.schema import IS_DELETED_FIELD, PARTITION_PATH, RECORD_KEY
from pyhudi.config import clustering as clustering_keys
from pyhudi.config import index as index_keys
from pyhudi.config import write as write_keys
from pyhudi.exceptions import PendingServiceError
from pyhudi.file_group.bulk_insert import bulk_insert_function
from pyhudi.file_group.control_columns import BASE, CONTROL_COLUMNS, DELETE, FID, POSITION
from pyhudi.file_group.merge import file_group_function
from pyhudi.file_group.stats import STATS_DDL
from pyhudi.fs_view import pending_clustering_file_groups
from pyhudi.index.bucket import (
    bucket_id_column,
    check_bucket_count,
    existing_buckets,
    route_by_bucket,
)
from pyhudi.index.locate import Lookup, choose_lookup, tag_locations, with_located
from pyhudi.index.simple import LOC_BASE, LOC_FID, LOC_PARTITION
from pyhudi.model.enums import WriteOperationType
from pyhudi.spark_compat import apply_in_arrow
from pyhudi.spark_env import checkpointed, release
from pyhudi.table.context import TableContext
from pyhudi.writer import partitioner, small_batch
from pyhudi.writer.bucket_load import LOADS, load_new_buckets
from pyhudi.writer.config import WriteConfig
from pyhudi.writer.job import Outcome, WriteJob, in_task_combine, merge_spec, write_tasks
from pyhudi.writer.late_tasks import settled_batches, settled_groups
from pyhudi.writer.mor import write_file_groups_mor, writes_positions
from pyhudi.writer.prepare import deduplicate


def write_file_groups_cow(job: WriteJob, records: DataFrame) -> list[dict]:
    merge = merge_spec(job.cfg)
    data = records.drop(
        *[c for c in records.columns if c.startswith("__pyhudi_") and c not in CONTROL_COLUMNS]
    )
    result = apply_in_arrow(
        data,
        FID,
        settled_groups(job.spec, file_group_function(job.spec, merge)),
        STATS_DDL,
        tasks=write_tasks(job, rewritable_groups(job)),
    )
    return [row.asDict() for row in result.collect()]


def rewritable_groups(job: WriteJob) -> int:
    """File groups a copy-on-write write may rewrite: the latest slices of the partitions its
    records go to, at most one per record (every slice of the table when the partitions are not
    known, or under a global index, whose records may move to another partition)."""
    counts = job.incoming_counts
    if counts is None or job.cfg.is_global_index:
        return len(job.ctx.view().latest_file_slices())
    slices = job.ctx.view().latest_file_slices(partitions=sorted(counts))
    return min(len(slices), sum(counts.values()))


def _write_groups(job: WriteJob, records: DataFrame) -> list[dict]:
    if job.cfg.is_merge_on_read:
        return write_file_groups_mor(job, records)
    return write_file_groups_cow(job, records)


def _incoming_partitions(records: DataFrame) -> list[str]:
    return sorted(row[0] for row in records.select(PARTITION_PATH).distinct().collect())


def _incoming_counts(records: DataFrame) -> dict[str, int]:
    """Records per incoming partition path (one job: the partitions to index and the batch size)."""
    return {row[0]: row[1] for row in records.groupBy(PARTITION_PATH).count().collect()}


def _assign_inserts(
    job: WriteJob, inserts: DataFrame, *, small_files: bool, counts: dict[str, int] | None = None
) -> DataFrame:
    """`inserts` assigned to insert buckets; `counts`: their records per partition, when known."""
    if counts is None:
        counts = {row[0]: row[1] for row in inserts.groupBy(PARTITION_PATH).count().collect()}
    if not counts:
        return inserts.withColumn(FID, F.lit(None).cast("string")).withColumn(
            BASE, F.lit(None).cast("string")
        )
    buckets = partitioner.plan_for_job(job, counts, small_files=small_files)
    return partitioner.assign_buckets(job.spark, inserts, buckets)


# ---- operations -----------------------------------------------------------------------------------


def reject_updates_under_clustering(job: WriteJob, records: DataFrame, fid_column: str) -> None:
    """Hudi's default `SparkRejectUpdateStrategy`: no write may touch a file group being clustered."""

    if "SparkAllowUpdateStrategy" in (clustering_keys.UPDATES_STRATEGY.get(job.cfg.options) or ""):
        return
    pending = pending_clustering_file_groups(job.ctx.active)
    if not pending:
        return
    by_file_id = {fid: instant for (_, fid), instant in pending.items()}
    hit = (
        records.filter(F.col(fid_column).isin(sorted(by_file_id)))
        .select(fid_column)
        .limit(1)
        .collect()
    )
    if hit:
        fid = hit[0][0]
        raise PendingServiceError(
            f"records update file group {fid}, which pending clustering {by_file_id[fid]} is rewriting; "
            "wait for it (or roll it back), or set hoodie.clustering.updates.strategy="
            "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"
        )


def _bucket_routed(job: WriteJob, records: DataFrame) -> Outcome:
    """Bucket index: every record goes to its bucket's file group; no index lookup, no small files."""

    hash_fields, num_buckets, complex_key = _bucket_hashing(job)
    known = existing_buckets(job.ctx)
    check_bucket_count(known, num_buckets)
    if not known and job.cfg.operation in LOADS:
        return Outcome(load_new_buckets(job, records, _bucket_of(job)))
    routed = route_by_bucket(
        job.spark,
        job.ctx,
        records,
        num_buckets,
        hash_fields,
        complex_key,
        FID,
        BASE,
        job.spec.instant_time,
        known,
    )
    reject_updates_under_clustering(job, routed, FID)
    return Outcome(_write_groups(job, routed))


def _bucket_hashing(job: WriteJob) -> tuple[tuple[str, ...], int, bool]:
    """(hash fields, number of buckets, complex key) of the bucket index."""
    hash_field = index_keys.BUCKET_HASH_FIELD.get(job.cfg.options)
    hash_fields = (
        tuple(f.strip() for f in hash_field.split(","))
        if hash_field
        else job.cfg.keygen.record_key_fields
    )
    num_buckets = index_keys.BUCKET_NUM.get(job.cfg.options)
    return hash_fields, num_buckets, job.cfg.keygen.uses_complex_record_key


def _bucket_of(job: WriteJob) -> Callable[[Column], Column]:
    """The bucket number of a record key column."""
    hash_fields, num_buckets, complex_key = _bucket_hashing(job)
    return lambda key: bucket_id_column(key, num_buckets, hash_fields, complex_key)


def _uses_buckets(job: WriteJob) -> bool:
    return choose_lookup(job.ctx, job.cfg).lookup is Lookup.BUCKET


def bulk_insert(job: WriteJob) -> Outcome:
    records = job.records.filter(~F.col(DELETE))
    if job.cfg.combine_before_write:
        records = deduplicate(records, job.cfg)
    if _uses_buckets(job):
        return _bucket_routed(job, records)
    mode = write_keys.BULK_INSERT_SORT_MODE.get(job.cfg.options)
    if mode == "GLOBAL_SORT":
        records = records.orderBy(PARTITION_PATH, RECORD_KEY)
    elif job.cfg.parallelism > 0:
        records = records.repartition(job.cfg.parallelism)
    if mode == "PARTITION_SORT":
        records = records.sortWithinPartitions(PARTITION_PATH, RECORD_KEY)
    data = records.drop(DELETE)
    result = data.mapInArrow(settled_batches(job.spec, bulk_insert_function(job.spec)), STATS_DDL)
    return Outcome([row.asDict() for row in result.collect()])


def insert(job: WriteJob) -> Outcome:
    records = job.records.filter(~F.col(DELETE))
    if job.cfg.combine_before_write:
        records = deduplicate(records, job.cfg)
    if _uses_buckets(job):
        return _bucket_routed(job, records)
    if job.cfg.drop_duplicates:
        tagged = tag_locations(job.spark, job.ctx, records, job.cfg, None)
        records = tagged.filter(F.col(LOC_FID).isNull()).drop(LOC_FID, LOC_BASE, LOC_PARTITION)
    # The checking job's counts (of its checkpointed records) hold while no record was dropped.
    counts = job.incoming_counts
    if (
        job.cfg.combine_before_write
        or job.cfg.drop_duplicates
        or IS_DELETED_FIELD in records.columns
    ):
        counts = None
        records = checkpointed(records)
    try:
        assigned = _assign_inserts(job, records, small_files=True, counts=counts)
        return Outcome(_write_groups(job, assigned))
    finally:
        release(records)
        release(job.records)


def counts_before_instant(cfg: WriteConfig) -> bool:
    """A write that needs its records per partition gets them from the job checking partition
    values before the instant (`pipeline.checked_records`): an upsert or a delete that looks its
    keys up by partition (a small batch on the driver), an insert that assigns them to buckets."""
    if cfg.index_type.routes_by_bucket:
        return False
    if cfg.operation is WriteOperationType.INSERT:
        return True
    return (
        cfg.operation in (WriteOperationType.UPSERT, WriteOperationType.DELETE)
        and not cfg.is_global_index
    )


def upsert(job: WriteJob) -> Outcome:
    records = job.records
    if _uses_buckets(job):
        return _bucket_routed(job, records)  # pre-combining happens in the file-group tasks
    if job.cfg.combine_before_write and not in_task_combine(job.cfg):
        records = deduplicate(records, job.cfg)
    if job.incoming_counts is None:
        records = checkpointed(records)
    try:
        partitions, rows = None, None
        if not job.cfg.is_global_index:
            counts = job.incoming_counts
            if counts is None:
                counts = job.incoming_counts = _incoming_counts(records)
            partitions, rows = sorted(counts), sum(counts.values())
        lookup = choose_lookup(job.ctx, job.cfg, partitions, rows)
        if lookup.lookup is Lookup.DRIVER:
            routed = small_batch.tagged_on_driver(job, records, list(lookup.files))
            reject_updates_under_clustering(job, routed, FID)
            return Outcome(_write_groups(job, routed))
        tagged = tag_locations(
            job.spark, job.ctx, records, job.cfg, partitions, rows, writes_positions(job)
        )
        tagged = _route_global_moves(job, tagged)
        tagged = checkpointed(with_located(tagged, job.cfg, job.spec.collect_keys))
        try:
            reject_updates_under_clustering(job, tagged, LOC_FID)
            updates = (
                tagged.filter(F.col(LOC_FID).isNotNull())
                .withColumn(FID, F.col(LOC_FID))
                .withColumn(BASE, F.col(LOC_BASE))
            )
            inserts = tagged.filter(F.col(LOC_FID).isNull())
            # Deletes of keys new to the table count as inserts (Hudi's workload profile counts
            # them: their partitions' small files are rewritten) and are written nowhere; in-task
            # combining keeps them to compete with inserts of their key.
            assigned = _assign_inserts(job, inserts, small_files=True)
            if not in_task_combine(job.cfg):
                assigned = assigned.filter(~F.col(DELETE))
            columns = [c for c in assigned.columns if c not in (LOC_FID, LOC_BASE, LOC_PARTITION)]
            combined = updates.select(*columns).unionByName(assigned.select(*columns))
            return Outcome(_write_groups(job, combined))
        finally:
            release(tagged)
    finally:
        release(records)


def _route_global_moves(job: WriteJob, tagged: DataFrame) -> DataFrame:
    """Global index: a key arriving in another partition moves there or stays (config)."""
    if not job.cfg.is_global_index:
        return tagged
    moved = F.col(LOC_FID).isNotNull() & (F.col(LOC_PARTITION) != F.col(PARTITION_PATH))
    moves = index_keys.GLOBAL_INDEX_UPDATE_PARTITION_PATH
    if job.cfg.index_type.reads_record_index:
        moves = index_keys.RECORD_INDEX_UPDATE_PARTITION_PATH
    if not moves.get(job.cfg.options):
        return tagged.withColumn(
            PARTITION_PATH, F.when(moved, F.col(LOC_PARTITION)).otherwise(F.col(PARTITION_PATH))
        )
    stay = tagged.filter(~moved | F.col(LOC_FID).isNull())
    arrivals = (
        tagged.filter(moved)
        .withColumn(LOC_FID, F.lit(None).cast("string"))
        .withColumn(LOC_BASE, F.lit(None).cast("string"))
    )
    if POSITION in tagged.columns:  # an insert into its new partition: no base file row
        arrivals = arrivals.withColumn(POSITION, F.lit(None).cast("long"))
    departures = (
        tagged.filter(moved)
        .withColumn(PARTITION_PATH, F.col(LOC_PARTITION))
        .withColumn(DELETE, F.lit(True))
    )
    return stay.unionByName(arrivals).unionByName(departures)


def delete(job: WriteJob) -> Outcome:
    records = job.records
    if _uses_buckets(job):
        return _bucket_routed(job, records)
    if job.cfg.combine_before_write:
        keys = [RECORD_KEY] if job.cfg.is_global_index else [RECORD_KEY, PARTITION_PATH]
        records = records.dropDuplicates(keys)
    try:
        return _delete(job, records)
    finally:
        release(job.records)  # the checking job's checkpoint


def _delete(job: WriteJob, records: DataFrame) -> Outcome:
    partitions, rows = None, None
    if not job.cfg.is_global_index:
        # The checking job's counts: the same partitions, at least as many records as are left
        # after dropping duplicate keys.
        counts = job.incoming_counts
        if counts is None:
            counts = _incoming_counts(records)
        partitions, rows = sorted(counts), sum(counts.values())
    lookup = choose_lookup(job.ctx, job.cfg, partitions, rows)
    if lookup.lookup is Lookup.DRIVER:
        routed = small_batch.tagged_on_driver(job, records, list(lookup.files), keep_new=False)
        reject_updates_under_clustering(job, routed, FID)
        return Outcome(_write_groups(job, routed))
    tagged = tag_locations(
        job.spark, job.ctx, records, job.cfg, partitions, rows, positions=writes_positions(job)
    )
    if job.cfg.is_global_index:
        tagged = tagged.withColumn(PARTITION_PATH, F.col(LOC_PARTITION))
    tagged = with_located(tagged, job.cfg, job.spec.collect_keys)
    found = (
        tagged.filter(F.col(LOC_FID).isNotNull())
        .withColumn(FID, F.col(LOC_FID))
        .withColumn(BASE, F.col(LOC_BASE))
    )
    reject_updates_under_clustering(job, found, FID)
    return Outcome(_write_groups(job, found.drop(LOC_FID, LOC_BASE, LOC_PARTITION)))


def insert_overwrite(job: WriteJob, *, whole_table: bool) -> Outcome:
    records = job.records.filter(~F.col(DELETE))
    if job.cfg.combine_before_write:
        records = deduplicate(records, job.cfg)
    if _uses_buckets(job):
        # The overwritten partitions get new file groups named by bucket, as a bucket load makes:
        # a file group without a bucket name would leave its keys where no upsert looks.
        stats = load_new_buckets(job, records, _bucket_of(job))
        partitions = sorted({row["partition_path"] or "" for row in stats})
    else:
        records = checkpointed(records)
        try:
            partitions = _incoming_partitions(records)
            assigned = _assign_inserts(job, records, small_files=False)
            stats = _write_groups(job, assigned)
        finally:
            release(records)
    targets = job.ctx.view().partition_paths() if whole_table else partitions
    return Outcome(stats, _file_groups_of(job.ctx, targets))


def delete_partition(job: WriteJob) -> Outcome:
    partitions = job.cfg.partitions_to_delete
    if partitions is None:
        partitions = tuple(_incoming_partitions(job.records))
    existing = set(job.ctx.view().partition_paths())
    targets = [p for p in existing if any(_matches(p, pattern) for pattern in partitions)]
    return Outcome([], _file_groups_of(job.ctx, targets))


def _matches(partition: str, pattern: str) -> bool:

    return partition == pattern or fnmatch.fnmatchcase(partition, pattern)


def _file_groups_of(ctx: TableContext, partitions: list[str]) -> dict[str, list[str]]:
    replaced: dict[str, list[str]] = {}
    for group in ctx.view().file_groups(partitions=partitions):
        replaced.setdefault(group.partition_path, []).append(group.file_id)
    return replaced


OPERATIONS: dict[WriteOperationType, Callable[[WriteJob], Outcome]] = {
    WriteOperationType.BULK_INSERT: bulk_insert,
    WriteOperationType.INSERT: insert,
    WriteOperationType.UPSERT: upsert,
    WriteOperationType.DELETE: delete,
    WriteOperationType.INSERT_OVERWRITE: lambda job: insert_overwrite(job, whole_table=False),
    WriteOperationType.INSERT_OVERWRITE_TABLE: lambda job: insert_overwrite(job, whole_table=True),
    WriteOperationType.DELETE_PARTITION: delete_partition,
}
