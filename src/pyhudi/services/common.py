"""What every table service shares: picking the Spark session's service pool, committing a
service instant with marker reconciliation, and undoing a failed or crashed execution."""

from __future__ import annotations

import contextlib
import logging
import posixpath
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession

from pyhudi.codec.file_names import parse_marker
from pyhudi.config import concurrency
from pyhudi.exceptions import CommitConflictError, WriteConflictError
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.spark_env import scheduler_pool
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.guard import await_heartbeats
from pyhudi.table.heartbeat import Heartbeat, dead_owner, writer_is_live
from pyhudi.table.lock import is_multi_writer
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.pipeline import task_spec
from pyhudi.writer.transaction import WriteTransaction

log = logging.getLogger(__name__)
SERVICE_POOL = "pyhudi-services"


@contextlib.contextmanager
def service_pool(spark: SparkSession) -> Iterator[None]:
    """Run the enclosed Spark jobs in the services' scheduler pool (FAIR mode shares the cores)."""
    with scheduler_pool(spark, SERVICE_POOL):
        yield


def service_name(instant: Instant) -> str:
    """`compaction` or `clustering`: the prefix of a service instant's fault points."""
    return "compaction" if instant.action is Action.COMPACTION else "clustering"


def commit_service(
    ctx: TableContext,
    inflight: Instant,
    operation: WriteOperationType,
    metadata: CommitMetadata,
    options: Mapping[str, str] | None = None,
    pre_commit: Callable[[], None] | None = None,
) -> Instant:
    """Complete a service instant under the table lock (commit guard included, then `pre_commit`,
    the service's own conflict check): drop files of failed task attempts, write the completed file."""
    fault_point(f"{service_name(inflight)}.after_data_files")
    transaction = WriteTransaction(
        ctx,
        inflight.action,
        operation,
        instant=inflight,
        heartbeat=_take_heartbeat(ctx, inflight.time),
        options=dict(options or {}),
        fault_prefix=service_name(inflight),
        check_conflicts=False,
        pre_commit=pre_commit,
    )
    try:
        return transaction.commit(metadata)
    except BaseException:
        transaction.stop_heartbeat()
        raise


def marked_data_files(ctx: TableContext, instant_time: str) -> list[str]:
    folder = ctx.marker_folder(instant_time)
    paths = []
    for status in ctx.storage.walk_files(folder):
        parsed = parse_marker(status.name)
        if parsed is None or parsed[1] is IOType.APPEND:
            continue
        relative = posixpath.relpath(posixpath.dirname(status.path), folder)
        paths.append(
            ctx.path(parsed[0] if relative == "." else posixpath.join(relative, parsed[0]))
        )
    return paths


#: Heartbeats of the service executions running in this process, by (table, instant time).
_executions: dict[tuple[str, str], Heartbeat] = {}
_executions_lock = threading.Lock()


def _take_heartbeat(ctx: TableContext, instant_time: str) -> Heartbeat | None:
    with _executions_lock:
        return _executions.pop((ctx.uri, instant_time), None)


def reset_to_requested(ctx: TableContext, instant: Instant) -> Instant:
    """Undo a failed or killed execution: delete what it wrote, keep the plan (requested) for a retry."""
    heartbeat = _take_heartbeat(ctx, instant.time)
    if heartbeat is not None:  # our own execution failed
        heartbeat.stop()
    for path in marked_data_files(ctx, instant.time):
        ctx.storage.delete(path)
    ctx.storage.delete_dir(ctx.marker_folder(instant.time))
    if instant.state is State.INFLIGHT:
        return ctx.active.revert_inflight_to_requested(instant)
    return instant


@dataclass(frozen=True)
class Execution:
    """A service instant moved to inflight, with the write settings its tasks use."""

    inflight: Instant
    cfg: WriteConfig
    schema: pa.Schema
    spec: WriteTaskSpec


