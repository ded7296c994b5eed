"""Safety checks around a write instant: live writers, failed writes, and the commit guard.

* `rollback_failed_writes_eager`: single-writer mode's EAGER rollback, but a pending write whose
  heartbeat is fresh (`hoodie.client.heartbeat.interval_in_ms` x `...tolerable.misses`) may belong
  to a live writer: it is never rolled back, and the new write fails, naming the OCC options.
  Exception: its heartbeat names an owner that provably died on this machine (a SIGKILLed job
  restarted by its scheduler): that write is rolled back at once (`process_owner`).
* `await_live_writers`: before that, a write waits (`pyhudi.write.wait.for.active.writer.ms`,
  default the heartbeat expiry) for live-looking writes to finish or expire, logging which.
* `check_commit_allowed`: right before a completed instant is written (under the table lock), the
  instant must still be inflight on storage and no rollback may name it; otherwise the commit would
  point at files that a rollback deleted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.config import concurrency as ckeys
from pyhudi.exceptions import CorruptFileError, WriteConflictError
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import dead_owner, heartbeat_path, read_owner, writer_is_live
from pyhudi.table.rollback import RollbackRecorder, failed_write_instants, rollback_instant

log = logging.getLogger(__name__)
#: How often a waiting writer looks at the timeline and heartbeats again.
POLL_S = 1.0


def live_writes(ctx: TableContext, expiry_ms: int, *, exclude: str | None = None) -> list[Instant]:
    """Pending write instants (not compaction or clustering) whose writer still beats and is not
    provably dead (the timeline is listed anew: writers that started a moment ago must be seen)."""
    ctx.active.reload()
    return [
        i
        for i in failed_write_instants(ctx)
        if i.time != exclude and writer_is_live(ctx, i.time, expiry_ms)
    ]


def await_heartbeats(
    ctx: TableContext,
    options: Mapping[str, str],
    live: Callable[[], list[Instant]],
) -> list[Instant]:
    """Poll `live` until it is empty or `pyhudi.write.wait.for.active.writer.ms` passed; what is
    still live then (nothing: go on). Logs each instant waited for, once."""
    deadline = time.monotonic() + ckeys.wait_for_active_writer_ms(options) / 1000
    logged: set[str] = set()
    while True:
        found = live()
        remaining = deadline - time.monotonic()
        if not found or remaining <= 0:
            return found
        for instant in found:
            if instant.time not in logged:
                logged.add(instant.time)
                owner = read_owner(ctx, instant.time)
                log.warning(
                    "%s: waiting up to %.0f s for %s %s (%s) to finish or its heartbeat "
                    ".hoodie/.heartbeat/%s to expire (%s)",
                    ctx.uri,
                    remaining,
                    instant.action.value,
                    instant.time,
                    "owner unknown" if owner is None else f"written by {owner.describe()}",
                    instant.time,
                    ckeys.WAIT_FOR_ACTIVE_WRITER_MS.key,
                )
        time.sleep(min(POLL_S, remaining))


def await_live_writers(
    ctx: TableContext, options: Mapping[str, str], *, own: str | None = None
) -> None:
    """Single-writer mode, before the rollback of failed writes: wait for live-looking writes,
    then fail as `refuse_live_writers` if one is still live."""
    expiry_ms = ckeys.heartbeat_expiry_ms(options)
    live = await_heartbeats(ctx, options, lambda: live_writes(ctx, expiry_ms, exclude=own))
    if live:
        raise _live_writer_error(ctx, live[0])


def refuse_live_writers(
    ctx: TableContext, options: Mapping[str, str], *, own: str | None = None
) -> None:
    """Single-writer mode: another live write on the table is an error, never a rollback."""
    live = live_writes(ctx, ckeys.heartbeat_expiry_ms(options), exclude=own)
    if live:
        raise _live_writer_error(ctx, live[0])


def _live_writer_error(ctx: TableContext, other: Instant) -> WriteConflictError:
    owner = read_owner(ctx, other.time)
    return WriteConflictError(
        f"another writer is active on {ctx.uri}: {other.action.value} {other.time} is "
        f"{other.state.value.lower()} and its heartbeat is fresh (.hoodie/.heartbeat/{other.time}, "
        f"{'owner unknown' if owner is None else 'written by ' + owner.describe()}). "
        f"In single-writer mode ({ckeys.CONCURRENCY_MODE.key}=single_writer) pyhudi does not roll "
        "back a live write; retry after it finished (or wait longer for it: "
        f"{ckeys.WAIT_FOR_ACTIVE_WRITER_MS.key}), or let several writers work at once with "
        f"{ckeys.CONCURRENCY_MODE.key}={ckeys.ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL.value} "
        f"and {ckeys.LOCK_PROVIDER.key}={ckeys.FILE_SYSTEM_LOCK} (or {ckeys.STORAGE_LOCK})"
    )


def rollback_failed_writes_eager(
    ctx: TableContext,
    options: Mapping[str, str],
    *,
    record: RollbackRecorder | None,
    own: str | None = None,
) -> list[InstantTime]:
    """Roll back failed writes (expired heartbeat or dead owner), newest first; fail if one is
    live. `record`: as for `rollback_instant`."""
    refuse_live_writers(ctx, options, own=own)
    failed = [i for i in failed_write_instants(ctx) if i.time != own]
    for instant in failed:
        reason = dead_owner(ctx, instant.time)
        if reason is not None:
            log.warning(
                "%s: rolling back %s %s at once: its writer, %s",
                ctx.uri,
                instant.action.value,
                instant.time,
                reason,
            )
    return rollback_expired(ctx, failed, record=record)


def rollback_expired(
    ctx: TableContext, failed: list[Instant], *, record: RollbackRecorder | None
) -> list[InstantTime]:
    rolled = []
    for instant in sorted(failed, key=lambda i: i.time, reverse=True):
        rollback_instant(ctx, instant, record=record)
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
