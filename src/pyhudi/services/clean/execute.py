"""The clean service: schedule, execute and run cleans (Hudi 0.14 `CleanPlanActionExecutor`,
`CleanActionExecutor`, `BaseHoodieTableServiceClient.clean`), Spark-free.

What is kept and what goes is decided by `pyhudi.services.clean.plan` (its docstring states
the retention rules). On the timeline (reference §7.5):

| file                  | content                                                           |
|-----------------------|-------------------------------------------------------------------|
| `<t>.clean.requested` | Avro `HoodieCleanerPlan` v2: full paths of the files to delete     |
| `<t>.clean.inflight`  | the same plan bytes                                                |
| `<t>.clean`           | Avro `HoodieCleanMetadata` v2: per partition the file names tried, |
|                       | deleted and not deleted                                            |

A file already gone when the clean runs (a clean re-executed after a crash) does not fail it; as
in Hudi it is listed under `failedDeleteFiles`. `run_clean` first completes pending cleans, then
(failed-writes policy LAZY only) rolls back writes whose heartbeat expired, then schedules and
executes a new clean when `hoodie.clean.max.commits` commits completed since the last one.

>>> result = run_clean(TableContext.open("/data/trips"), CleanConfig())  # doctest: +SKIP
>>> print(result)  # doctest: +SKIP
clean 20240102030405678 (KEEP_LATEST_COMMITS): 4 files deleted in 2 partitions, ...
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pyhudi.codec.avro_schemas import decode_container, encode_timeline_record
from pyhudi.codec.service_plans import clean_plan_from_avro, clean_plan_to_avro
from pyhudi.config.clean import CleanConfig, CleaningPolicy, FailedWritesPolicy
from pyhudi.exceptions import CommitConflictError
from pyhudi.metadata.writer import (
    commit_clean_to_metadata_table,
    commit_rollback_to_metadata_table,
    prepare_metadata_table,
)
from pyhudi.model.file import join_partition
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.model.plans import CleanPlan
from pyhudi.model.results import CleanResult
from pyhudi.services.clean.plan import plan_clean
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.guard import rollback_expired
from pyhudi.table.heartbeat import is_heartbeat_expired
from pyhudi.table.lock import table_transaction
from pyhudi.table.rollback import failed_write_instants

#: `CleanerUtils.LATEST_CLEAN_METADATA_VERSION`.
CLEAN_METADATA_VERSION = 2


# ---- scheduling -----------------------------------------------------------------------------------


def commits_since_last_clean(ctx: TableContext) -> int:
    """Completed commits after the last completed clean's `lastCompletedCommitTimestamp`."""
    timeline = ctx.active.timeline
    commits = timeline.commits()
    last_clean = timeline.completed().with_actions(Action.CLEAN).last
    content = ctx.active.read_content(last_clean) if last_clean is not None else b""
    if not content:
        return len(commits)
    metadata = decode_container(content, what=f"clean metadata of {last_clean}")
    last_commit = metadata.get("lastCompletedCommitTimestamp") or ""
    return sum(1 for c in commits if c.time > last_commit)


def schedule_clean(
    ctx: TableContext,
    config: CleanConfig,
    *,
    now: datetime | None = None,
    instant_time: str | None = None,
) -> Instant | None:
    """Write `<t>.clean.requested` when the trigger allows and there is something to delete
    (`t` a new instant time, or `instant_time`: the metadata table cleans at `<t>002`)."""
    ctx.config.check_writable(ctx.base_path, "clean")
    if commits_since_last_clean(ctx) < config.max_commits:
        return None
    plan = plan_clean(ctx, config, now=now)
    if plan is None:
        return None
    content = encode_timeline_record(
        "HoodieCleanerPlan", clean_plan_to_avro(plan), ctx.config.version
    )
    time = instant_time or ctx.new_instant_time()
    requested = ctx.active.create_requested(time, Action.CLEAN, content)
    fault_point("clean.after_requested")
    return requested


def schedule_clean_locked(
    ctx: TableContext,
    config: CleanConfig,
    lock_options: Mapping[str, str] | None,
    *,
    now: datetime | None = None,
) -> Instant | None:
    """`schedule_clean` under the table lock (`lock_options`), on the timeline as it is then."""
    with table_transaction(ctx, lock_options):
        ctx.active.reload()
        return schedule_clean(ctx, config, now=now)


def pending_cleans(ctx: TableContext) -> list[Instant]:
    """Clean plans written and not yet completed, oldest first (of the loaded timeline)."""
    return list(ctx.active.timeline.pending().with_actions(Action.CLEAN))


