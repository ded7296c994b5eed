"""Savepoints: create, list and delete them (Hudi 0.15 `SavepointActionExecutor`,
`SavepointHelpers.deleteSavepoint`), Spark-free.

A savepoint keeps a completed commit (commit, deltacommit or replacecommit) restorable: the cleaner
never deletes the files it names and archival stops before it. It shares the instant time of the
commit it saves; on the timeline (reference §7.7):

| file                     | content                                                          |
|--------------------------|------------------------------------------------------------------|
| `<t>.savepoint.inflight` | empty                                                            |
| `<t>.savepoint`          | Avro `HoodieSavepointMetadata` v1: `savepointedBy`, `savepointedAt` |
|                          | (epoch ms), `comments`, per partition `savepointDataFile`: the    |
|                          | file names (base file, then log files) of each file group's       |
|                          | latest non-empty slice with base instant at or before `t`         |

The slice's log files are all of them, also ones written after `t` into that slice (Hudi lists
the slice as its file-system view holds it). Hudi refuses a commit older than the earliest commit
the last clean (any state) retained: its older file versions may be gone. Deleting a savepoint
deletes both files.

>>> create_savepoint("/data/trips", user="ops", comment="before backfill")  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from pyhudi.codec.avro_schemas import decode_container, encode_timeline_record
from pyhudi.exceptions import InstantNotFoundError, UnsupportedOperationError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.services.savepoint.results import SavepointInfo
from pyhudi.table.context import TableContext
from pyhudi.table.lock import table_transaction

#: `TimelineMetadataUtils.DEFAULT_VERSION` of `HoodieSavepointMetadata`.
SAVEPOINT_METADATA_VERSION = 1
SAVEPOINT_RECORD = "HoodieSavepointMetadata"

TableLike = TableContext | str


def table_context(table: TableLike) -> TableContext:
    """The table at `table` (a path or URI), or `table` itself, with its timeline reloaded."""
    if isinstance(table, TableContext):
        return table.reload()
    return TableContext.open(table)


def create_savepoint(
    table: TableLike,
    instant_time: str | None = None,
    *,
    user: str = "",
    comment: str = "",
    options: Mapping[str, str] | None = None,
) -> SavepointInfo:
    """Savepoint the completed commit `instant_time` (default: the latest completed commit),
    under the table lock when `options` configure one. Refused, with the table unchanged: an
    absent or pending instant, one already savepointed, one older than the cleaner's earliest
    retained commit."""
    ctx = table_context(table)
    ctx.check_writable("savepoint")
    with table_transaction(ctx, options):
        ctx.reload()
        target = _commit_to_savepoint(ctx, instant_time)
        if any(i.is_completed for i in _savepoint_instants(ctx, target.time)):
            raise UnsupportedOperationError(
                f"commit {target.time} of {ctx.uri} is already savepointed"
            )
        retained = earliest_commit_retained(ctx)
        if retained and target.time < retained:
            raise UnsupportedOperationError(
                f"cannot savepoint commit {target.time} of {ctx.uri}: it is older than {retained}, "
                "the earliest commit the cleaner retained (its older file versions may be gone)"
            )
        record = savepoint_record(ctx, target.time, user, comment)
        for stale in _savepoint_instants(ctx, target.time):  # a dead attempt's inflight file
            ctx.active.delete_pending_files(stale)
        inflight = ctx.active.transition_to_inflight(
            Instant(target.time, Action.SAVEPOINT, State.REQUESTED)
        )
        content = encode_timeline_record(SAVEPOINT_RECORD, record, ctx.config.version)
        ctx.active.complete(inflight, content)
    return SavepointInfo.of(target.time, record)


def _commit_to_savepoint(ctx: TableContext, instant_time: str | None) -> Instant:
    commits = ctx.active.timeline.commits()
    if instant_time is None:
        if commits.last is None:
            raise UnsupportedOperationError(f"{ctx.uri} has no completed commit to savepoint")
        return commits.last
    found = commits.find(instant_time)
    if found is not None:
        return found
    other = ctx.active.timeline.find(instant_time)
    if other is not None and other.action.is_write:
        raise UnsupportedOperationError(
            f"cannot savepoint {instant_time} of {ctx.uri}: it is a pending "
            f"{other.action.value} ({other.state.value.lower()}); only completed commits can be"
        )
    raise InstantNotFoundError(
        f"no completed commit {instant_time} in the active timeline of {ctx.uri}"
    )


def _savepoint_instants(ctx: TableContext, instant_time: str) -> list[Instant]:
    return [i for i in ctx.active.timeline.with_actions(Action.SAVEPOINT) if i.time == instant_time]


def earliest_commit_retained(ctx: TableContext) -> str:
    """The earliest commit the latest clean (completed, or pending: its plan) retains; "" when
    there is no clean or it names none (Hudi's bound for new savepoints)."""
    clean = ctx.active.timeline.with_actions(Action.CLEAN).last
    if clean is None:
        return ""
    if clean.is_completed:
        content = ctx.active.read_content(clean)
        if not content:
            return ""
        metadata = decode_container(content, what=f"clean metadata of {clean}")
        return str(metadata.get("earliestCommitToRetain") or "")
    content = ctx.active.read_content(Instant(clean.time, Action.CLEAN, State.REQUESTED))
    if not content:
        return ""
    plan = decode_container(content, what=f"clean plan of {clean}")
    return str((plan.get("earliestInstantToRetain") or {}).get("timestamp") or "")


def savepoint_record(
    ctx: TableContext, instant_time: str, user: str, comment: str
) -> dict[str, Any]:
    """The `HoodieSavepointMetadata` of a savepoint of `instant_time`, as of now."""
    view = ctx.view()
    files: dict[str, list[str]] = {p: [] for p in view.partition_paths()}
    for group in view.file_groups(instant_time):
        chosen = next(
            (s for s in group.slices if s.base_instant_time <= instant_time and not s.is_empty),
            None,
        )
        if chosen is None:
            continue
        names = files.setdefault(group.partition_path, [])
        if chosen.base_file is not None:
            names.append(chosen.base_file.file_name)
        names.extend(log.file_name for log in chosen.log_files)
    return {
        "savepointedBy": user,
        "savepointedAt": int(time.time() * 1000),
        "comments": comment,
        "partitionMetadata": {
            p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()
        },
        "version": SAVEPOINT_METADATA_VERSION,
    }


def savepoints(table: TableLike) -> list[SavepointInfo]:
    """The completed savepoints of the active timeline, oldest first."""
    ctx = table_context(table)
    return [
        SavepointInfo.of(i.time, _savepoint_metadata(ctx, i))
        for i in ctx.active.timeline.completed().with_actions(Action.SAVEPOINT)
    ]


def _savepoint_metadata(ctx: TableContext, instant: Instant) -> dict[str, Any]:
    content = ctx.active.read_content(instant)
    return decode_container(content, what=f"savepoint {instant}") if content else {}


def completed_savepoint(ctx: TableContext, instant_time: str) -> Instant:
    """The completed savepoint at `instant_time`; an `InstantNotFoundError` naming the table's
    savepoints when there is none."""
    done = ctx.active.timeline.completed().with_actions(Action.SAVEPOINT)
    found = done.find(instant_time)
    if found is None:
        known = ", ".join(done.times()) or "none"
        raise InstantNotFoundError(
            f"no savepoint {instant_time} in {ctx.uri} (its savepoints: {known})"
        )
    return found


def delete_savepoint(
    table: TableLike, instant_time: str, *, options: Mapping[str, str] | None = None
) -> SavepointInfo:
    """Delete the savepoint of `instant_time` (both its timeline files, as Hudi); the cleaner
    and archival may then remove what it kept. Returns what the savepoint was."""
    ctx = table_context(table)
    ctx.check_writable("savepoint")
    with table_transaction(ctx, options):
        ctx.reload()
        instant = completed_savepoint(ctx, instant_time)
        info = SavepointInfo.of(instant.time, _savepoint_metadata(ctx, instant))
        ctx.storage.delete(ctx.active.instant_path(instant))
        ctx.active.delete_pending_files(instant.with_state(State.INFLIGHT))
        ctx.active.reload()
    return info
