"""Compaction of the metadata table (Hudi 0.14 `HoodieBackedTableMetadataWriter.compactIfNecessary`,
table version 6): merge each file group's base HFile and log blocks into a new base HFile.

When (`compaction_due`), with `t` the metadata table's latest completed deltacommit:
* at least `hoodie.metadata.compact.max.delta.commits` (10) deltacommits since its latest completed
  compaction (all of them, the initialisation included, before the first one:
  `CompactionUtils.getDeltaCommitsSinceLatestCompaction`);
* no data-table instant (any action) requested or inflight at or before `t`
  (`validateTimelineBeforeSchedulingCompaction`), and no pending compaction on the metadata table
  (a pending one is executed first: `runPendingTableServicesOperations`);
* `t001` not completed already; pyhudi also waits while the metadata table has a deltacommit
  pending (a deliberate superset: its log must not be compacted away half written).

On the metadata table's timeline and storage:

| step     | file (under `.hoodie/metadata/`)                                                      |
|----------|----------------------------------------------------------------------------------------|
| schedule | `.hoodie/<t>001.compaction.requested`: Avro `HoodieCompactionPlan`, one operation per file group with log files (UnBoundedCompactionStrategy) |
| execute  | `.hoodie/<t>001.compaction.inflight`; per operation `<partition>/<fileId>_0-0-0_<t>001.hfile` (CREATE marker in `.hoodie/.temp/<t>001`) holding the merged records |
| complete | `.hoodie/<t>001.commit`: `HoodieCommitMetadata` JSON, operation COMPACT, `compacted: true` |

Table versions 8 and 9 (Hudi 1.2's `compactIfNecessary`): the compaction instant is a new instant
time (or, when a data instant still pending has its deltacommit completed on the metadata table,
1 ms before the earliest such one, so it can still be rolled back), not `<t>001`; no pending data
instant holds it back; the plan takes the log files of deltacommits that completed before that
time (a log file is named by its own deltacommit); the plan is Hudi 1.2's Avro (version 2), the
base file `<fileId>_0-0-0_<compaction instant>.hfile` and the commit `<t>_<completion>.commit`.

Merging is `MetadataTable`'s: base records, then the valid log blocks in order (`merge_records`:
newer over older, file tombstones drop a listed file or stay when the older side lacks it), keys
of DELETE blocks removed. A re-execution of an inflight compaction overwrites its own base files.
Every base file is merged and encoded in memory before the plan is written: a compaction holding
records pyhudi cannot encode is not scheduled, with a warning naming why.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from pyhudi.codec import avro_schemas
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import (
    DEFAULT_WRITE_TOKEN,
    base_file_name,
    marker_name,
    parse_log_file,
)
from pyhudi.codec.metadata_hfile import write_metadata_hfile, written_metadata_schema
from pyhudi.codec.service_plans import compaction_plan_from_avro, compaction_plan_to_avro
from pyhudi.config.metadata_services import MetadataServicesConfig
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError
from pyhudi.file_group.log_scan import InstantFilter
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.metadata.reader import MetadataTable
from pyhudi.metadata.slices import MergeSlice, valid_instants
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.file import LogFile, join_partition
from pyhudi.model.instant import Action, Instant, State
from pyhudi.model.plans import CompactionOperation, CompactionPlan
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.metadata_table import (
    COMPACTION_SUFFIX,
    deltacommits_since_latest_compaction,
)
from pyhudi.timeline.instant_time import format_instant, new_instant_time, parse_instant

HFILE_EXTENSION = ".hfile"

log = logging.getLogger(__name__)


def latest_deltacommit(mdt: TableContext) -> Instant | None:
    return mdt.active.timeline.completed().with_actions(Action.DELTA_COMMIT).last


def compaction_due(
    data: TableContext, mdt: TableContext, config: MetadataServicesConfig
) -> str | None:
    """The compaction instant time `<t>001` when the metadata table should be compacted now."""
    latest = latest_deltacommit(mdt)
    if latest is None:
        return None
    if mdt.config.version >= 8:
        return _compaction_due_1x(data, mdt, config)
    instant_time = latest.time + COMPACTION_SUFFIX
    timeline = mdt.active.timeline
    if any(i.time == instant_time for i in timeline):
        return None  # compacted at this time already (or pending: executed separately)
    if any(i.time <= latest.time for i in data.active.timeline.pending()):
        return None
    if any(i.action in (Action.COMPACTION, Action.DELTA_COMMIT) for i in timeline.pending()):
        return None
    if len(deltacommits_since_latest_compaction(mdt)) < config.compact_max_delta_commits:
        return None
    return instant_time


def _compaction_due_1x(
    data: TableContext, mdt: TableContext, config: MetadataServicesConfig
) -> str | None:
    """Versions 8+: the compaction instant time when enough deltacommits followed the latest
    compaction; 1 ms before the earliest data instant pending on the data table but completed on
    the metadata table, else a new instant time."""
    timeline = mdt.active.timeline
    if any(i.action in (Action.COMPACTION, Action.DELTA_COMMIT) for i in timeline.pending()):
        return None
    if len(deltacommits_since_latest_compaction(mdt)) < config.compact_max_delta_commits:
        return None
    done = set(timeline.completed().times())
    synced = [i.time for i in data.active.timeline.pending() if i.time in done]
    if synced:
        instant_time = format_instant(parse_instant(min(synced)) - timedelta(milliseconds=1))
    else:
        known = [*timeline.times(), *data.active.timeline.times()]
        instant_time = new_instant_time(known, utc=data.config.timeline_timezone_utc)
    if instant_time in done:
        return None
    return instant_time


def plan_metadata_compaction(
    mdt: TableContext, instant_time: str | None = None
) -> CompactionPlan | None:
    """One operation per file group whose latest slice has log files; None when there is none.
    Versions 8+: only log files of deltacommits completed before `instant_time`."""
    view = mdt.view()
    operations = []
    completed_before = _completed_before(mdt, instant_time)
    for partition in view.partition_paths():
        for group in view.file_groups(None, [partition]):
            latest = group.slices[0] if group.slices else None
            if latest is None or not latest.log_files:
                continue
            logs = list(latest.log_files)
            if completed_before is not None:
                logs = [lf for lf in logs if lf.base_instant_time in completed_before]
                if not logs:
                    continue
            logs = sorted(logs, key=LogFile.sort_key)  # Hudi's log file order
            log_bytes = sum(max(lf.size_bytes, 0) for lf in logs)
            base = latest.base_file
            operations.append(
                CompactionOperation(
                    partition_path=partition,
                    file_id=group.file_id,
                    base_instant=latest.base_instant_time,
                    base_file=base.file_name if base else None,
                    log_files=tuple(lf.file_name for lf in logs),
                    metrics=(
                        _io_metrics(len(logs), log_bytes, max(base.size_bytes, 0) if base else None)
                        if completed_before is not None
                        else {
                            "TOTAL_LOG_FILES": float(len(logs)),
                            "TOTAL_LOG_FILES_SIZE": float(log_bytes),
                        }
                    ),
                )
            )
    return CompactionPlan(tuple(operations)) if operations else None


#: The metadata table's `hoodie.parquet.max.file.size`: the write size Hudi assumes without a base.
_MAX_FILE_SIZE = 120 * 1024 * 1024
_MB = 1024 * 1024


def _io_metrics(log_files: int, log_bytes: int, base_bytes: int | None) -> dict[str, float]:
    """Version 8+: Hudi 1.2's `CompactionStrategy.captureMetrics` (whole MB), in its order."""
    read_mb = ((base_bytes or 0) + log_bytes) // _MB
    write_mb = (_MAX_FILE_SIZE if base_bytes is None else base_bytes) // _MB
    return {
        "TOTAL_LOG_FILES": float(log_files),
        "TOTAL_IO_MB": float(read_mb + write_mb),
        "TOTAL_IO_READ_MB": float(read_mb),
        "TOTAL_LOG_FILES_SIZE": float(log_bytes),
        "TOTAL_IO_WRITE_MB": float(write_mb),
    }