# ---- execution ------------------------------------------------------------------------------------


def execute_clean(ctx: TableContext, instant: Instant) -> CleanResult:
    """Run a requested or inflight clean to completion (a completed one reports its metadata)."""
    started = time.monotonic()
    current = _clean_instant(ctx, instant.time)
    if current.is_completed:
        return _result_from_metadata(
            current.time, decode_container(ctx.active.read_content(current))
        )
    requested = Instant(current.time, Action.CLEAN, State.REQUESTED)
    content = ctx.active.read_content(requested)
    plan = _decode_plan(ctx, content, current)
    inflight = current if current.is_inflight else _to_inflight(ctx, current, content)
    fault_point("clean.after_inflight")
    outcome = {
        f.file_path: _delete_file(ctx.storage, _storage_path(ctx, f.file_path))
        for files in plan.files_per_partition.values()
        for f in files
    }
    deleted_partitions = _delete_partitions(ctx, plan)
    fault_point("clean.after_data_files")
    elapsed_ms = int((time.monotonic() - started) * 1000)
    metadata = clean_metadata_record(inflight.time, elapsed_ms, plan, outcome, deleted_partitions)
    if commit_clean_to_metadata_table(ctx, inflight.time, metadata):
        fault_point("clean.after_metadata_commit")
    try:
        ctx.active.complete(
            inflight, encode_timeline_record("HoodieCleanMetadata", metadata, ctx.config.version)
        )
    except CommitConflictError:  # another process ran the same clean and completed it first
        done = _clean_instant(ctx, inflight.time)
        if not done.is_completed:
            raise
        return _result_from_metadata(done.time, decode_container(ctx.active.read_content(done)))
    fault_point("clean.after_commit")
    return _result_from_metadata(inflight.time, metadata)


def _to_inflight(ctx: TableContext, requested: Instant, content: bytes) -> Instant:
    try:
        return ctx.active.transition_to_inflight(requested, content)
    except CommitConflictError:  # another process started executing it: run it too (idempotent)
        return requested.with_state(State.INFLIGHT)


def _clean_instant(ctx: TableContext, instant_time: str) -> Instant:
    """The clean instant's current state on storage (another process may have moved it on)."""
    ctx.active.reload()
    for candidate in ctx.active.timeline.with_actions(Action.CLEAN):
        if candidate.time == instant_time:
            return candidate
    raise FileNotFoundError(f"no clean instant {instant_time} in the timeline of {ctx.uri}")


def _decode_plan(ctx: TableContext, content: bytes, instant: Instant) -> CleanPlan:
    if not content:  # nothing was planned: complete the instant with empty metadata
        return CleanPlan(None, "", CleaningPolicy.KEEP_LATEST_COMMITS, {})
    return clean_plan_from_avro(decode_container(content, what=f"clean plan of {instant}"), ctx.uri)


def _storage_path(ctx: TableContext, file_path: str) -> str:
    """A plan's full path (`file:/…`, `file:///…`, `s3://bucket/…`) as a `Storage` path."""
    if "://" not in file_path and not file_path.startswith("file:"):
        return file_path
    if ctx.storage.is_local:
        return Storage.for_uri(file_path)[1]
    rest = file_path.split("://", 1)[1]
    authority = ctx.storage.authority
    if ctx.base_path.startswith(authority) or not rest.startswith(authority):
        return rest  # object stores: paths start with the bucket
    return rest[len(authority) :]


def _delete_file(storage: Storage, path: str) -> bool:
    """Hudi's `deleteFileAndGetResult`: False (recorded as failed) when gone or undeletable."""
    try:
        return storage.delete(path)
    except OSError:
        return False


def _delete_partitions(ctx: TableContext, plan: CleanPlan) -> tuple[str, ...]:
    """Partition folders of `partitionsToBeDeleted` (only on partitioned tables, as Hudi)."""
    if not ctx.config.partition_fields:
        return ()
    for partition in plan.partitions_to_delete:
        if partition:
            try:
                ctx.storage.delete_dir(ctx.partition_path(partition))
            except OSError:
                continue  # Hudi logs and moves on; the next clean lists it again
    return tuple(p for p in plan.partitions_to_delete if p)


