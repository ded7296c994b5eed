"""Rolling back failed (pending) write instants, with Hudi's rollback plan and metadata (§7.6).

A failed write leaves a requested/inflight instant. Its data files are found from its markers
(`.hoodie/.temp/<instant>/…marker.<IOType>`) or, without markers, by listing files named with the
instant. CREATE/MERGE markers: the base file is deleted. APPEND markers (MOR): a ROLLBACK command
block is appended as a new log version, or the log file is deleted when the failed instant created
the file group; a CDC log (APPEND marker named after the `.cdc` file) is deleted. Then the failed instant's files are deleted and `<t>.rollback` is written.
"""

from __future__ import annotations

import posixpath
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyhudi.codec import avro_schemas
from pyhudi.codec.file_names import (
    UNKNOWN_WRITE_TOKEN,
    log_file_name,
    parse_base_file,
    parse_log_file,
    parse_marker,
)
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.log.writer import encode_blocks, rollback_block
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.enums import IOType
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext
from pyhudi.table.metadata_table import (
    ROLLBACK_SUFFIX,
    is_metadata_table,
    metadata_instant_to_roll_back,
    open_metadata_table,
)

_ROLLBACK_PLAN_VERSION = 1

#: (data table, rollback instant time, decoded `HoodieRollbackMetadata`) -> None: records a data
#: rollback's files in the metadata table before the rollback completes. The metadata writer lives
#: a layer above, so callers pass it (`pyhudi.metadata.writer.commit_rollback_to_metadata_table`);
#: None only where no metadata table can need the record.
RollbackRecorder = Callable[[TableContext, str, Mapping[str, Any]], None]


@dataclass
class RollbackRequest:
    partition_path: str
    file_id: str = ""
    latest_base_instant: str = ""
    files_to_delete: list[str] = field(default_factory=list)
    log_blocks_to_delete: dict[str, int] = field(default_factory=dict)

    def to_avro(self) -> dict:
        return {
            "partitionPath": self.partition_path,
            "fileId": self.file_id,
            "latestBaseInstant": self.latest_base_instant,
            "filesToBeDeleted": self.files_to_delete,
            "logBlocksToBeDeleted": self.log_blocks_to_delete,
        }


def failed_write_instants(ctx: TableContext) -> list[Instant]:
    """Pending write instants that the next writer rolls back (EAGER): not compaction, not clustering."""

    result = []
    for instant in ctx.active.timeline.pending():
        if instant.action not in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT):
            continue
        if (
            instant.action is Action.REPLACE_COMMIT
            and read_requested_plan(ctx.active, instant).get("operationType") == "CLUSTER"
        ):
            continue
        result.append(instant)
    return result


def rollback_failed_writes(
    ctx: TableContext, *, record: RollbackRecorder | None
) -> list[InstantTime]:
    rolled = []
    for instant in sorted(failed_write_instants(ctx), key=lambda i: i.time, reverse=True):
        rollback_instant(ctx, instant, record=record)
        rolled.append(instant.time)
    return rolled


def plan_rollback(ctx: TableContext, instant: Instant) -> list[RollbackRequest]:
    markers = _marker_files(ctx, instant.time)
    if markers is None and instant.is_completed:
        markers = _committed_files(ctx, instant)
    if markers is None:
        markers = _listed_files(ctx, instant.time)
    requests: dict[tuple[str, str], RollbackRequest] = {}
    for partition, data_file, io_type in markers:
        path = ctx.path(posixpath.join(partition, data_file) if partition else data_file)
        if io_type is not IOType.APPEND:
            requests.setdefault((partition, ""), RollbackRequest(partition)).files_to_delete.append(
                path
            )
            continue
        cdc_log = parse_log_file(partition, data_file)
        if cdc_log is not None and cdc_log.is_cdc:
            # A CDC log (marked by its own name, as Hudi marks it) belongs to the failed merge's
            # new base file alone: deleted whole, as that base file is.
            requests.setdefault((partition, ""), RollbackRequest(partition)).files_to_delete.append(
                path
            )
            continue
        base = parse_base_file(partition, data_file)
        if base is None:
            continue
        if ctx.config.version >= 8:
            # Hudi 1.x: a write's log files are its own (named by its instant): deleted whole.
            logs = logs_written_by(ctx, partition, base.file_id, base.instant_time, instant.time)
            request = requests.setdefault((partition, ""), RollbackRequest(partition))
            request.files_to_delete.extend(ctx.path(log.relative_path) for log in logs)
            continue
        request = requests.setdefault(
            (partition, base.file_id), RollbackRequest(partition, base.file_id, base.instant_time)
        )
        for log in logs_written_by(ctx, partition, base.file_id, base.instant_time, instant.time):
            request.log_blocks_to_delete[ctx.storage.uri(ctx.path(log.relative_path))] = (
                log.size_bytes
            )
    return list(requests.values())


