"""Clean options (`HoodieCleanConfig`, plus the heartbeat keys of `HoodieWriteConfig`).

The cleaner deletes file slices no query needs any more. Which ones is set by the policy:

* `KEEP_LATEST_COMMITS` (default): keep what a query as of any of the last
  `hoodie.cleaner.commits.retained` commits reads;
* `KEEP_LATEST_FILE_VERSIONS`: keep the newest `hoodie.cleaner.fileversions.retained` slices of
  every file group;
* `KEEP_LATEST_BY_HOURS`: keep what a query as of any commit of the last
  `hoodie.cleaner.hours.retained` hours reads.

>>> CleanConfig.from_options({"hoodie.cleaner.policy": "keep_latest_file_versions"}).policy
<CleaningPolicy.KEEP_LATEST_FILE_VERSIONS: 'KEEP_LATEST_FILE_VERSIONS'>
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from pyhudi.config.concurrency import (
    HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TOLERABLE_MISSES,
    FailedWritesPolicy,
    failed_writes_policy,
)
from pyhudi.config.options import boolean, choice, integer
from pyhudi.config.write import FAILED_WRITES_CLEANER_POLICY
from pyhudi.exceptions import ConfigError


class CleaningPolicy(str, Enum):
    """`HoodieCleaningPolicy`; the value is what plans and clean metadata carry (`policy`)."""

    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"

    @property
    def retains_commits(self) -> bool:
        """Policies that work from an earliest commit to retain (commits or hours)."""
        return self is not CleaningPolicy.KEEP_LATEST_FILE_VERSIONS


AUTOMATIC = boolean(
    "hoodie.clean.automatic",
    True,
    "Run the cleaner right after each commit.",
)
ASYNC = boolean(
    "hoodie.clean.async",
    False,
    "Run the automatic clean in the background, alongside the next writes.",
    "hoodie.clean.async.enabled",
)
POLICY = choice(
    "hoodie.cleaner.policy",
    CleaningPolicy.KEEP_LATEST_COMMITS.value,
    tuple(p.value for p in CleaningPolicy),
    "Which file slices the cleaner keeps.",
    "hoodie.clean.policy",  # Hudi 1.x's name
)
COMMITS_RETAINED = integer(
    "hoodie.cleaner.commits.retained",
    10,
    "KEEP_LATEST_COMMITS: queries as of any of this many latest commits still find their files.",
    "hoodie.clean.commits.retained",  # Hudi 1.x's name
)
FILE_VERSIONS_RETAINED = integer(
    "hoodie.cleaner.fileversions.retained",
    3,
    "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group.",
    "hoodie.clean.fileversions.retained",  # Hudi 1.x's name
)
HOURS_RETAINED = integer(
    "hoodie.cleaner.hours.retained",
    24,
    "KEEP_LATEST_BY_HOURS: queries as of any commit of this many last hours find their files.",
    "hoodie.clean.hours.retained",  # Hudi 1.x's name
)
MAX_COMMITS = integer(
    "hoodie.clean.max.commits",
    1,
    "Schedule a clean only when at least this many commits completed since the last clean.",
)
TRIGGER_STRATEGY = choice(
    "hoodie.clean.trigger.strategy",
    "NUM_COMMITS",
    ("NUM_COMMITS",),
    "When a clean is scheduled (Hudi knows only NUM_COMMITS, with hoodie.clean.max.commits).",
)
INCREMENTAL_MODE = boolean(
    "hoodie.cleaner.incremental.mode",
    True,
    "Accepted for compatibility; pyhudi always scans every partition (same plan, more listing).",
)
#: Declared with the write and concurrency options; re-exported because the cleaner acts on them.
FAILED_WRITES_POLICY = FAILED_WRITES_CLEANER_POLICY


@dataclass(frozen=True)
class CleanConfig:
    """The clean options, parsed and checked once."""

    automatic: bool = True
    run_async: bool = False
    policy: CleaningPolicy = CleaningPolicy.KEEP_LATEST_COMMITS
    commits_retained: int = 10
    file_versions_retained: int = 3
    hours_retained: int = 24
    max_commits: int = 1
    failed_writes_policy: FailedWritesPolicy = FailedWritesPolicy.EAGER
    heartbeat_interval_ms: int = 60_000
    heartbeat_tolerable_misses: int = 2

    def __post_init__(self) -> None:
        for key, value, minimum in (
            (COMMITS_RETAINED.key, self.commits_retained, 1),
            (FILE_VERSIONS_RETAINED.key, self.file_versions_retained, 1),
            (HOURS_RETAINED.key, self.hours_retained, 0),
            (MAX_COMMITS.key, self.max_commits, 0),
            (HEARTBEAT_INTERVAL_MS.key, self.heartbeat_interval_ms, 1),
            (HEARTBEAT_TOLERABLE_MISSES.key, self.heartbeat_tolerable_misses, 1),
        ):
            if value < minimum:
                raise ConfigError(f"{key} must be at least {minimum}, got {value}")

    @property
    def heartbeat_expiry_ms(self) -> int:
        """A pending write whose heartbeat is older than this has failed (Hudi's max interval)."""
        return self.heartbeat_interval_ms * self.heartbeat_tolerable_misses

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> CleanConfig:
        return cls(
            automatic=AUTOMATIC.get(options),
            run_async=ASYNC.get(options),
            policy=CleaningPolicy(POLICY.get(options)),
            commits_retained=COMMITS_RETAINED.get(options),
            file_versions_retained=FILE_VERSIONS_RETAINED.get(options),
            hours_retained=HOURS_RETAINED.get(options),
            max_commits=MAX_COMMITS.get(options),
            failed_writes_policy=failed_writes_policy(options),  # LAZY under OCC
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS.get(options),
            heartbeat_tolerable_misses=HEARTBEAT_TOLERABLE_MISSES.get(options),
        )
