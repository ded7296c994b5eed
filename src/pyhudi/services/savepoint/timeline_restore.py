"""The restore action on one timeline (Hudi 0.15 `RestorePlanActionExecutor`,
`BaseRestoreActionExecutor`): a data table's, or its metadata table's.

| file                   | content                                                          |
|------------------------|------------------------------------------------------------------|
| `<r>.restore.requested`| Avro `HoodieRestorePlan` v2: `instantsToRollback` (time, action), |
|                        | newest first, pending clustering before the rest (HUDI-3362);     |
|                        | `savepointToRestoreTimestamp`                                      |
| `<r>.restore.inflight` | empty                                                            |
| `<r>.restore`          | Avro `HoodieRestoreMetadata` v1: per rolled-back instant its      |
|                        | `HoodieRollbackMetadata`, `restoreInstantInfo` (time, action)     |

Every write instant after the savepoint is rolled back, completed or pending: commits,
deltacommits, replacecommits, compactions (not cleans, which stay). Each one is an ordinary
rollback instant (`table.rollback.rollback_instant`) whose plan is Hudi's listing-based restore
plan: what `plan_rollback` finds (markers, or a completed instant's written files; ROLLBACK
command blocks for its appends to older slices) plus every base or log file named with the
instant; so a rolled-back compaction takes its whole slice, new log files included. When the
restore completes, every rollback instant after the savepoint is deleted from the timeline, as
Hudi does: the restore's metadata holds them. A restore that died is resumed with its own plan;
instants it already rolled back are skipped.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pyhudi.codec.avro_schemas import decode_container, encode_timeline_record
from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.fs_view.listing import PartitionListing
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext
from pyhudi.table.rollback import RollbackRequest, plan_rollback, rollback_instant

#: `RestorePlanActionExecutor.LATEST_RESTORE_PLAN_VERSION` and `TimelineMetadataUtils.DEFAULT_VERSION`.
RESTORE_PLAN_VERSION = 2
RESTORE_METADATA_VERSION = 1

log = logging.getLogger(__name__)


def instants_to_restore(ctx: TableContext, savepoint_time: str) -> list[Instant]:
    """Write instants after `savepoint_time`, newest first, pending clustering first."""
    later = [i for i in reversed(ctx.active.timeline.write_timeline().instants)]
    later = [i for i in later if i.time > savepoint_time]
    clustering = [i for i in later if _is_pending_clustering(ctx, i)]
    return clustering + [i for i in later if i not in clustering]


def _is_pending_clustering(ctx: TableContext, instant: Instant) -> bool:
    if not instant.is_pending:
        return False
    if instant.action is Action.CLUSTERING:
        return True
    return (
        instant.action is Action.REPLACE_COMMIT
        and read_requested_plan(ctx.active, instant).get("operationType") == "CLUSTER"
    )


def pending_restore(ctx: TableContext) -> tuple[Instant, dict[str, Any]] | None:
    """The latest pending restore and its plan, or None."""
    restore = ctx.active.timeline.pending().with_actions(Action.RESTORE).last
    if restore is None:
        return None
    requested = Instant(restore.time, Action.RESTORE, State.REQUESTED)
    content = ctx.active.read_content(requested)
    plan = decode_container(content, what=f"restore plan of {restore}") if content else {}
    return restore, plan


def schedule_restore(
    ctx: TableContext, savepoint_time: str, instants: Sequence[Instant]
) -> tuple[Instant, dict[str, Any]]:
    """Write `<r>.restore.requested` with the plan rolling back `instants`."""
    plan = {
        "instantsToRollback": [_info(i) for i in instants],
        "version": RESTORE_PLAN_VERSION,
        "savepointToRestoreTimestamp": savepoint_time,
    }
    content = encode_timeline_record("HoodieRestorePlan", plan, ctx.config.version)
    return ctx.active.create_requested(ctx.new_instant_time(), Action.RESTORE, content), plan


def _info(instant: Instant) -> dict[str, str]:
    return {"commitTime": instant.time, "action": instant.action.value}


def execute_restore(
    ctx: TableContext, restore: Instant, plan: Mapping[str, Any]
) -> tuple[Instant, dict[str, Any]]:
    """Roll back the plan's instants still on the timeline, in plan order; returns the inflight
    restore instant and its `HoodieRestoreMetadata` (not written yet)."""
    started = time.monotonic()
    inflight = restore if restore.is_inflight else ctx.active.transition_to_inflight(restore)
    rolled: list[Instant] = []
    by_instant: dict[str, list[dict[str, Any]]] = {}
    for info in plan.get("instantsToRollback") or ():
        instant = _on_timeline(ctx.active.reload().timeline.write_timeline().instants, info)
        if instant is None:
            log.info("restore %s: %s was rolled back already", inflight.time, info)
            continue
        requests = restore_requests(ctx, instant)
        rollback_time = rollback_instant(ctx, instant, record=None, requests=requests)
        by_instant[instant.time] = [rollback_metadata(ctx, rollback_time)]
        rolled.append(instant)
    metadata = {
        "startRestoreTime": inflight.time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "instantsToRollback": [i.time for i in rolled],
        "hoodieRestoreMetadata": by_instant,
        "version": RESTORE_METADATA_VERSION,
        "restoreInstantInfo": [_info(i) for i in rolled],
    }
    return inflight, metadata


def _on_timeline(instants: Sequence[Instant], info: Mapping[str, str]) -> Instant | None:
    for instant in instants:
        if instant.time == info.get("commitTime") and instant.action.value == info.get("action"):
            return instant
    return None


def restore_requests(ctx: TableContext, instant: Instant) -> list[RollbackRequest]:
    """`plan_rollback`'s requests plus a deletion of every other base or log file named with
    `instant` (Hudi's listing-based restore rollback: a compaction's whole slice goes)."""
    requests = plan_rollback(ctx, instant)
    planned = {
        (r.partition_path, posixpath.basename(path))
        for r in requests
        for path in (*r.files_to_delete, *r.log_blocks_to_delete)
    }
    named: dict[str, list[str]] = defaultdict(list)
    for partition, statuses in PartitionListing.scan(ctx.storage, ctx.base_path).files.items():
        for status in statuses:
            if file_instant(partition, status.name) != instant.time:
                continue
            if (partition, status.name) not in planned:
                named[partition].append(ctx.path(posixpath.join(partition, status.name)))
    extra = [RollbackRequest(p, files_to_delete=sorted(paths)) for p, paths in named.items()]
    return [*requests, *extra]


def file_instant(partition: str, name: str) -> str | None:
    """The instant a data file is named with: a base file's, a log file's base instant."""
    if name.startswith("."):
        log_file = parse_log_file(partition, name)
        return log_file.base_instant_time if log_file and log_file.extension == "log" else None
    base = parse_base_file(partition, name)
    return base.instant_time if base is not None else None


def rollback_metadata(ctx: TableContext, rollback_time: str) -> dict[str, Any]:
    """The decoded `HoodieRollbackMetadata` of the completed rollback `rollback_time`."""
    instant = Instant(InstantTime(rollback_time), Action.ROLLBACK, State.COMPLETED)
    return decode_container(ctx.active.read_content(instant), what=f"rollback {rollback_time}")


def finish_restore(
    ctx: TableContext, inflight: Instant, metadata: Mapping[str, Any], savepoint_time: str
) -> Instant:
    """Complete the restore, then delete every rollback instant after the savepoint (Hudi: left
    behind they would read as unfinished work and hold back the metadata table's compaction)."""
    record = encode_timeline_record("HoodieRestoreMetadata", dict(metadata), ctx.config.version)
    completed = ctx.active.complete(inflight, record)
    rollbacks = ctx.active.reload().timeline.with_actions(Action.ROLLBACK)
    for rollback in reversed(rollbacks.instants):
        if rollback.time <= savepoint_time:
            continue
        if rollback.is_completed:
            ctx.storage.delete(ctx.active.instant_path(rollback))
        ctx.active.delete_pending_files(Instant(rollback.time, Action.ROLLBACK, State.INFLIGHT))
    ctx.active.reload()
    return completed


def files_deleted(metadata: Mapping[str, Any]) -> int:
    """Files the restore's rollbacks deleted."""
    return sum(
        int(rollback.get("totalFilesDeleted") or 0)
        for rollbacks in (metadata.get("hoodieRestoreMetadata") or {}).values()
        for rollback in rollbacks or ()
        if rollback
    )
