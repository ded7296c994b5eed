"""Compaction options (`HoodieCompactionConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config.options import boolean, choice, integer, string

INLINE = boolean(
    "hoodie.compact.inline",
    False,
    "Schedule and run compaction right after each write's commit. Unset, batch writes to "
    "merge-on-read tables compact inline (Hudi 0.14+); streaming writes do not.",
)
SCHEDULE_INLINE = boolean(
    "hoodie.compact.schedule.inline",
    False,
    "Schedule compaction after each write's commit; execution is left to an async or standalone run.",
)
ASYNC_ENABLE = boolean(
    "hoodie.datasource.compaction.async.enable",
    True,
    "Streaming writes to merge-on-read tables schedule compaction and run it in the background.",
)
MAX_DELTA_COMMITS = integer(
    "hoodie.compact.inline.max.delta.commits",
    5,
    "Delta commits since the last compaction that trigger one.",
)
MAX_DELTA_SECONDS = integer(
    "hoodie.compact.inline.max.delta.seconds",
    3600,
    "Seconds since the last compaction that trigger one.",
)
TRIGGER_STRATEGY = choice(
    "hoodie.compact.inline.trigger.strategy",
    "NUM_COMMITS",
    (
        "NUM_COMMITS",
        "NUM_COMMITS_AFTER_LAST_REQUEST",
        "TIME_ELAPSED",
        "NUM_AND_TIME",
        "NUM_OR_TIME",
    ),
    "When compaction is scheduled.",
)
STRATEGY = string(
    "hoodie.compaction.strategy",
    "org.apache.hudi.table.action.compact.strategy.LogFileSizeBasedCompactionStrategy",
    "Which file slices a plan compacts (log-file-size based, bounded by hoodie.compaction.target.io).",
)
TARGET_IO_MB = integer(
    "hoodie.compaction.target.io",
    500 * 1024,
    "IO budget (MB read + written) of one compaction plan.",
)
LOG_FILE_SIZE_THRESHOLD = integer(
    "hoodie.compaction.logfile.size.threshold",
    0,
    "Only slices with at least this many log bytes are compacted.",
)
LOG_FILE_NUM_THRESHOLD = integer(
    "hoodie.compaction.logfile.num.threshold",
    0,
    "LogFileNumBasedCompactionStrategy: minimum log files per slice.",
)
PRESERVE_COMMIT_METADATA = boolean(
    "hoodie.compaction.preserve.commit.metadata",
    True,
    "Compacted records keep their commit time and sequence number.",
)


@dataclass(frozen=True)
class CompactionConfig:
    trigger: str = "NUM_COMMITS"
    max_delta_commits: int = 5
    max_delta_seconds: int = 3600
    strategy: str = STRATEGY.default or ""
    target_io_mb: int = 500 * 1024
    log_size_threshold: int = 0
    log_num_threshold: int = 0

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> CompactionConfig:
        return cls(
            trigger=TRIGGER_STRATEGY.get(options),
            max_delta_commits=MAX_DELTA_COMMITS.get(options),
            max_delta_seconds=MAX_DELTA_SECONDS.get(options),
            strategy=STRATEGY.get(options) or "",
            target_io_mb=TARGET_IO_MB.get(options),
            log_size_threshold=LOG_FILE_SIZE_THRESHOLD.get(options),
            log_num_threshold=LOG_FILE_NUM_THRESHOLD.get(options),
        )