def begin_execution(
    ctx: TableContext, pending: Instant, options: Mapping[str, str] | None
) -> Execution:
    """Undo any earlier attempt of `pending`, move it to inflight and resolve the task settings.

    An inflight plan whose heartbeat is fresh is being executed by another process: that is a
    `WriteConflictError`, never a reset (which would delete the other run's files)."""
    settings = {**ctx.config.props, **(options or {})}
    _refuse_running_elsewhere(ctx, pending, settings)
    requested = reset_to_requested(ctx, pending)
    heartbeat = Heartbeat(ctx, pending.time, concurrency.heartbeat_interval_ms(settings) / 1000)
    heartbeat.start()
    try:
        inflight = ctx.active.transition_to_inflight(requested)
    except CommitConflictError as err:  # another process started the same plan just now
        heartbeat.stop(delete=False)
        raise WriteConflictError(
            f"{service_name(pending)} {pending.time} was started by another process"
        ) from err
    with _executions_lock:
        _executions[(ctx.uri, pending.time)] = heartbeat
    fault_point(f"{service_name(inflight)}.after_inflight")
    try:
        cfg = resolve_write_config(
            {
                **(options or {}),
                "hoodie.datasource.write.operation": "upsert",
                "hoodie.datasource.write.insert.drop.duplicates": "false",  # the writers' option
            },
            ctx.config,
        )
        schema = table_arrow_schema(ctx) or pa.schema([])
        return Execution(
            inflight, cfg, schema, task_spec(ctx, cfg, schema, inflight.time, inflight=inflight)
        )
    except BaseException:
        reset_to_requested(ctx, inflight)
        raise


def _refuse_running_elsewhere(
    ctx: TableContext, pending: Instant, settings: Mapping[str, str]
) -> None:
    """An inflight plan is reset and run again when its run crashed: its heartbeat expired, or
    its owner provably died on this machine (at once). Otherwise, in single-writer mode, wait
    up to `pyhudi.write.wait.for.active.writer.ms` for one of these (not for a run of this
    process); then it is a `WriteConflictError`."""
    if pending.state is not State.INFLIGHT:
        return
    reason = dead_owner(ctx, pending.time)
    if reason is not None:
        log.warning(
            "%s: resetting %s %s at once: its run, %s",
            ctx.uri,
            service_name(pending),
            pending.time,
            reason,
        )
        return
    with _executions_lock:
        ours = (ctx.uri, pending.time) in _executions
    expiry_ms = concurrency.heartbeat_expiry_ms(settings)
    if ours or is_multi_writer(settings):
        running = writer_is_live(ctx, pending.time, expiry_ms)
    else:
        running = _wait_for_run_elsewhere(ctx, pending, settings, expiry_ms)
    if not running:
        return  # a crashed or interrupted run (or one without heartbeats): reset and run again
    raise WriteConflictError(
        f"{service_name(pending)} {pending.time} is being executed by another process (its "
        f"heartbeat .hoodie/.heartbeat/{pending.time} is fresh); it completes there. A crashed "
        f"run's plan can be executed again once its heartbeat expired "
        f"({concurrency.HEARTBEAT_INTERVAL_MS.key} x {concurrency.HEARTBEAT_TOLERABLE_MISSES.key}), "
        "or at once when its process died on this machine"
    )


def _wait_for_run_elsewhere(
    ctx: TableContext, pending: Instant, settings: Mapping[str, str], expiry_ms: int
) -> bool:
    """Whether the run elsewhere still looks live after the wait; one that finished meanwhile
    (its heartbeat is deleted on commit) must not be reset."""

    def live() -> list[Instant]:
        return [pending] if writer_is_live(ctx, pending.time, expiry_ms) else []

    running = bool(await_heartbeats(ctx, settings, live))
    ctx.active.reload()
    if not running and ctx.active.timeline.state_of(pending.time) is not State.INFLIGHT:
        raise WriteConflictError(
            f"{service_name(pending)} {pending.time} was finished by another process while this "
            "one waited for it"
        )
    return running