def _completed_before(mdt: TableContext, instant_time: str | None) -> frozenset[str] | None:
    """Versions 8+: the deltacommits completed before `instant_time` (None: version 6, where a
    log file is named by its slice's base instant and every committed log file belongs)."""
    if mdt.config.version < 8 or instant_time is None:
        return None
    done = mdt.active.timeline.completed().with_actions(Action.DELTA_COMMIT)
    return frozenset(
        i.time for i in done if i.completion_time is None or i.completion_time < instant_time
    )


@dataclass(frozen=True)
class CompactedFile:
    """One planned file group merged and encoded as its new base HFile (nothing written yet)."""

    operation: CompactionOperation
    name: str
    content: bytes
    record_count: int


def prepare_compaction(
    data: TableContext, mdt: TableContext, plan: CompactionPlan, instant_time: str
) -> tuple[CompactedFile, ...]:
    """Merge and encode every operation of `plan` in memory; raises what cannot be written
    (`UnsupportedOperationError`) before anything is."""
    table = MetadataTable(data, mdt)
    instants = valid_instants(data.active, mdt.active, _max_instant_time(mdt))
    return tuple(_compact_file_group(table, op, instant_time, instants) for op in plan.operations)


def schedule_metadata_compaction(
    mdt: TableContext, instant_time: str, plan: CompactionPlan | None = None
) -> Instant | None:
    """Write `<instant_time>.compaction.requested` when there is something to compact."""
    plan = plan or plan_metadata_compaction(mdt, instant_time)
    return None if plan is None else _request(mdt, instant_time, plan)


