"""Compaction planning (pure): when to compact, and which file slices (Hudi's
`LogFileSizeBasedCompactionStrategy` bounded by `hoodie.compaction.target.io`).

A plan is persisted as `<t>.compaction.requested` = Avro `HoodieCompactionPlan` (version 2: log and
base files by name, §7.1). Slices qualify when they have log files and their file group is under no
pending compaction or clustering; the largest logs go first until the IO budget is spent.
"""

from __future__ import annotations

import time

from pyhudi.config.compaction import CompactionConfig
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Action
from pyhudi.model.plans import CompactionOperation, CompactionPlan
from pyhudi.table.context import TableContext
from pyhudi.timeline.instant_time import parse_instant

_MB = 1024 * 1024


def delta_commits_since_last_compaction(
    ctx: TableContext, *, after_request: bool = False
) -> tuple[int, str | None]:
    """(completed deltacommits after the last compaction, that compaction's instant)."""
    timeline = ctx.active.timeline
    if after_request:
        compactions = [
            i
            for i in timeline
            if i.action is Action.COMPACTION or (i.action is Action.COMMIT and i.is_completed)
        ]
    else:
        compactions = [i for i in timeline.completed() if i.action is Action.COMMIT]
    last = compactions[-1].time if compactions else None
    deltas = [
        i
        for i in timeline.commits().with_actions(Action.DELTA_COMMIT)
        if last is None or i.time > last
    ]
    return len(deltas), last


def should_schedule(ctx: TableContext, config: CompactionConfig, now: float | None = None) -> bool:
    """Hudi's `hoodie.compact.inline.trigger.strategy` rules."""
    count, last = delta_commits_since_last_compaction(
        ctx, after_request=config.trigger == "NUM_COMMITS_AFTER_LAST_REQUEST"
    )
    first_delta = next(iter(ctx.active.timeline.commits().with_actions(Action.DELTA_COMMIT)), None)
    reference = last or (first_delta.time if first_delta else None)
    elapsed = (
        (now or time.time())
        - parse_instant(reference, utc=ctx.config.timeline_timezone_utc).timestamp()
        if reference
        else 0
    )
    by_count = count >= config.max_delta_commits
    by_time = reference is not None and elapsed >= config.max_delta_seconds
    return {
        "NUM_COMMITS": by_count,
        "NUM_COMMITS_AFTER_LAST_REQUEST": by_count,
        "TIME_ELAPSED": by_time,
        "NUM_AND_TIME": by_count and by_time,
        "NUM_OR_TIME": by_count or by_time,
    }[config.trigger]


def plan_compaction(ctx: TableContext, config: CompactionConfig) -> CompactionPlan | None:
    """The slices to compact now, or None when no slice qualifies."""
    blocked = set(pending_compaction_operations(ctx.active)) | set(
        pending_clustering_file_groups(ctx.active)
    )
    candidates = [
        s
        for s in ctx.view().latest_file_slices()
        if s.has_log_files
        and (s.partition_path, s.file_id) not in blocked
        and _qualifies(s, config)
    ]
    if "LogFileNumBased" in config.strategy:
        candidates.sort(key=lambda s: len(s.log_files), reverse=True)
    else:
        candidates.sort(
            key=lambda s: sum(max(lf.size_bytes, 0) for lf in s.log_files), reverse=True
        )
    operations: list[CompactionOperation] = []
    budget: float = config.target_io_mb
    for file_slice in candidates:
        op = _operation(file_slice)
        if operations and op.metrics["TOTAL_IO_MB"] > budget:
            break
        operations.append(op)
        budget -= op.metrics["TOTAL_IO_MB"]
    return CompactionPlan(tuple(operations)) if operations else None


def _qualifies(file_slice: FileSlice, config: CompactionConfig) -> bool:
    log_bytes = sum(max(lf.size_bytes, 0) for lf in file_slice.log_files)
    return (
        log_bytes >= config.log_size_threshold
        and len(file_slice.log_files) >= config.log_num_threshold
    )


def _operation(file_slice: FileSlice) -> CompactionOperation:
    log_bytes = sum(max(lf.size_bytes, 0) for lf in file_slice.log_files)
    base_bytes = max(file_slice.base_file.size_bytes, 0) if file_slice.base_file else 0
    read_mb, write_mb = (base_bytes + log_bytes) / _MB, (base_bytes or log_bytes) / _MB
    metrics = {
        "TOTAL_LOG_FILES": float(len(file_slice.log_files)),
        "TOTAL_LOG_FILES_SIZE": float(log_bytes),
        "TOTAL_IO_READ_MB": read_mb,
        "TOTAL_IO_WRITE_MB": write_mb,
        "TOTAL_IO_MB": read_mb + write_mb,
    }
    return CompactionOperation(
        partition_path=file_slice.partition_path,
        file_id=file_slice.file_id,
        base_instant=file_slice.base_instant_time,
        base_file=file_slice.base_file.file_name if file_slice.base_file else None,
        log_files=tuple(lf.file_name for lf in file_slice.log_files),
        metrics=metrics,
    )
