"""Clustering: rewrite groups of small file slices (sorted when asked) as new, larger file groups.

`schedule_clustering` persists a plan as `<t>.replacecommit.requested` (operationType CLUSTER);
`execute_clustering` moves it to inflight (empty file), reads each group's slices (merged on
merge-on-read), repartitions them into the planned number of output file groups (range-partitioned
and sorted by the sort columns if set), writes them with their commit times kept, and completes a
`replacecommit` whose `partitionToReplaceFileIds` names the input file groups. Readers stop seeing the
replaced groups at that instant and still see them when time-travelling before it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec import avro_schemas
from pyhudi.codec.schema import PARTITION_PATH, arrow_to_avro_json
from pyhudi.codec.service_plans import clustering_group_from_avro, clustering_plan_to_avro
from pyhudi.config import clustering as clustering_keys
from pyhudi.config import index as index_keys
from pyhudi.config.clustering import ClusteringConfig
from pyhudi.exceptions import PendingServiceError, UnsupportedOperationError, WriteConflictError
from pyhudi.file_group.bulk_insert import PartitionBuffer
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import STATS_DDL, commit_metadata_of, stats_table
from pyhudi.fs_view.pending import pending_clustering_file_groups, read_requested_plan
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import METADATA_BOOTSTRAP_INSTANT, Action, Instant, InstantTime
from pyhudi.model.plans import ClusteringGroup
from pyhudi.model.results import ServiceOutcome
from pyhudi.reader.dataframe import dataframe_for_plan
from pyhudi.reader.planner import ReadPlan, split_slices
from pyhudi.services.checks import check_plan_partitions
from pyhudi.services.clustering.plan import plan_clustering
from pyhudi.services.common import begin_execution, commit_service, reset_to_requested, service_pool
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.lock import table_transaction
from pyhudi.table.rollback import rollback_instant
from pyhudi.writer.late_tasks import settled_batches


def pending_clusterings(ctx: TableContext) -> list[Instant]:
    ctx.reload()
    times = set(pending_clustering_file_groups(ctx.active).values())
    return [i for i in ctx.active.timeline.pending() if i.time in times]


def commits_since_last_clustering(ctx: TableContext) -> int:
    timeline = ctx.active.timeline
    last = None
    for instant in timeline.commits().with_actions(Action.REPLACE_COMMIT):
        if ctx.active.commit_metadata(instant).operation_type is WriteOperationType.CLUSTER:
            last = instant.time
    return sum(1 for i in timeline.commits() if last is None or i.time > last)


def schedule_clustering(
    ctx: TableContext, options: Mapping[str, str] | None = None
) -> Instant | None:
    ctx.config.check_writable(ctx.base_path, "clustering")
    with table_transaction(ctx, options):  # planned on a consistent view (OCC)
        ctx.reload()
        _refuse_bucket_tables(ctx, options or {})
        plan = plan_clustering(ctx, ClusteringConfig.from_options(options or {}))
        if plan is None:
            return None
        version = ctx.config.version
        content = avro_schemas.encode_timeline_record(
            "HoodieRequestedReplaceMetadata", clustering_plan_to_avro(plan, ctx.uri), version
        )
        time = ctx.new_instant_time()
        # Table version 8+ names a pending clustering `clustering`; it completes as a replacecommit.
        action = Action.CLUSTERING if version >= 8 else Action.REPLACE_COMMIT
        requested = ctx.active.create_requested(time, action, content)
    fault_point("clustering.after_requested")
    return requested


def _refuse_bucket_tables(ctx: TableContext, options: Mapping[str, str]) -> None:
    """Clustering would move records out of their buckets. A bucket table is known by the option,
    or (a service run without the writers' options) by every file group being named by its bucket
    (`<8-digit bucket>-...`: two or more random file ids all start with eight digits once in 2,000)."""
    if index_keys.index_type(options).routes_by_bucket:
        raise UnsupportedOperationError(f"clustering {clustering_keys.BUCKET_REFUSAL}")
    file_ids = [s.file_id for s in ctx.view().latest_file_slices()]
    if len(file_ids) >= 2 and all(_BUCKET_FILE_ID.match(fid) for fid in file_ids):
        raise UnsupportedOperationError(
            f"clustering {clustering_keys.BUCKET_REFUSAL}; this table's file groups are all named "
            "by bucket"
        )


_BUCKET_FILE_ID = re.compile(r"\d{8}-")


def execute_clustering(
    spark: SparkSession,
    ctx: TableContext,
    instant: Instant | str,
    options: Mapping[str, str] | None = None,
) -> ServiceOutcome:
    ctx.reload()
    ctx.check_writable("clustering")
    pending = _pending(ctx, instant)
    requested = read_requested_plan(ctx.active, pending)["clusteringPlan"]
    groups = [clustering_group_from_avro(g, ctx.uri) for g in requested.get("inputGroups") or []]
    sort_columns = _sort_columns(requested)
    check_plan_partitions((g.partition_path for g in groups), pending, "clustering")
    run = begin_execution(ctx, pending, options)
    inflight, cfg, schema, spec = run.inflight, run.cfg, run.schema, run.spec
    try:
        with service_pool(spark):
            rows = [
                row
                for g in groups
                for row in _cluster_group(spark, ctx, spec, g, sort_columns, schema)
            ]
        commit_service(  # the conflict check runs under the table lock, right before the commit
            ctx,
            inflight,
            WriteOperationType.CLUSTER,
            _metadata(cfg.table_name, schema, rows, groups),
            options,
            pre_commit=lambda: _check_conflicts(ctx.reload(), inflight, groups),
        )
    except _InputsChanged:  # the check rolled the plan back
        raise
    except BaseException:
        reset_to_requested(ctx, inflight)
        raise
    detail = f"{sum(len(g.slices) for g in groups)} file groups into {len(rows)} in {len(groups)} group(s)"
    return ServiceOutcome("clustering", inflight.time, detail)


def _pending(ctx: TableContext, instant: Instant | str) -> Instant:
    time = instant.time if isinstance(instant, Instant) else InstantTime(instant)
    for candidate in pending_clusterings(ctx):
        if candidate.time == time:
            return candidate
    raise PendingServiceError(f"no pending clustering {time} in {ctx.uri}")


def _sort_columns(plan: Mapping) -> tuple[str, ...]:
    params = (plan.get("strategy") or {}).get("strategyParams") or {}
    value = params.get(clustering_keys.SORT_COLUMNS.key) or ""
    return tuple(c.strip() for c in value.split(",") if c.strip())


def _group_frame(
    spark: SparkSession, ctx: TableContext, group: ClusteringGroup, schema: pa.Schema, as_of: str
) -> DataFrame:
    visible = ctx.active.timeline.commits().up_to(as_of)
    sources = ctx.bootstrap_sources()
    slices = [_with_source(s, sources) for s in group.slices]
    base_only, with_logs, stitched = split_slices(slices)
    plan = ReadPlan(
        base_uri=ctx.uri,
        query_type="snapshot",
        data_schema=schema,
        base_only=base_only,
        with_logs=with_logs,
        stitched=stitched,
        visible_instants=frozenset(visible.times()),
        as_of=visible.last.time if visible.last else None,
        timeline_start=ctx.active.timeline.first.time if ctx.active.timeline.first else None,
    )
    return dataframe_for_plan(spark, ctx, plan)


def _with_source(file_slice, sources):  # type: ignore[no-untyped-def]
    """Attach a bootstrap skeleton's source file (plans name only the skeleton)."""
    base = file_slice.base_file
    source = sources.get((file_slice.partition_path, file_slice.file_id))
    if base is None or source is None or base.instant_time != METADATA_BOOTSTRAP_INSTANT:
        return file_slice
    return dataclasses.replace(
        file_slice, base_file=dataclasses.replace(base, bootstrap_source_path=source)
    )


def _cluster_group(
    spark: SparkSession,
    ctx: TableContext,
    spec: WriteTaskSpec,
    group: ClusteringGroup,
    sort_columns: tuple[str, ...],
    schema: pa.Schema,
) -> list[dict]:
    frame = _group_frame(spark, ctx, group, schema, spec.instant_time)
    count = group.num_output_file_groups
    if sort_columns:
        frame = frame.repartitionByRange(count, *sort_columns).sortWithinPartitions(*sort_columns)
    else:
        frame = frame.repartition(count)
    frame = frame.withColumn(PARTITION_PATH, F.lit(group.partition_path))
    result = frame.mapInArrow(
        settled_batches(spec, _write_function(spec, group.partition_path)), STATS_DDL
    )
    return [row.asDict() for row in result.collect()]


def _write_function(spec: WriteTaskSpec, partition: str):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        buffer = PartitionBuffer(spec, partition, pid, token, preserve_meta=True)
        for batch in batches:
            if batch.num_rows:
                buffer.add(pa.Table.from_batches([batch]))
        yield from stats_table(buffer.close()).to_batches()

    return run


class _InputsChanged(WriteConflictError):
    """A commit after the plan wrote to one of its input file groups."""


def _check_conflicts(ctx: TableContext, inflight: Instant, groups: list[ClusteringGroup]) -> None:
    """Changes to its input file groups after the plan: writes there would be lost by the
    replacement, and file groups that an insert_overwrite or delete_partition replaced meanwhile
    would come back. Such a plan can never complete: it is rolled back whole (its files, its
    requested and inflight files, with a rollback instant), under the table lock and while its
    heartbeat still beats, so that the next schedule plans those file groups again (as they are
    now)."""
    change = _changed_input(ctx, inflight, groups)
    if change is not None:
        rollback = rollback_instant(ctx, inflight, record=commit_rollback_to_metadata_table)
        raise _InputsChanged(
            f"clustering {inflight.time} aborted: {change}; the plan was rolled back (rollback "
            f"{rollback}) and the next schedule plans these file groups again"
        )


def _changed_input(
    ctx: TableContext, inflight: Instant, groups: list[ClusteringGroup]
) -> str | None:
    """How a commit after the plan changed an input file group (wrote to it or replaced it), or
    None. A write that began before the plan and ends after it is refused at its own commit (OCC:
    the pending plan is a conflict), and single writers hold the table lock while they write."""
    inputs = {(s.partition_path, s.file_id) for g in groups for s in g.slices}
    for instant in ctx.active.timeline.commits():
        if instant.time <= inflight.time:
            continue
        metadata = ctx.active.commit_metadata(instant)
        written = {(stat.partition_path or "", stat.file_id) for stat in metadata.write_stats()}
        for what, touched in (("wrote to", written), ("replaced", metadata.replaced_file_ids())):
            hit = sorted(touched & inputs)
            if hit:
                return f"commit {instant.time} {what} its input file group {hit[0][1]}"
    return None


def _metadata(
    table_name: str, schema: pa.Schema, rows: list[dict], groups: list[ClusteringGroup]
) -> CommitMetadata:
    replaced: dict[str, list[str]] = {}
    for group in groups:
        for s in group.slices:
            replaced.setdefault(s.partition_path, []).append(s.file_id)
    extra = {"schema": arrow_to_avro_json(schema, table_name)}
    return commit_metadata_of(rows, WriteOperationType.CLUSTER, extra, replaced=replaced)


def run_clustering(
    spark: SparkSession,
    ctx: TableContext,
    options: Mapping[str, str] | None = None,
    *,
    schedule: bool = True,
) -> list[ServiceOutcome]:
    """Execute pending clusterings (oldest first) after scheduling a new one if asked."""
    if schedule:
        schedule_clustering(ctx, options)
    return [
        execute_clustering(spark, ctx, instant, options) for instant in pending_clusterings(ctx)
    ]