def _request(mdt: TableContext, instant_time: str, plan: CompactionPlan) -> Instant:
    record = compaction_plan_to_avro(plan)
    if mdt.config.version >= 8:  # Hudi 1.2's plan: version 2, no meta fields preserved
        record.update(
            extraMetadata={}, version=2, preserveHoodieMetadata=False, missingSchedulePartitions=[]
        )
        content = avro_schemas.encode_container_1x("HoodieCompactionPlan", record)
    else:
        content = avro_schemas.encode_container("HoodieCompactionPlan", record)
    requested = mdt.active.create_requested(instant_time, Action.COMPACTION, content)
    fault_point("metadata_compaction.after_requested")
    return requested


def execute_metadata_compaction(
    data: TableContext,
    mdt: TableContext,
    instant: Instant,
    prepared: tuple[CompactedFile, ...] | None = None,
) -> Instant:
    """Run a requested or inflight metadata-table compaction to its completed `commit`."""
    if prepared is None:
        plan = compaction_plan_from_avro(read_requested_plan(mdt.active, instant))
        prepared = prepare_compaction(data, mdt, plan, instant.time)
    current = [i for i in mdt.active.timeline if i.time == instant.time][-1]
    if current.state is State.REQUESTED:
        current = mdt.active.transition_to_inflight(current)
    fault_point("metadata_compaction.after_inflight")
    stats: dict[str, list[WriteStat]] = {}
    for compacted in prepared:
        stat = _write_compacted(mdt, instant.time, compacted)
        stats.setdefault(compacted.operation.partition_path, []).append(stat)
    fault_point("metadata_compaction.after_base_files")
    version = mdt.config.version
    metadata = CommitMetadata(
        partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
        operation_type=WriteOperationType.COMPACT,
        extra_metadata={"schema": written_metadata_schema(version, meta_fields=False)},
        compacted=True,
    )
    content = encode_commit_metadata(metadata, table_version=version)
    completed = mdt.active.complete(current, content)
    mdt.storage.delete_dir(mdt.marker_folder(instant.time))
    fault_point("metadata_compaction.after_commit")
    return completed


def _max_instant_time(mdt: TableContext) -> str | None:
    """The newest completed commit, deltacommit or rollback: the log blocks a compaction merges
    stop there (Hudi's `HoodieCompactor` bound)."""
    done = mdt.active.timeline.completed()
    last = done.with_actions(Action.COMMIT, Action.DELTA_COMMIT, Action.ROLLBACK).last
    return last.time if last else None