def _marker_files(ctx: TableContext, instant_time: str) -> list[tuple[str, str, IOType]] | None:
    """(partition, data file, IO type) of every marker; None when there are none to go by.

    DIRECT markers are one empty file each; TIMELINE_SERVER_BASED markers (Hudi's Spark default)
    are `MARKERS<n>` files listing one marker path per line.
    """
    folder = ctx.marker_folder(instant_time)
    found: list[tuple[str, str, IOType]] = []
    for status in ctx.storage.walk_files(folder):
        if status.name.startswith("MARKERS") and status.name != "MARKERS.type":
            lines = ctx.storage.read_text(status.path).splitlines()
            found.extend(
                m for m in (_marker_entry(line.strip()) for line in lines) if m is not None
            )
            continue
        relative = posixpath.relpath(posixpath.dirname(status.path), folder)
        entry = _marker_entry(posixpath.join("" if relative == "." else relative, status.name))
        if entry is not None:
            found.append(entry)
    return found or None


def _marker_entry(marker_path: str) -> tuple[str, str, IOType] | None:
    partition, name = posixpath.split(marker_path)
    parsed = parse_marker(name)
    return None if parsed is None else (partition, parsed[0], parsed[1])


def _committed_files(ctx: TableContext, instant: Instant) -> list[tuple[str, str, IOType]]:
    """A completed instant's files from its write stats (its markers are gone): a log file is an
    append to its slice, a base file a create (the metadata table's deltacommits, Hudi 0.14)."""
    found = []
    for stat in ctx.active.commit_metadata(instant).write_stats():
        if not stat.path:
            continue
        partition, name = posixpath.split(stat.path)
        log = parse_log_file(partition, name)
        if log is not None:  # named as an APPEND marker names it; only id and instant are read
            base = f"{log.file_id}_{UNKNOWN_WRITE_TOKEN}_{log.base_instant_time}"
            found.append((partition, base, IOType.APPEND))
        elif parse_base_file(partition, name) is not None:
            found.append((partition, name, IOType.CREATE))
        for cdc_path in stat.cdc_stats or ():
            found.append((*posixpath.split(cdc_path), IOType.APPEND))
    return found


def _listed_files(ctx: TableContext, instant_time: str) -> list[tuple[str, str, IOType]]:
    found = []
    for partition, files in ctx.view().listing.files.items():
        for status in files:
            base = parse_base_file(partition, status.name)
            if base is not None and base.instant_time == instant_time:
                found.append((partition, status.name, IOType.CREATE))
            log = parse_log_file(partition, status.name)
            if log is not None and log.is_cdc and log.base_instant_time == instant_time:
                found.append((partition, status.name, IOType.APPEND))
    return found


def _logs_of(ctx: TableContext, partition: str, file_id: str, base_instant: str) -> list:
    logs = []
    for status in ctx.storage.list_dir(ctx.partition_path(partition)):
        log = parse_log_file(partition, status.name, status.size_bytes)
        if log and log.file_id == file_id and log.base_instant_time == base_instant:
            logs.append(log)
    return logs


def logs_written_by(
    ctx: TableContext, partition: str, file_id: str, base_instant: str, instant: str
) -> list:
    """Log files of a slice whose blocks were written by `instant` (pyhudi writes one file per write)."""
    logs = _logs_of(ctx, partition, file_id, base_instant)
    if base_instant == instant:  # a slice the instant itself opened holds only its own logs
        return logs
    found = []
    for log in logs:
        with ctx.storage.open_input(ctx.path(log.relative_path)) as handle:
            first = next(iter_blocks(handle), None)
        if first is not None and not first.is_corrupt and first.instant_time == instant:
            found.append(log)
    return found


