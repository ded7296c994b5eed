"""Compaction: merge each planned file slice's base file and log files into a new base file.

`schedule_compaction` persists a plan as `<t>.compaction.requested`; `execute_compaction` moves it
to inflight, runs one Spark task per file slice (the merge-on-read reader's semantics, records keep
their commit time), and completes it as `<t>.commit` with `compacted: true`. A failed or killed
execution leaves an inflight instant; the next run deletes what it wrote and executes the plan again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql import SparkSession

from pyhudi.codec import avro_schemas
from pyhudi.codec.schema import arrow_to_avro_json
from pyhudi.codec.service_plans import compaction_plan_from_avro, compaction_plan_to_avro
from pyhudi.config.compaction import CompactionConfig
from pyhudi.config.concurrency import concurrency_mode
from pyhudi.exceptions import PendingServiceError, UnsupportedOperationError
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.cdc_log import cdc_content, changes_between, needs_cdc_log
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.log_merge import merge_slice_with_stats
from pyhudi.file_group.merge import write_cdc_log
from pyhudi.file_group.slice_reader import read_base
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import STATS_DDL, commit_metadata_of, stats_table
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.file import join_partition
from pyhudi.model.instant import METADATA_BOOTSTRAP_INSTANT, Action, Instant, InstantTime
from pyhudi.model.plans import CompactionPlan
from pyhudi.model.results import ServiceOutcome
from pyhudi.reader.merge_options import merge_settings
from pyhudi.reader.planner import plan_read
from pyhudi.services.checks import check_plan_partitions
from pyhudi.services.common import begin_execution, commit_service, reset_to_requested, service_pool
from pyhudi.services.compaction.plan import plan_compaction, should_schedule
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.lock import table_transaction
from pyhudi.writer.late_tasks import settled_batches

log = logging.getLogger(__name__)


def _require_merge_on_read(ctx: TableContext) -> None:
    if not ctx.config.is_merge_on_read:
        raise UnsupportedOperationError(
            f"compaction applies to MERGE_ON_READ tables; {ctx.uri} is COPY_ON_WRITE"
        )


def schedule_compaction(
    ctx: TableContext, options: Mapping[str, str] | None = None, *, force: bool = False
) -> Instant | None:
    """Write a compaction plan (`<t>.compaction.requested`) if the trigger fires (or `force`) and
    slices qualify; planned and written under the table lock (a consistent view under OCC)."""
    _require_merge_on_read(ctx)
    ctx.config.check_writable(ctx.base_path, "compaction")
    with table_transaction(ctx, options):
        requested = _schedule_locked(ctx, options or {}, force)
    if requested is not None:
        fault_point("compaction.after_requested")
    return requested


def _schedule_locked(ctx: TableContext, options: Mapping[str, str], force: bool) -> Instant | None:
    ctx.reload()
    config = CompactionConfig.from_options(options)
    pending_writes = [
        i for i in ctx.active.timeline.pending() if i.action in (Action.COMMIT, Action.DELTA_COMMIT)
    ]
    if pending_writes and not concurrency_mode(options).supports_multi_writer:
        # Under OCC a write pending across the plan conflicts with it at its own commit (Hudi).
        raise PendingServiceError(
            f"cannot schedule compaction while write {pending_writes[0]} is in flight"
        )
    if not force and not should_schedule(ctx, config):
        return None
    plan = plan_compaction(ctx, config)
    if plan is None:
        return None
    return ctx.active.create_requested(
        ctx.new_instant_time(),
        Action.COMPACTION,
        avro_schemas.encode_timeline_record(
            "HoodieCompactionPlan", compaction_plan_to_avro(plan), ctx.config.version
        ),
    )


def pending_compactions(ctx: TableContext) -> list[Instant]:
    return list(ctx.reload().active.timeline.pending_compactions())


def read_plan(ctx: TableContext, instant: Instant) -> CompactionPlan:
    return compaction_plan_from_avro(read_requested_plan(ctx.active, instant))


def execute_compaction(
    spark: SparkSession,
    ctx: TableContext,
    instant: Instant | str,
    options: Mapping[str, str] | None = None,
) -> ServiceOutcome:
    """Run one pending compaction plan to completion."""
    ctx.reload()
    ctx.check_writable("compaction")
    pending = _pending(ctx, instant)
    plan = read_plan(ctx, pending)
    check_plan_partitions((o.partition_path for o in plan.operations), pending, "compaction")
    run = begin_execution(ctx, pending, options)
    inflight, cfg, schema, spec = run.inflight, run.cfg, run.schema, run.spec
    try:
        with service_pool(spark):
            rows = _run_tasks(spark, spec, _tasks(ctx, plan, spec, inflight.time))
        metadata = _metadata(cfg.table_name, schema, rows)
        commit_service(ctx, inflight, WriteOperationType.COMPACT, metadata, options)
    except BaseException:
        reset_to_requested(ctx, inflight)
        raise
    detail = f"{len(plan.operations)} file slices, {metadata.total('num_writes')} records, {metadata.total('total_log_files_compacted')} log files"
    return ServiceOutcome("compaction", inflight.time, detail)


def _pending(ctx: TableContext, instant: Instant | str) -> Instant:
    time = instant.time if isinstance(instant, Instant) else InstantTime(instant)
    for candidate in ctx.active.timeline.pending_compactions():
        if candidate.time == time:
            return candidate
    raise PendingServiceError(f"no pending compaction {time} in {ctx.uri}")


def _tasks(
    ctx: TableContext, plan: CompactionPlan, spec: WriteTaskSpec, instant_time: str
) -> list[SliceTask]:

    read_plan_ = plan_read(ctx)
    mode, ordering, _ = merge_settings(ctx, read_plan_)
    visible = frozenset(ctx.active.timeline.commits().up_to(instant_time).times())
    start = ctx.active.timeline.first.time if ctx.active.timeline.first else None
    sources = ctx.bootstrap_sources()
    return [
        SliceTask(
            storage=ctx.storage,
            base_path=ctx.base_path,
            partition_path=op.partition_path,
            file_id=op.file_id,
            base_file=join_partition(op.partition_path, op.base_file) if op.base_file else None,
            log_files=tuple(join_partition(op.partition_path, name) for name in op.log_files),
            file_schema=spec.file_schema,
            visible_instants=visible,
            as_of=instant_time,
            merge_mode=mode,
            ordering_field=ordering,
            timeline_start=start,
            ordered_deletes=ctx.config.version >= 8,
            bootstrap_source=sources.get((op.partition_path, op.file_id))
            if op.base_instant == METADATA_BOOTSTRAP_INSTANT
            else None,
        )
        for op in plan.operations
    ]


def _compact_function(spec: WriteTaskSpec, tasks: list[SliceTask]):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        rows = []
        for batch in batches:
            for index in batch.column(0).to_pylist():
                rows.append(_compact_one(spec, tasks[index], pid, token))
        yield from stats_table(rows).to_batches()

    return run


def _compact_one(spec: WriteTaskSpec, task: SliceTask, pid: int, token: str) -> dict:
    base = read_base(task)
    merged, counts = merge_slice_with_stats(task, base)
    prev = task.base_file.rsplit("_", 1)[-1].split(".")[0] if task.base_file else "null"
    writer = BaseFileWriter(
        spec,
        task.partition_path,
        task.file_id,
        token,
        IOType.MERGE,
        task_partition_id=pid,
        prev_commit=prev,
    )
    writer.write_existing(merged)  # compacted records keep their commit time and sequence number
    writer.counts.update(
        num_updates=counts["num_updates"],
        num_inserts=counts["num_inserts"],
        num_deletes=counts["num_deletes"],
    )
    row = writer.close()
    row.update(_cdc_log(spec, task, token, base, merged, counts["num_inserts"], row["num_writes"]))
    log_sizes = [task.storage.status(task.path(p)) for p in task.log_files]
    row.update(
        total_log_records=counts["total_log_records"],
        total_log_blocks=counts["total_log_blocks"],
        total_log_files_compacted=len(task.log_files),
        total_log_size_compacted=sum(s.size_bytes for s in log_sizes if s),
        total_updated_records_compacted=counts["num_updates"],
    )
    return row


def _cdc_log(
    spec: WriteTaskSpec,
    task: SliceTask,
    token: str,
    base: pa.Table | None,
    merged: pa.Table,
    num_inserts: int,
    num_writes: int,
) -> dict[str, object]:
    """Hudi 1.2 (versions 8 and 9) logs what a compaction changed of the previous base file;
    Hudi 0.15 (version 6) does not. The stats row columns of the CDC log, if one is written."""
    cdc = spec.cdc
    if cdc is None or cdc.table_version < 8 or base is None:
        return {}
    if not needs_cdc_log(num_writes, num_inserts):
        return {}
    content = cdc_content(cdc, spec.instant_time, base, merged, changes_between(base, merged))
    return write_cdc_log(spec, task.partition_path, task.file_id, token, content)


def _run_tasks(spark: SparkSession, spec: WriteTaskSpec, tasks: list[SliceTask]) -> list[dict]:
    if not tasks:
        return []
    indices = spark.createDataFrame([(i,) for i in range(len(tasks))], "i int")
    slots = max(1, min(len(tasks), default_parallelism(spark) * 4))
    result = indices.repartition(slots).mapInArrow(
        settled_batches(spec, _compact_function(spec, tasks)), STATS_DDL
    )
    return [row.asDict() for row in result.collect()]


def _metadata(table_name: str, schema: pa.Schema, rows: list[dict]) -> CommitMetadata:
    extra = {"schema": arrow_to_avro_json(schema, table_name)}
    return commit_metadata_of(rows, WriteOperationType.COMPACT, extra, compacted=True)


def run_compaction(
    spark: SparkSession,
    ctx: TableContext,
    options: Mapping[str, str] | None = None,
    *,
    schedule: bool = True,
    force: bool = False,
) -> list[ServiceOutcome]:
    """Execute every pending compaction (oldest first), after scheduling a new one if asked."""
    _require_merge_on_read(ctx)
    if schedule:
        schedule_compaction(ctx, options, force=force)
    return [
        execute_compaction(spark, ctx, instant, options) for instant in pending_compactions(ctx)
    ]
