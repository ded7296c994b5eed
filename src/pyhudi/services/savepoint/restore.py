"""Restoring a table to a savepoint, and rolling back one commit (Hudi 0.15
`BaseHoodieWriteClient.restoreToSavepoint` and the `rollback_to_instant` procedure), Spark-free.

A restore is an operator's action on a stopped table ("no concurrent write or compaction is
expected", Hudi's javadoc): it holds the table lock (when `options` configure one) and refuses,
before changing anything, when a pending write after the savepoint still has a live writer, when
a later savepoint exists (its commit would be rolled back: Hudi fails on it half-way), or when a
log compaction would have to be rolled back (Hudi's restore refuses those). The steps:
`timeline_restore` (the restore instant and its rollbacks) and `metadata_restore` (the metadata
table). Afterwards the savepointed commit is the table's latest write (Hudi's final check).

`rollback_to_instant` rolls back one commit, deltacommit or replacecommit (Hudi's procedure:
listing-based, refused when completed commits or pending writes follow it, when it is
savepointed, or when the metadata table was compacted after it).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyhudi.config.concurrency import heartbeat_expiry_ms
from pyhudi.exceptions import HudiError, InstantNotFoundError, UnsupportedOperationError
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.instant import Action, Instant
from pyhudi.services.savepoint.create import TableLike, completed_savepoint, table_context
from pyhudi.services.savepoint.metadata_restore import (
    prepare_metadata_table,
    restore_metadata_table,
    sync_metadata_table,
)
from pyhudi.services.savepoint.results import RestoreResult, RollbackResult
from pyhudi.services.savepoint.timeline_restore import (
    execute_restore,
    files_deleted,
    finish_restore,
    instants_to_restore,
    pending_restore,
    rollback_metadata,
    schedule_restore,
)
from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import writer_is_live
from pyhudi.table.lock import table_transaction
from pyhudi.table.rollback import failed_write_instants, rollback_instant
from pyhudi.timeline.timeline import COMMIT_ACTIONS

#: What a restore may roll back (Hudi's `MergeOnReadRestoreActionExecutor`; copy-on-write tables
#: have commits and replacecommits only).
RESTORABLE_ACTIONS = frozenset({*COMMIT_ACTIONS, Action.COMPACTION, Action.CLUSTERING})


def restore_to_savepoint(
    table: TableLike, instant_time: str, *, options: Mapping[str, str] | None = None
) -> RestoreResult:
    """Roll the table back to its savepoint `instant_time`: every write instant after it goes
    (completed or pending), the metadata table follows; a restore to the same savepoint that
    died is resumed. `options`: the writer's lock and `hoodie.metadata.*` keys."""
    options = dict(options or {})
    ctx = table_context(table)
    ctx.check_writable("restore")
    with table_transaction(ctx, options):
        ctx.reload()
        completed_savepoint(ctx, instant_time)
        pending = pending_restore(ctx)
        if pending is not None:
            _check_resumable(ctx, pending[0], pending[1], instant_time)
        else:
            _check_restorable(ctx, instant_time, instants_to_restore(ctx, instant_time), options)
        metadata_table = prepare_metadata_table(ctx, instant_time, options)
        if pending is None:
            pending = schedule_restore(ctx, instant_time, instants_to_restore(ctx, instant_time))
        later: list[str] = []
        if metadata_table == "restored":
            later = restore_metadata_table(ctx, instant_time)
        inflight, metadata = execute_restore(ctx, *pending)
        if metadata_table == "restored":
            later += [r.time for r in ctx.active.reload().timeline.with_actions(Action.ROLLBACK)]
            sync_metadata_table(ctx, inflight.time, later)
        finish_restore(ctx, inflight, metadata, instant_time)
        _check_restored(ctx, instant_time)
    return RestoreResult(
        instant_time=inflight.time,
        savepoint_time=instant_time,
        rolled_back=tuple(metadata["instantsToRollback"]),
        files_deleted=files_deleted(metadata),
        metadata_table=metadata_table,
    )


def _check_resumable(ctx: TableContext, restore: Instant, plan: Mapping, savepoint: str) -> None:
    target = plan.get("savepointToRestoreTimestamp")
    if target != savepoint:
        raise UnsupportedOperationError(
            f"{ctx.uri} has a pending restore {restore.time} to savepoint {target}: restore to "
            f"{target} to finish it first"
        )