def rollback_instant(
    ctx: TableContext,
    instant: Instant,
    *,
    record: RollbackRecorder | None,
    rollback_time: InstantTime | None = None,
    requests: Sequence[RollbackRequest] | None = None,
) -> InstantTime:
    """Roll back one write instant (pending, or completed: a restore, `rollback_to_instant`, a
    metadata-table deltacommit); returns the rollback instant time. When the table has a metadata
    table holding a deltacommit for `instant`, that deltacommit is rolled back too, at
    `<rollback time>006` (Hudi 0.14), and `record` writes the rollback's own deltacommit, both
    before the data rollback completes; an instant older than the metadata table's latest
    compaction is refused before anything changes. `requests`: the plan to execute (a restore
    plans its own), else `plan_rollback`'s."""
    ctx.config.check_writable(ctx.base_path, "rollback")
    started = time.monotonic()
    mdt = open_metadata_table(ctx)
    mdt_target = metadata_instant_to_roll_back(mdt, instant) if mdt is not None else None
    rollback_time = rollback_time or ctx.new_instant_time()
    requests = list(plan_rollback(ctx, instant) if requests is None else requests)
    plan = {
        "instantToRollback": {"commitTime": instant.time, "action": instant.action.value},
        "RollbackRequests": [r.to_avro() for r in requests],
        "version": _ROLLBACK_PLAN_VERSION,
    }
    requested = ctx.active.create_requested(
        rollback_time,
        Action.ROLLBACK,
        avro_schemas.encode_timeline_record("HoodieRollbackPlan", plan, ctx.config.version),
    )
    inflight = ctx.active.transition_to_inflight(requested)
    partition_metadata = _execute(ctx, instant, rollback_time, requests)
    if mdt is not None and mdt_target is not None:
        _rollback_in_metadata_table(mdt, mdt_target, InstantTime(rollback_time + ROLLBACK_SUFFIX))
    if instant.is_completed:
        ctx.storage.delete(ctx.active.instant_path(instant))
        # A completed compaction is `<t>.commit` over `<t>.compaction.requested/.inflight` (log
        # compaction and v8 clustering alike): those go too, or it would read as pending again.
        for action in Action:
            if action is not instant.action and action.completed_action is instant.action:
                ctx.active.delete_pending_files(Instant(instant.time, action, State.REQUESTED))
    ctx.active.delete_pending_files(instant)
    ctx.storage.delete_dir(ctx.marker_folder(instant.time))
    metadata = {
        "startRollbackTime": rollback_time,
        "timeTakenInMillis": int((time.monotonic() - started) * 1000),
        "totalFilesDeleted": sum(len(p["successDeleteFiles"]) for p in partition_metadata.values()),
        "commitsRollback": [instant.time],
        "partitionMetadata": partition_metadata,
        "version": 1,
        "instantsRollback": [{"commitTime": instant.time, "action": instant.action.value}],
    }
    if record is not None and not is_metadata_table(ctx):
        record(ctx, rollback_time, metadata)
    ctx.active.complete(
        inflight,
        avro_schemas.encode_timeline_record("HoodieRollbackMetadata", metadata, ctx.config.version),
    )
    return rollback_time


def _rollback_in_metadata_table(mdt: TableContext, target: Instant, rollback_time: str) -> None:
    """Roll back the metadata table's deltacommit `target`; a pending rollback of it left by an
    attempt that died is dropped first (its plan re-executes safely: deleted files stay deleted,
    a second ROLLBACK command block for the same instant changes nothing)."""
    for pending in list(mdt.active.timeline.pending().with_actions(Action.ROLLBACK)):
        plan = read_requested_plan(mdt.active, pending)
        if (plan.get("instantToRollback") or {}).get("commitTime") == target.time:
            mdt.active.delete_pending_files(pending)
    rollback_instant(mdt, target, record=None, rollback_time=InstantTime(rollback_time))


def _execute(
    ctx: TableContext, failed: Instant, rollback_time: str, requests: list[RollbackRequest]
) -> dict:
    result: dict[str, dict] = defaultdict(
        lambda: {
            "successDeleteFiles": [],
            "failedDeleteFiles": [],
            "rollbackLogFiles": {},
            "logFilesFromFailedCommit": {},
        }
    )
    for request in requests:
        entry = result[request.partition_path]
        entry["partitionPath"] = request.partition_path
        for path in request.files_to_delete:
            (
                entry["successDeleteFiles"]
                if ctx.storage.delete(path)
                else entry["failedDeleteFiles"]
            ).append(path)
        if request.log_blocks_to_delete:
            _rollback_logs(ctx, failed, rollback_time, request, entry)
    return dict(result)


def _rollback_logs(
    ctx: TableContext, failed: Instant, rollback_time: str, request: RollbackRequest, entry: dict
) -> None:
    entry["logFilesFromFailedCommit"].update(request.log_blocks_to_delete)
    if request.latest_base_instant == failed.time:
        # The failed write created this file group: its logs hold nothing else.
        for uri in request.log_blocks_to_delete:
            path = uri.split(":", 1)[1] if uri.startswith("file:") else uri
            path = "/" + path.lstrip("/")
            (
                entry["successDeleteFiles"]
                if ctx.storage.delete(path)
                else entry["failedDeleteFiles"]
            ).append(uri)
        return
    log_uri, size = append_rollback_block(
        ctx,
        request.partition_path,
        request.file_id,
        request.latest_base_instant,
        failed.time,
        rollback_time,
    )
    entry["rollbackLogFiles"][log_uri] = size


def append_rollback_block(
    ctx: TableContext,
    partition: str,
    file_id: str,
    base_instant: str,
    target: str,
    rollback_time: str,
) -> tuple[str, int]:
    """A ROLLBACK command block for `target` as the slice's next log version (rollover token 1-0-1)."""
    logs = _logs_of(ctx, partition, file_id, base_instant)
    version = max((log.version for log in logs), default=0) + 1
    name = log_file_name(file_id, base_instant, version, UNKNOWN_WRITE_TOKEN)
    data = encode_blocks([rollback_block(rollback_time, target)])
    path = posixpath.join(ctx.partition_path(partition), name)
    ctx.storage.create_new(path, data)
    return ctx.storage.uri(path), len(data)
