"""Compaction planning (pure): when to compact, and which file slices (Hudi's
`LogFileSizeBasedCompactionStrategy` bounded by `hoodie.compaction.target.io`).

A plan is persisted as `<t>.compaction.requested` = Avro `HoodieCompactionPlan` (version 2: log and
base files by name, §7.1). Slices qualify when they have log files and their file group is under no
pending compaction or clustering; the largest logs go first until the IO budget is spent.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyhudi.config import compaction as ckeys
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext
from pyhudi.timeline.instant_time import parse_instant

_MB = 1024 * 1024
PLAN_VERSION = 2


@dataclass(frozen=True)
class CompactionConfig:
    trigger: str = "NUM_COMMITS"
    max_delta_commits: int = 5
    max_delta_seconds: int = 3600
    strategy: str = ckeys.STRATEGY.default or ""
    target_io_mb: int = 500 * 1024
    log_size_threshold: int = 0
    log_num_threshold: int = 0

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> CompactionConfig:
        return cls(
            trigger=ckeys.TRIGGER_STRATEGY.get(options),
            max_delta_commits=ckeys.MAX_DELTA_COMMITS.get(options),
            max_delta_seconds=ckeys.MAX_DELTA_SECONDS.get(options),
            strategy=ckeys.STRATEGY.get(options) or "",
            target_io_mb=ckeys.TARGET_IO_MB.get(options),
            log_size_threshold=ckeys.LOG_FILE_SIZE_THRESHOLD.get(options),
            log_num_threshold=ckeys.LOG_FILE_NUM_THRESHOLD.get(options),
        )


@dataclass(frozen=True)
class CompactionOperation:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    metrics: Mapping[str, float] = field(default_factory=dict)

    def to_avro(self) -> dict[str, Any]:
        return {
            "baseInstantTime": self.base_instant,
            "deltaFilePaths": list(self.log_files),
            "dataFilePath": self.base_file,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": None,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> CompactionOperation:
        data_file = record.get("dataFilePath")
        return cls(
            partition_path=record.get("partitionPath") or "",
            file_id=record["fileId"],
            base_instant=record.get("baseInstantTime") or "",
            base_file=data_file.rsplit("/", 1)[-1]
            if data_file
            else None,  # version 1 plans: full paths
            log_files=tuple(p.rsplit("/", 1)[-1] for p in record.get("deltaFilePaths") or ()),
            metrics=dict(record.get("metrics") or {}),
        )


@dataclass(frozen=True)
class CompactionPlan:
    operations: tuple[CompactionOperation, ...]

    def to_avro(self) -> dict[str, Any]:
        return {
            "operations": [op.to_avro() for op in self.operations],
            "extraMetadata": None,
            "version": PLAN_VERSION,
            "strategy": None,
            "preserveHoodieMetadata": True,
        }

    @classmethod
    def from_avro(cls, record: Mapping[str, Any]) -> CompactionPlan:
        return cls(
            tuple(CompactionOperation.from_avro(op) for op in record.get("operations") or ())
        )


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
