"""Hollow commits (table version 6): a commit still pending while later instants completed.

An incremental read past one would miss its records once it completes behind the read's end
(instant times order version 6 windows). Hudi's `TimelineUtils.handleHollowCommitIfNeeded` and
its key `hoodie.read.timeline.holes.resolution.policy` decide: `FAIL` (batch reads' default),
`BLOCK` (read nothing from the hollow commit on; streams' default) or `USE_TRANSITION_TIME`
(order by file modification time; not supported). Versions 8 and 9 order windows by completion
time, where a commit that completes later comes later: no hole.
"""

from __future__ import annotations

from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.instant import Action, Instant
from pyhudi.table.context import TableContext
from pyhudi.timeline.timeline import COMMIT_ACTIONS


def first_hollow_commit(ctx: TableContext) -> Instant | None:
    """The earliest pending commit (clustering aside) if an instant after it completed (Hudi's
    `TimelineUtils.handleHollowCommitIfNeeded`)."""
    active = ctx.active
    pending = [
        i
        for i in active.timeline.pending()
        if i.action in COMMIT_ACTIONS and not _is_pending_clustering(ctx, i)
    ]
    if not pending:
        return None
    first = min(pending, key=lambda i: i.time)
    later = any(i.time > first.time for i in active.timeline.completed())
    return first if later else None


def _is_pending_clustering(ctx: TableContext, instant: Instant) -> bool:
    if instant.action is not Action.REPLACE_COMMIT:
        return False
    return read_requested_plan(ctx.active, instant).get("operationType") == "CLUSTER"