def clean_metadata_record(
    instant_time: str,
    elapsed_ms: int,
    plan: CleanPlan,
    outcome: Mapping[str, bool],
    deleted_partitions: tuple[str, ...],
) -> dict[str, Any]:
    """`HoodieCleanMetadata` v2 (`CleanerUtils.convertCleanMetadata`)."""
    regular: dict[str, dict[str, Any]] = {}
    bootstrap: dict[str, dict[str, Any]] = {}
    for partition, files in plan.files_per_partition.items():
        names = [
            (f.file_name, outcome.get(f.file_path, False))
            for f in files
            if not f.is_bootstrap_base_file
        ]
        sources = [
            (f.file_path, outcome.get(f.file_path, False))
            for f in files
            if f.is_bootstrap_base_file
        ]
        deleted = partition in deleted_partitions
        regular[partition] = _partition_record(partition, plan.policy, names, deleted)
        if sources:
            bootstrap[partition] = _partition_record(partition, plan.policy, sources, deleted)
    return {
        "startCleanTime": instant_time,
        "timeTakenInMillis": elapsed_ms,
        "totalFilesDeleted": sum(len(p["successDeleteFiles"]) for p in regular.values()),
        "earliestCommitToRetain": plan.earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": plan.last_completed_commit_time,
        "partitionMetadata": regular,
        "version": CLEAN_METADATA_VERSION,
        "bootstrapPartitionMetadata": bootstrap,
    }


def _partition_record(
    partition: str, policy: CleaningPolicy, results: list[tuple[str, bool]], deleted: bool
) -> dict[str, Any]:
    """`HoodieCleanPartitionMetadata`: file names (full paths for bootstrap source files)."""
    return {
        "partitionPath": partition,
        "policy": policy.value,
        "deletePathPatterns": [name for name, _ in results],
        "successDeleteFiles": [name for name, ok in results if ok],
        "failedDeleteFiles": [name for name, ok in results if not ok],
        "isPartitionDeleted": deleted,
    }


def _result_from_metadata(instant_time: str, metadata: Mapping[str, Any]) -> CleanResult:
    partitions = metadata.get("partitionMetadata") or {}
    policies = [p.get("policy") for p in partitions.values()]
    files = {
        key: tuple(
            join_partition(partition, name)
            for partition, entry in partitions.items()
            for name in entry.get(key) or ()
        )
        for key in ("successDeleteFiles", "failedDeleteFiles")
    }
    return CleanResult(
        instant_time=InstantTime(instant_time),
        policy=CleaningPolicy(policies[0] if policies else CleaningPolicy.KEEP_LATEST_COMMITS),
        deleted_files=files["successDeleteFiles"],
        failed_files=files["failedDeleteFiles"],
        partitions=tuple(partitions),
        deleted_partitions=tuple(p for p, e in partitions.items() if e.get("isPartitionDeleted")),
        earliest_commit_retained=metadata.get("earliestCommitToRetain") or None,
    )


# ---- failed writes (LAZY policy) ------------------------------------------------------------------


def rollback_expired_writes(
    ctx: TableContext,
    config: CleanConfig,
    *,
    now: datetime | None = None,
    lock_options: Mapping[str, str] | None = None,
) -> list[InstantTime]:
    """Roll back pending writes (not compaction or clustering) whose writer stopped beating.

    Under the table lock, so a writer's commit guard sees the rollback or the rollback sees the
    completed commit (and leaves it alone).
    """
    with table_transaction(ctx, lock_options):
        ctx.active.reload()
        expired = [
            instant
            for instant in failed_write_instants(ctx)
            if is_heartbeat_expired(ctx, instant.time, config.heartbeat_expiry_ms, now=now)
        ]
        return rollback_expired(ctx, expired, record=commit_rollback_to_metadata_table)


# ---- the service ----------------------------------------------------------------------------------


def run_clean(
    ctx: TableContext,
    config: CleanConfig,
    *,
    now: datetime | None = None,
    lock_options: Mapping[str, str] | None = None,
) -> CleanResult | None:
    """Complete pending cleans, roll back expired writes (LAZY), then clean if due.

    `lock_options` are the writer's options: its concurrency keys (the table lock guards the
    rollbacks and the scheduling) and `hoodie.metadata.*`, applied first as Hudi's table service
    client does (false deletes the metadata table, a disabled index drops its partition). Returns
    the last clean executed, or None when there was none.
    """
    if lock_options is not None:
        with table_transaction(ctx, lock_options):
            prepare_metadata_table(ctx, lock_options)
    ctx.active.reload()
    results = [execute_clean(ctx, instant) for instant in pending_cleans(ctx)]
    if config.failed_writes_policy is FailedWritesPolicy.LAZY:
        rollback_expired_writes(ctx, config, now=now, lock_options=lock_options)
    instant = schedule_clean_locked(ctx, config, lock_options, now=now)
    if instant is not None:
        results.append(execute_clean(ctx, instant))
    return results[-1] if results else None