def _compact_file_group(
    table: MetadataTable, operation: CompactionOperation, instant_time: str, instants: InstantFilter
) -> CompactedFile:
    partition = operation.partition_path
    logs = sorted(_parsed_logs(partition, operation.log_files), key=LogFile.sort_key)
    piece = MergeSlice(
        partition,
        operation.file_id,
        join_partition(partition, operation.base_file) if operation.base_file else None,
        tuple(log.relative_path for log in logs),
        0,
    )
    records = table.merge_file_group(piece, instants)
    name = base_file_name(operation.file_id, DEFAULT_WRITE_TOKEN, instant_time, HFILE_EXTENSION)
    version = table.table.config.version
    schema = written_metadata_schema(version)
    content = write_metadata_hfile(
        records.values(), base_file_name=name, schema_json=schema, hudi_io=version >= 8
    )
    return CompactedFile(operation, name, content, len(records))


def _write_compacted(mdt: TableContext, instant_time: str, compacted: CompactedFile) -> WriteStat:
    operation = compacted.operation
    partition = operation.partition_path
    marker = posixpath.join(
        mdt.marker_folder(instant_time), partition, marker_name(compacted.name, IOType.CREATE)
    )
    if not mdt.storage.exists(marker):
        mdt.storage.create_new(marker, b"")
    path = mdt.path(join_partition(partition, compacted.name))
    mdt.storage.delete(path)  # left by an earlier attempt of this compaction
    mdt.storage.create_new(path, compacted.content)
    log_sizes = _log_sizes(mdt, partition, operation.log_files)
    return WriteStat(
        file_id=operation.file_id,
        path=join_partition(partition, compacted.name),
        partition_path=partition,
        prev_commit=operation.base_instant,
        num_writes=compacted.record_count,
        total_write_bytes=len(compacted.content),
        file_size_bytes=len(compacted.content),
        total_log_files_compacted=len(operation.log_files),
        total_log_size_compacted=sum(log_sizes.values()),
    )


def _parsed_logs(partition: str, names: tuple[str, ...]) -> list[LogFile]:
    logs = [parse_log_file(partition, name) for name in names]
    missing = [name for name, log in zip(names, logs, strict=True) if log is None]
    if missing:
        raise CorruptFileError(
            f"metadata compaction plan names files that are not log files: {missing}"
        )
    return [log for log in logs if log is not None]


def _log_sizes(mdt: TableContext, partition: str, names: tuple[str, ...]) -> Mapping[str, int]:
    listed = {s.name: s.size_bytes for s in mdt.storage.list_dir(mdt.partition_path(partition))}
    return {name: listed.get(name, 0) for name in names}


def compact_if_necessary(
    data: TableContext, mdt: TableContext, config: MetadataServicesConfig
) -> Instant | None:
    """Finish pending metadata compactions, then compact when due; the last one completed. A
    compaction pyhudi cannot write yet (records it cannot encode) is not scheduled: a warning."""
    done = finish_pending_compactions(data, mdt)
    instant_time = compaction_due(data, mdt, config)
    plan = plan_metadata_compaction(mdt, instant_time) if instant_time is not None else None
    if instant_time is None or plan is None:
        return done
    try:
        prepared = prepare_compaction(data, mdt, plan, instant_time)
    except UnsupportedOperationError as err:
        log.warning("metadata table %s not compacted at %s: %s", mdt.base_path, instant_time, err)
        return done
    requested = _request(mdt, instant_time, plan)
    return execute_metadata_compaction(data, mdt, requested, prepared)


def finish_pending_compactions(data: TableContext, mdt: TableContext) -> Instant | None:
    """Execute every requested or inflight metadata compaction; the last one completed."""
    done = None
    for pending in list(mdt.active.timeline.pending().with_actions(Action.COMPACTION)):
        done = execute_metadata_compaction(data, mdt, pending)
    return done
