"""Clustering planning (pure; Hudi's `SparkSizeBasedClusteringPlanStrategy`).

Per partition (after the partition filter), file slices whose base file is below
`small.file.limit` and that are under no pending compaction or clustering are grouped, largest first,
into groups of at most `max.bytes.per.group`; each group is rewritten into
ceil(group bytes / `target.file.max.bytes`) file groups, sorted by `sort.columns` when set. At most
`max.num.groups` groups per plan. The plan is `<t>.replacecommit.requested` =
`HoodieRequestedReplaceMetadata{operationType: "CLUSTER", clusteringPlan}` (§7.3).
"""

from __future__ import annotations

import math
import re

from pyhudi.config.clustering import ClusteringConfig
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import FileSlice
from pyhudi.model.plans import ClusteringGroup, ClusteringPlan
from pyhudi.table.context import TableContext


def select_partitions(partitions: list[str], config: ClusteringConfig) -> list[str]:
    chosen = sorted(partitions)
    if config.regex:
        chosen = [p for p in chosen if re.fullmatch(config.regex, p)]
    if config.filter_mode == "SELECTED_PARTITIONS":
        chosen = [p for p in chosen if p in config.selected]
    elif config.filter_mode in ("RECENT_DAYS", "DAY_ROLLING"):
        newest_first = sorted(chosen, reverse=True)[
            config.skip_latest : config.skip_latest + config.lookback
        ]
        chosen = sorted(newest_first)
    return chosen


def plan_clustering(ctx: TableContext, config: ClusteringConfig) -> ClusteringPlan | None:
    blocked = set(pending_compaction_operations(ctx.active)) | set(
        pending_clustering_file_groups(ctx.active)
    )
    view = ctx.view()
    by_partition: dict[str, list[FileSlice]] = {}
    for s in view.latest_file_slices(partitions=select_partitions(view.partition_paths(), config)):
        if (s.partition_path, s.file_id) in blocked or s.base_file is None:
            continue
        if s.base_file.size_bytes < config.small_file_limit:
            by_partition.setdefault(s.partition_path, []).append(s)
    groups: list[ClusteringGroup] = []
    for partition in sorted(by_partition):
        groups.extend(_groups(partition, by_partition[partition], config))
    groups = groups[: config.max_num_groups]
    return ClusteringPlan(tuple(groups), config.sort_columns) if groups else None


def _groups(
    partition: str, slices: list[FileSlice], config: ClusteringConfig
) -> list[ClusteringGroup]:
    ordered = sorted(slices, key=lambda s: s.total_size_bytes, reverse=True)
    groups: list[tuple[list[FileSlice], int]] = []
    current: list[FileSlice] = []
    size = 0
    for s in ordered:
        if current and size + s.total_size_bytes > config.max_bytes_per_group:
            groups.append((current, size))
            current, size = [], 0
        current.append(s)
        size += s.total_size_bytes
    if current:
        groups.append((current, size))
    useful = [
        (g, b) for g, b in groups if len(g) > 1 or (config.single_group and config.sort_columns)
    ]
    return [
        ClusteringGroup(
            partition,
            tuple(g),
            max(1, math.ceil(b / config.target_file_max_bytes)),
            {"TOTAL_FILES": float(len(g)), "TOTAL_SIZE": float(b)},
        )
        for g, b in useful
    ]
