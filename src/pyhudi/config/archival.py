"""Archival options (Hudi's `HoodieArchivalConfig`) and the typed `ArchivalConfig` they build.

Archival moves old instants out of the active timeline (`.hoodie/`) into the archived timeline
(`.hoodie/archived/.commits_.archive.<N>_<token>`, table version 6) so that listing the timeline
stays cheap; table versions 8 and 9 keep it as the LSM history in `.hoodie/timeline/history/`
(`pyhudi.services.archival.lsm`). The rules live in `pyhudi.services.archival`; this module only
declares the keys.

Validation, as Hudi 0.14 does it (`HoodieWriteConfig.Builder.validate`):
* `hoodie.keep.max.commits` must be greater than `hoodie.keep.min.commits` (an error);
* `hoodie.keep.min.commits` not greater than `hoodie.cleaner.commits.retained` is only a
  *warning* since Hudi 0.14 (HUDI-6370): the archiver raises its bounds at run time instead, so
  that it never archives commits the cleaner still keeps (`services.archival.keep_bounds`).
pyhudi adds guards of its own: `hoodie.keep.min.commits`, `hoodie.commits.archival.batch` and
`hoodie.timeline.manifest.retained.versions` must be at least 1 (0 would archive every commit, and
an empty commits timeline makes every data file look uncommitted to readers; Hudi's LSM cleaning
would delete every manifest of the history).

The cleaner and compaction keys archival depends on are declared in `config.clean` and
`config.compaction`; `ArchivalConfig` carries their values.

>>> ArchivalConfig.from_options({"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "8"}).max_commits_to_keep
8
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config import clean as _clean
from pyhudi.config import compaction as _compaction
from pyhudi.config.options import boolean, integer, string
from pyhudi.exceptions import ConfigError

log = logging.getLogger(__name__)

AUTOMATIC = boolean(
    "hoodie.archive.automatic",
    True,
    "When enabled, the archival table service is invoked immediately after each commit, to "
    "archive commits if we cross a maximum value of commits. It's recommended to enable this, "
    "to ensure number of active commits is bounded.",
)
ASYNC = boolean(
    "hoodie.archive.async",
    False,
    "Only applies when hoodie.archive.automatic is turned on. When turned on runs archiver "
    "async with writing, which can speed up overall write performance.",
)
MIN_COMMITS_TO_KEEP = integer(
    "hoodie.keep.min.commits",
    20,
    "Similar to hoodie.keep.max.commits, but controls the minimum number of instants to retain "
    "in the active timeline.",
)
MAX_COMMITS_TO_KEEP = integer(
    "hoodie.keep.max.commits",
    30,
    "Archiving service moves older entries from timeline into an archived log after each write, "
    "to keep the metadata overhead constant, even as the table size grows. This config controls "
    "the maximum number of instants to retain in the active timeline.",
)
COMMITS_ARCHIVAL_BATCH = integer(
    "hoodie.commits.archival.batch",
    10,
    "Archiving of instants is batched in best-effort manner, to pack more instants into a single "
    "archive log. This config controls such archival batch size.",
)
# Table versions 8 and 9: the LSM history's compaction and cleaning (`LSMTimelineWriter`).
TIMELINE_COMPACTION_BATCH_SIZE = integer(
    "hoodie.timeline.compaction.batch.size",
    10,
    "Table versions 8 and 9: the number of small files of one layer of the LSM timeline "
    "history compacted at once into a file of the next layer.",
)
TIMELINE_COMPACTION_TARGET_FILE_MAX_BYTES = integer(
    "hoodie.timeline.compaction.target.file.max.bytes",
    1048576000,
    "Table versions 8 and 9: max size (in bytes) for each archived timeline file.",
)
TIMELINE_MANIFEST_RETAINED_VERSIONS = integer(
    "hoodie.timeline.manifest.retained.versions",
    3,
    "Table versions 8 and 9: number of LSM timeline manifest versions to retain.",
)
# Table version 8 keys of hoodie.properties that locate the LSM history (read-only in pyhudi).
# They describe the table layout and would sit better in `config/table.py`.
TIMELINE_PATH = string(
    "hoodie.timeline.path", "timeline", "Table version 8: timeline folder under `.hoodie`."
)
TIMELINE_HISTORY_PATH = string(
    "hoodie.timeline.history.path",
    "history",
    "Table version 8: folder of the LSM archived timeline, under the timeline folder.",
)


@dataclass(frozen=True)
class ArchivalConfig:
    """The archival settings of one write or service run (see the module docstring)."""

    automatic: bool = True
    run_async: bool = False
    min_commits_to_keep: int = 20
    max_commits_to_keep: int = 30
    batch_size: int = 10
    cleaner_policy: str = "KEEP_LATEST_COMMITS"
    cleaner_commits_retained: int = 10
    cleaner_hours_retained: int = 24
    compaction_trigger_strategy: str = "NUM_COMMITS"
    compaction_max_delta_commits: int = 5
    timeline_compaction_batch_size: int = 10
    timeline_compaction_max_file_bytes: int = 1048576000
    timeline_manifest_retained_versions: int = 3

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ArchivalConfig:
        """Parse and validate; raises `ConfigError` naming the offending keys."""
        config = cls(
            automatic=AUTOMATIC.get(options),
            run_async=ASYNC.get(options),
            min_commits_to_keep=MIN_COMMITS_TO_KEEP.get(options),
            max_commits_to_keep=MAX_COMMITS_TO_KEEP.get(options),
            batch_size=COMMITS_ARCHIVAL_BATCH.get(options),
            cleaner_policy=_clean.POLICY.get(options),
            cleaner_commits_retained=_clean.COMMITS_RETAINED.get(options),
            cleaner_hours_retained=_clean.HOURS_RETAINED.get(options),
            compaction_trigger_strategy=_compaction.TRIGGER_STRATEGY.get(options),
            compaction_max_delta_commits=_compaction.MAX_DELTA_COMMITS.get(options),
            timeline_compaction_batch_size=TIMELINE_COMPACTION_BATCH_SIZE.get(options),
            timeline_compaction_max_file_bytes=TIMELINE_COMPACTION_TARGET_FILE_MAX_BYTES.get(
                options
            ),
            timeline_manifest_retained_versions=TIMELINE_MANIFEST_RETAINED_VERSIONS.get(options),
        )
        config.validate()
        return config

    def validate(self) -> None:
        if self.min_commits_to_keep < 1:
            raise ConfigError(
                f"{MIN_COMMITS_TO_KEEP.key}={self.min_commits_to_keep} must be at least 1"
            )
        if self.batch_size < 1:
            raise ConfigError(f"{COMMITS_ARCHIVAL_BATCH.key}={self.batch_size} must be at least 1")
        if self.timeline_manifest_retained_versions < 1:
            raise ConfigError(
                f"{TIMELINE_MANIFEST_RETAINED_VERSIONS.key}="
                f"{self.timeline_manifest_retained_versions} must be at least 1"
            )
        if self.max_commits_to_keep <= self.min_commits_to_keep:
            raise ConfigError(
                f"Increase {MAX_COMMITS_TO_KEEP.key}={self.max_commits_to_keep} to be greater "
                f"than {MIN_COMMITS_TO_KEEP.key}={self.min_commits_to_keep}."
            )
        if (
            self.cleaner_policy == "KEEP_LATEST_COMMITS"
            and self.min_commits_to_keep <= self.cleaner_commits_retained
        ):
            log.warning(
                "Increase %s=%d to be greater than %s=%d (there is risk of incremental pull "
                "missing data from few instants based on the current configuration). The "
                "archiver adjusts its bounds automatically regardless.",
                MIN_COMMITS_TO_KEEP.key,
                self.min_commits_to_keep,
                _clean.COMMITS_RETAINED.key,
                self.cleaner_commits_retained,
            )