def _check_restorable(
    ctx: TableContext, savepoint_time: str, instants: list[Instant], options: Mapping[str, str]
) -> None:
    later = [
        i.time
        for i in ctx.active.timeline.completed().with_actions(Action.SAVEPOINT)
        if i.time > savepoint_time
    ]
    if later:
        raise UnsupportedOperationError(
            f"cannot restore {ctx.uri} to {savepoint_time}: the later savepoint(s) "
            f"{', '.join(later)} would be rolled back; delete them first"
        )
    refused = [str(i) for i in instants if i.action not in RESTORABLE_ACTIONS]
    if refused:
        raise UnsupportedOperationError(
            f"cannot restore {ctx.uri} to {savepoint_time}: Hudi's restore cannot roll back "
            f"{', '.join(refused)}"
        )
    _refuse_live_writers(ctx, [i for i in instants if i.is_pending], options)


def _refuse_live_writers(
    ctx: TableContext, instants: list[Instant], options: Mapping[str, str]
) -> None:
    writes = {i.time for i in failed_write_instants(ctx)}
    expiry_ms = heartbeat_expiry_ms(options)
    live = [i.time for i in instants if i.time in writes and writer_is_live(ctx, i.time, expiry_ms)]
    if live:
        raise UnsupportedOperationError(
            f"{ctx.uri}: the write(s) {', '.join(live)} still have a live writer (fresh "
            "heartbeat); stop it before rolling back"
        )


def _check_restored(ctx: TableContext, savepoint_time: str) -> None:
    """Hudi's `validateSavepointRestore`: the savepoint is the latest completed write (pending
    compactions count, as in Hudi)."""
    writes = ctx.active.timeline.write_timeline()
    kept = writes.filter(lambda i: i.is_completed or i.action is Action.COMPACTION)
    if kept.last is None or kept.last.time != savepoint_time:
        found = kept.last.time if kept.last else "none"
        raise HudiError(
            f"restore of {ctx.uri}: {savepoint_time} is not the latest commit after restoring "
            f"(the latest is {found})"
        )


def rollback_to_instant(
    table: TableLike, instant_time: str, *, options: Mapping[str, str] | None = None
) -> RollbackResult:
    """Roll back the commit, deltacommit or replacecommit `instant_time` (completed or pending):
    only the latest one, as Hudi's `rollback_to_instant` procedure allows. The metadata table
    records the rollback as for any rollback."""
    options = dict(options or {})
    ctx = table_context(table)
    ctx.check_writable("rollback")
    with table_transaction(ctx, options):
        ctx.reload()
        instant = _instant_to_roll_back(ctx, instant_time)
        if instant.is_pending:
            _refuse_live_writers(ctx, [instant], options)
        rollback_time = rollback_instant(ctx, instant, record=commit_rollback_to_metadata_table)
        metadata = rollback_metadata(ctx.reload(), rollback_time)
    return RollbackResult(
        instant_time=rollback_time,
        rolled_back=instant.time,
        action=instant.action.value,
        files_deleted=int(metadata.get("totalFilesDeleted") or 0),
    )


def _instant_to_roll_back(ctx: TableContext, instant_time: str) -> Instant:
    timeline = ctx.active.timeline
    found = [i for i in timeline if i.time == instant_time and i.action in COMMIT_ACTIONS]
    if not found:
        raise InstantNotFoundError(
            f"no commit, deltacommit or replacecommit {instant_time} in the active timeline of "
            f"{ctx.uri}"
        )
    instant = found[0]
    if timeline.completed().with_actions(Action.SAVEPOINT).find(instant_time) is not None:
        raise UnsupportedOperationError(
            f"commit {instant_time} of {ctx.uri} is savepointed: delete the savepoint first"
        )
    later = [i.time for i in timeline.commits() if i.time > instant_time]
    later += [i.time for i in failed_write_instants(ctx) if i.time > instant_time]
    if later:
        raise UnsupportedOperationError(
            f"cannot roll back {instant_time} of {ctx.uri}: {', '.join(sorted(later))} came "
            "after it; roll those back first (or restore to a savepoint)"
        )
    return instant
