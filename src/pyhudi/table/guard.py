"""Safety checks around a write instant: live writers, failed writes, and the commit guard.

* `rollback_failed_writes_eager`: single-writer mode's EAGER rollback, but a pending write whose
  heartbeat is fresh (`hoodie.client.heartbeat.interval_in_ms` x `...tolerable.misses`) belongs to a
  live writer: it is never rolled back, and the new write fails at once, naming the OCC options.
* `check_commit_allowed`: right before a completed instant is written (under the table lock), the
  instant must still be inflight on storage and no rollback may name it; otherwise the commit would
  point at files that a rollback deleted.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.config import concurrency as ckeys
from pyhudi.exceptions import CorruptFileError, WriteConflictError
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import heartbeat_path, is_heartbeat_expired
from pyhudi.table.rollback import failed_write_instants, rollback_instant


def live_writes(ctx: TableContext, expiry_ms: int, *, exclude: str | None = None) -> list[Instant]:
    """Pending write instants (not compaction or clustering) whose writer still beats (the
    timeline is listed anew: writers that started a moment ago must be seen)."""
    ctx.active.reload()
    return [
        i
        for i in failed_write_instants(ctx)
        if i.time != exclude and not is_heartbeat_expired(ctx, i.time, expiry_ms)
    ]


def refuse_live_writers(
    ctx: TableContext, options: Mapping[str, str], *, own: str | None = None
) -> None:
    """Single-writer mode: another live write on the table is an error, never a rollback."""
    live = live_writes(ctx, ckeys.heartbeat_expiry_ms(options), exclude=own)
    if not live:
        return
    other = live[0]
    raise WriteConflictError(
        f"another writer is active on {ctx.uri}: {other.action.value} {other.time} is "
        f"{other.state.value.lower()} and its heartbeat is fresh (.hoodie/.heartbeat/{other.time}). "
        f"In single-writer mode ({ckeys.CONCURRENCY_MODE.key}=single_writer) pyhudi does not roll "
        "back a live write; retry after it finished, or let several writers work at once with "
        f"{ckeys.CONCURRENCY_MODE.key}={ckeys.ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL.value} "
        f"and {ckeys.LOCK_PROVIDER.key}={ckeys.FILE_SYSTEM_LOCK} (or {ckeys.STORAGE_LOCK})"
    )


def rollback_failed_writes_eager(
    ctx: TableContext, options: Mapping[str, str], *, own: str | None = None
) -> list[InstantTime]:
    """Roll back failed writes (expired heartbeat), newest first; fail if one is live."""
    refuse_live_writers(ctx, options, own=own)
    failed = [i for i in failed_write_instants(ctx) if i.time != own]
    return rollback_expired(ctx, failed)


def rollback_expired(ctx: TableContext, failed: list[Instant]) -> list[InstantTime]:
    rolled = []
    for instant in sorted(failed, key=lambda i: i.time, reverse=True):
        rollback_instant(ctx, instant)
        ctx.storage.delete(heartbeat_path(ctx, instant.time))  # HeartbeatUtils.deleteHeartbeatFile
        rolled.append(instant.time)
    return rolled


def rollbacks_naming(ctx: TableContext, instant_time: str) -> list[Instant]:
    """Rollback instants (any state) that roll back `instant_time`."""
    found = []
    for rollback in ctx.active.timeline.with_actions(Action.ROLLBACK):
        if rollback.time <= instant_time:
            continue  # a rollback of this instant is created after it
        if instant_time in _rolled_back_times(ctx, rollback):
            found.append(rollback)
    return found


def _rolled_back_times(ctx: TableContext, rollback: Instant) -> set[str]:
    requested = Instant(rollback.time, Action.ROLLBACK, State.REQUESTED)
    times: set[str] = set()
    for candidate in (requested, rollback) if rollback.is_completed else (requested,):
        try:
            content = ctx.active.read_content(candidate)
            record = decode_container(content, what=f"rollback {rollback.time}") if content else {}
        except (FileNotFoundError, CorruptFileError):
            continue
        target = record.get("instantToRollback") or {}
        if target.get("commitTime"):
            times.add(target["commitTime"])
        times.update(record.get("commitsRollback") or ())
    return times


def check_commit_allowed(ctx: TableContext, instant: Instant) -> None:
    """The commit guard: our instant is still inflight and no rollback names it."""
    ctx.active.reload()
    current = next(
        (
            i
            for i in ctx.active.timeline
            if i.time == instant.time
            and i.action.completed_action is instant.action.completed_action
        ),
        None,
    )
    if current is None or current.state is not State.INFLIGHT:
        state = "gone" if current is None else current.state.value.lower()
        raise WriteConflictError(
            f"instant {instant.time} ({instant.action.value}) can no longer commit: its inflight "
            f"file is {state} (rolled back or removed by another writer); nothing was committed"
        )
    rollbacks = rollbacks_naming(ctx, instant.time)
    if rollbacks:
        raise WriteConflictError(
            f"instant {instant.time} ({instant.action.value}) was rolled back by rollback "
            f"{rollbacks[0].time} of another writer; nothing was committed"
        )
