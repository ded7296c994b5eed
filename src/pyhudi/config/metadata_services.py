"""The metadata table's own services: compaction, clean and archival of `.hoodie/metadata`
(Hudi 0.14 `HoodieMetadataConfig` and `HoodieMetadataWriteUtils.createMetadataWriteConfig`).

Hudi derives the metadata table's write config from the data table's: compaction after
`hoodie.metadata.compact.max.delta.commits` deltacommits (UnBoundedCompactionStrategy: every file
group with log files), cleaning KEEP_LATEST_COMMITS retaining 20 commits
(`DEFAULT_METADATA_CLEANER_COMMITS_RETAINED`), archival keeping the data table's
`hoodie.keep.min.commits` + 1 to `hoodie.keep.max.commits` + 1 commits. The cleaner and archival
bounds are not options of their own in Hudi 0.14 (fixed or derived), so only the compaction trigger
is a key here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config import archival as _archival
from pyhudi.config.options import integer
from pyhudi.exceptions import ConfigError

COMPACT_MAX_DELTA_COMMITS = integer(
    "hoodie.metadata.compact.max.delta.commits",
    10,
    "Deltacommits of the metadata table since its last compaction that trigger the next one.",
)
#: `HoodieMetadataConfig.DEFAULT_METADATA_CLEANER_COMMITS_RETAINED` (Hudi 0.14).
CLEANER_COMMITS_RETAINED = 20
#: Completed metadata-table instants after its latest compaction before a clean may run
#: (`cleanIfNecessary`: readers get time to finish with the pre-compaction files).
CLEAN_AFTER_COMPACTION_INSTANTS = 3


@dataclass(frozen=True)
class MetadataServicesConfig:
    """What the metadata table's services need, resolved from the data table's write options."""

    compact_max_delta_commits: int = 10
    cleaner_commits_retained: int = CLEANER_COMMITS_RETAINED
    min_commits_to_keep: int = 21
    max_commits_to_keep: int = 31

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> MetadataServicesConfig:
        """From the data table's write options (Hudi's `createMetadataWriteConfig`)."""
        max_delta = COMPACT_MAX_DELTA_COMMITS.get(options)
        if max_delta < 1:
            raise ConfigError(
                f"{COMPACT_MAX_DELTA_COMMITS.key} must be at least 1, got {max_delta}"
            )
        return cls(
            compact_max_delta_commits=max_delta,
            min_commits_to_keep=_archival.MIN_COMMITS_TO_KEEP.get(options) + 1,
            max_commits_to_keep=_archival.MAX_COMMITS_TO_KEEP.get(options) + 1,
        )
