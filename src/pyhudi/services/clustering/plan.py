"""Clustering planning (pure; Hudi's `SparkSizeBasedClusteringPlanStrategy`, as Hudi 0.15 plans
table version 6 and Hudi 1.2 versions 8 and 9).

* Partitions: every partition (`partition.selected` instead, when set), then the regex and the
  filter mode. At version 8+ with `hoodie.table.services.incremental.enabled` (Hudi 1.2's default),
  once a clustering has completed only the partitions written since it began, plus those its plan
  left out (`missingSchedulePartitions`); none written: no plan.
* Slices: each file group's latest slice, under no pending compaction, log compaction or
  clustering, whose base file (0 bytes without one) is below `small.file.limit`. Log files do not
  count and go with their slice.
* Groups, per partition: slices by base file size, largest first (no base file:
  `hoodie.parquet.max.file.size`), filled up to `max.bytes.per.group`; each writes
  ceil(group bytes / `target.file.max.bytes`) file groups; at most `max.num.groups` per partition
  and per plan. A group of one slice is kept when `single.group.clustering.enabled` (the default)
  or sort columns are set; else at 0.15 only when the byte cap closed it, at 1.2 only when it
  writes more than one file group.

The plan is `<t>.replacecommit.requested` (`<t>.clustering.requested` at version 8+) =
`HoodieRequestedReplaceMetadata{operationType: "CLUSTER", clusteringPlan}` (§7.3).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from pyhudi.config.clustering import ClusteringConfig
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Action, Instant, State
from pyhudi.model.plans import ClusteringGroup, ClusteringPlan
from pyhudi.table.context import TableContext

Sizer = Callable[[FileSlice], int]

#: Table version from which Hudi 1.2's rules apply (incremental partitions, the group filter).
HUDI_1_RULES = 8


def select_partitions(partitions: list[str], config: ClusteringConfig) -> list[str]:
    """`partition.selected` when set (no regex then), else the partitions matching the regex;
    then the filter mode: SELECTED_PARTITIONS keeps `cluster.begin.partition` to
    `cluster.end.partition` (inclusive), RECENT_DAYS the newest `lookback` after skipping
    `skipfromlatest`."""
    if config.selected:
        chosen = sorted(config.selected)
    else:
        chosen = sorted(p for p in partitions if not config.regex or re.fullmatch(config.regex, p))
    if config.filter_mode == "SELECTED_PARTITIONS":
        chosen = [
            p
            for p in chosen
            if (config.begin_partition is None or p >= config.begin_partition)
            and (config.end_partition is None or p <= config.end_partition)
        ]
    elif config.filter_mode in ("RECENT_DAYS", "DAY_ROLLING"):
        newest_first = sorted(chosen, reverse=True)[
            config.skip_latest : config.skip_latest + config.lookback
        ]
        chosen = sorted(newest_first)
    return chosen


def plan_clustering(ctx: TableContext, config: ClusteringConfig) -> ClusteringPlan | None:
    hudi_1 = ctx.config.version >= HUDI_1_RULES
    partitions = _candidate_partitions(ctx, config, incremental=hudi_1 and config.incremental)
    if not partitions:
        return None
    eligible = _eligible_slices(ctx, select_partitions(partitions, config), config)
    groups: list[ClusteringGroup] = []
    missing: list[str] = []
    for partition in sorted(eligible):
        planned, cut = _groups(partition, eligible[partition], config, hudi_1=hudi_1)
        if cut or len(planned) > config.max_num_groups:
            missing.append(partition)
        groups.extend(planned[: config.max_num_groups])
    missing += [g.partition_path for g in groups[config.max_num_groups :]]
    groups = groups[: config.max_num_groups]
    if not groups:
        return None
    left_out = tuple(dict.fromkeys(missing)) if hudi_1 and config.incremental else ()
    return ClusteringPlan(tuple(groups), config.sort_columns, left_out)


def _candidate_partitions(
    ctx: TableContext, config: ClusteringConfig, *, incremental: bool
) -> list[str]:
    """Every partition, or (Hudi 1.2's incremental table services) those written since the last
    completed clustering began plus the partitions its plan left out."""
    if incremental and not config.selected:
        last = _last_clustering(ctx)
        if last is not None:
            return sorted(_written_since(ctx, last) | set(_left_out_by(ctx, last)))
    return ctx.view().partition_paths()


def _last_clustering(ctx: TableContext) -> Instant | None:
    active = ctx.active
    for instant in reversed(active.timeline.commits().with_actions(Action.REPLACE_COMMIT).instants):
        if active.commit_metadata(instant).operation_type is WriteOperationType.CLUSTER:
            return instant
    return None


def _written_since(ctx: TableContext, clustering: Instant) -> set[str]:
    """Partitions of the data commits (deltacommits on merge-on-read, commits on copy-on-write,
    and replacecommits) that completed after `clustering` was requested."""
    data = Action.DELTA_COMMIT if ctx.config.is_merge_on_read else Action.COMMIT
    written: set[str] = set()
    for instant in ctx.active.timeline.commits().with_actions(data, Action.REPLACE_COMMIT):
        completed = instant.completion_time or instant.time
        if instant.time != clustering.time and completed >= clustering.time:
            written |= set(ctx.active.commit_metadata(instant).partition_to_write_stats)
    return written


def _left_out_by(ctx: TableContext, clustering: Instant) -> Iterable[str]:
    """The `missingSchedulePartitions` of a completed clustering's plan (a `clustering` instant at
    version 8+; `replacecommit` for one planned before an upgrade)."""
    active = ctx.active
    for action in (Action.CLUSTERING, Action.REPLACE_COMMIT):
        requested = Instant(clustering.time, action, State.REQUESTED)
        if active.storage.exists(active.instant_path(requested)):
            plan = read_requested_plan(active, requested).get("clusteringPlan") or {}
            return plan.get("missingSchedulePartitions") or ()
    return ()


def _eligible_slices(
    ctx: TableContext, partitions: list[str], config: ClusteringConfig
) -> dict[str, list[FileSlice]]:
    blocked = (
        set(pending_compaction_operations(ctx.active))
        | set(pending_clustering_file_groups(ctx.active))
        | _under_log_compaction(ctx)
    )
    by_partition: dict[str, list[FileSlice]] = {}
    for s in ctx.view().latest_file_slices(partitions=partitions):
        if (s.partition_path, s.file_id) in blocked:
            continue
        if (s.base_file.size_bytes if s.base_file else 0) < config.small_file_limit:
            by_partition.setdefault(s.partition_path, []).append(s)
    return by_partition


def _under_log_compaction(ctx: TableContext) -> set[tuple[str, str]]:
    groups = set()
    for instant in ctx.active.timeline.pending_log_compactions():
        for operation in read_requested_plan(ctx.active, instant).get("operations") or []:
            groups.add((operation.get("partitionPath") or "", operation["fileId"]))
    return groups


def _groups(
    partition: str, slices: list[FileSlice], config: ClusteringConfig, *, hudi_1: bool
) -> tuple[list[ClusteringGroup], bool]:
    """The partition's groups, and whether `max.num.groups` stopped the packing early."""
    size = _sizer(config)
    ordered = sorted(slices, key=size, reverse=True)
    closed: list[list[FileSlice]] = []
    current: list[FileSlice] = []
    total, cut = 0, False
    for s in ordered:
        if current and total + size(s) > config.max_bytes_per_group:
            closed.append(current)
            current, total = [], 0
            if len(closed) >= config.max_num_groups:
                cut = True
                break
        current.append(s)
        total += size(s)
    single = config.single_group or bool(config.sort_columns)
    if hudi_1:  # 1.2 filters every group alike
        kept = [g for g in [*closed, current] if g and _keeps(g, config, size, single)]
    else:  # 0.15 filters only the last group
        kept = closed + ([current] if current and (len(current) > 1 or single) else [])
    return [_group(partition, g, config, size) for g in kept], cut


def _keeps(group: list[FileSlice], config: ClusteringConfig, size: Sizer, single: bool) -> bool:
    return len(group) > 1 or single or _outputs(group, config, size) > 1


def _sizer(config: ClusteringConfig) -> Sizer:
    """A slice's bytes for packing: its base file's (`max.file.size` without one); logs do not count."""

    def size(s: FileSlice) -> int:
        return s.base_file.size_bytes if s.base_file else config.parquet_max_file_bytes

    return size


def _outputs(group: list[FileSlice], config: ClusteringConfig, size: Sizer) -> int:
    return max(1, math.ceil(sum(size(s) for s in group) / config.target_file_max_bytes))


def _group(
    partition: str, group: list[FileSlice], config: ClusteringConfig, size: Sizer
) -> ClusteringGroup:
    total = sum(size(s) for s in group)
    return ClusteringGroup(
        partition,
        tuple(group),
        _outputs(group, config, size),
        {"TOTAL_FILES": float(len(group)), "TOTAL_SIZE": float(total)},
    )
