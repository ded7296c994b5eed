"""Clustering options (`HoodieClusteringConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config import write as write_keys
from pyhudi.config.options import boolean, choice, integer, string, string_list

INLINE = boolean(
    "hoodie.clustering.inline", False, "Schedule and run clustering after every N commits."
)
INLINE_MAX_COMMITS = integer(
    "hoodie.clustering.inline.max.commits", 4, "Commits between inline clusterings."
)
SCHEDULE_INLINE = boolean(
    "hoodie.clustering.schedule.inline",
    False,
    "Schedule clustering inline; execution async or standalone.",
)
ASYNC_ENABLED = boolean(
    "hoodie.clustering.async.enabled",
    False,
    "Schedule clustering after writes and run it in the background.",
)
ASYNC_MAX_COMMITS = integer(
    "hoodie.clustering.async.max.commits", 4, "Commits between async clusterings."
)
SMALL_FILE_LIMIT = integer(
    "hoodie.clustering.plan.strategy.small.file.limit",
    300 * 1024 * 1024,
    "Files below this size are clustered.",
)
TARGET_FILE_MAX_BYTES = integer(
    "hoodie.clustering.plan.strategy.target.file.max.bytes",
    1024 * 1024 * 1024,
    "Size of clustering's output files.",
)
MAX_BYTES_PER_GROUP = integer(
    "hoodie.clustering.plan.strategy.max.bytes.per.group",
    2 * 1024 * 1024 * 1024,
    "Input bytes of one clustering group.",
)
MAX_NUM_GROUPS = integer(
    "hoodie.clustering.plan.strategy.max.num.groups", 30, "Clustering groups per plan."
)
SORT_COLUMNS = string_list(
    "hoodie.clustering.plan.strategy.sort.columns",
    None,
    "Columns the rewritten files are sorted by.",
)
SINGLE_GROUP_CLUSTERING = boolean(
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled",
    True,
    "Plan groups of a single file slice (a partition's only small slice is rewritten too; "
    "always when sort columns are set).",
)
PARTITION_FILTER_MODE = choice(
    "hoodie.clustering.plan.partition.filter.mode",
    "NONE",
    ("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"),
    "Which partitions a plan considers.",
)
PARTITION_SELECTED = string(
    "hoodie.clustering.plan.strategy.partition.selected",
    None,
    "Comma-separated partitions to plan (instead of all; the regex is not applied to them).",
)
BEGIN_PARTITION = string(
    "hoodie.clustering.plan.strategy.cluster.begin.partition",
    None,
    "SELECTED_PARTITIONS: the first partition to plan (inclusive).",
)
END_PARTITION = string(
    "hoodie.clustering.plan.strategy.cluster.end.partition",
    None,
    "SELECTED_PARTITIONS: the last partition to plan (inclusive).",
)
PARTITION_REGEX = string(
    "hoodie.clustering.plan.strategy.partition.regex.pattern",
    None,
    "Only partitions matching this regex.",
)
LOOKBACK_PARTITIONS = integer(
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions",
    2,
    "RECENT_DAYS: newest partitions considered.",
)
SKIP_LATEST_PARTITIONS = integer(
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions",
    0,
    "RECENT_DAYS: newest partitions skipped.",
)
UPDATES_STRATEGY = string(
    "hoodie.clustering.updates.strategy",
    "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy",
    "Writes to file groups under pending clustering: rejected (default) or allowed "
    "(SparkAllowUpdateStrategy: the clustering then aborts at commit if its inputs changed).",
)
INCREMENTAL_TABLE_SERVICES = boolean(
    "hoodie.table.services.incremental.enabled",
    True,
    "Table versions 8 and 9 (Hudi 1.2): after a first clustering, plan only the partitions "
    "written since the last one began (and those its plan left out).",
)
PRESERVE_COMMIT_METADATA = boolean(
    "hoodie.clustering.preserve.commit.metadata", True, "Clustered records keep their commit time."
)

PLAN_STRATEGY_CLASS = (
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
)
EXECUTION_STRATEGY_CLASS = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
)


@dataclass(frozen=True)
class ClusteringConfig:
    small_file_limit: int = 300 * 1024 * 1024
    target_file_max_bytes: int = 1024 * 1024 * 1024
    max_bytes_per_group: int = 2 * 1024 * 1024 * 1024
    max_num_groups: int = 30
    sort_columns: tuple[str, ...] = ()
    single_group: bool = True
    filter_mode: str = "NONE"
    selected: tuple[str, ...] = ()
    regex: str | None = None
    lookback: int = 2
    skip_latest: int = 0
    begin_partition: str | None = None
    end_partition: str | None = None
    #: A slice without a base file counts as this many bytes (`hoodie.parquet.max.file.size`).
    parquet_max_file_bytes: int = 120 * 1024 * 1024
    incremental: bool = True

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ClusteringConfig:
        selected = PARTITION_SELECTED.get(options)
        return cls(
            small_file_limit=SMALL_FILE_LIMIT.get(options),
            target_file_max_bytes=TARGET_FILE_MAX_BYTES.get(options),
            max_bytes_per_group=MAX_BYTES_PER_GROUP.get(options),
            max_num_groups=MAX_NUM_GROUPS.get(options),
            sort_columns=SORT_COLUMNS.get(options) or (),
            single_group=SINGLE_GROUP_CLUSTERING.get(options),
            filter_mode=PARTITION_FILTER_MODE.get(options),
            selected=tuple(p.strip() for p in selected.split(",") if p.strip()) if selected else (),
            regex=PARTITION_REGEX.get(options),
            lookback=LOOKBACK_PARTITIONS.get(options),
            skip_latest=SKIP_LATEST_PARTITIONS.get(options),
            begin_partition=BEGIN_PARTITION.get(options),
            end_partition=END_PARTITION.get(options),
            parquet_max_file_bytes=write_keys.PARQUET_MAX_FILE_SIZE.get(options),
            incremental=INCREMENTAL_TABLE_SERVICES.get(options),
        )


def enabled_service_keys(options: Mapping[str, str]) -> list[str]:
    """The clustering service keys set to true (inline, schedule inline, async)."""
    return [
        option.key for option in (INLINE, SCHEDULE_INLINE, ASYNC_ENABLED) if option.get(options)
    ]


#: Why clustering is refused on a table with the simple bucket index.
BUCKET_REFUSAL = (
    "is not supported on a table with the simple bucket index (hoodie.index.type=BUCKET): it "
    "rewrites file groups into new ones, so records would leave their buckets' file groups and the "
    "next upsert would write their keys again (Hudi's Flink writer refuses it too; its "
    "consistent-hashing bucket engine has a clustering of its own)"
)
