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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.config import clustering as ckeys
from pyhudi.fs_view import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.model.file import FileSlice
from pyhudi.table.context import TableContext


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

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ClusteringConfig:
        selected = ckeys.PARTITION_SELECTED.get(options)
        return cls(
            small_file_limit=ckeys.SMALL_FILE_LIMIT.get(options),
            target_file_max_bytes=ckeys.TARGET_FILE_MAX_BYTES.get(options),
            max_bytes_per_group=ckeys.MAX_BYTES_PER_GROUP.get(options),
            max_num_groups=ckeys.MAX_NUM_GROUPS.get(options),
            sort_columns=ckeys.SORT_COLUMNS.get(options) or (),
            single_group=ckeys.SINGLE_GROUP_CLUSTERING.get(options),
            filter_mode=ckeys.PARTITION_FILTER_MODE.get(options),
            selected=tuple(p.strip() for p in selected.split(",") if p.strip()) if selected else (),
            regex=ckeys.PARTITION_REGEX.get(options),
            lookback=ckeys.LOOKBACK_PARTITIONS.get(options),
            skip_latest=ckeys.SKIP_LATEST_PARTITIONS.get(options),
        )


@dataclass(frozen=True)
class ClusteringGroup:
    partition_path: str
    slices: tuple[FileSlice, ...]
    num_output_file_groups: int
    metrics: Mapping[str, float] = field(default_factory=dict)

    @property
    def file_ids(self) -> tuple[str, ...]:
        return tuple(s.file_id for s in self.slices)


@dataclass(frozen=True)
class ClusteringPlan:
    groups: tuple[ClusteringGroup, ...]
    sort_columns: tuple[str, ...] = ()

    def to_avro(self, base_path: str) -> dict[str, Any]:
        params = {ckeys.SORT_COLUMNS.key: ",".join(self.sort_columns)} if self.sort_columns else {}
        plan = {
            "inputGroups": [_group_avro(g, base_path) for g in self.groups],
            "strategy": {
                "strategyClassName": ckeys.EXECUTION_STRATEGY_CLASS,
                "strategyParams": params,
                "version": 1,
            },
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": True,
        }
        return {
            "operationType": "CLUSTER",
            "clusteringPlan": plan,
            "extraMetadata": {},
            "version": 1,
        }


def _group_avro(group: ClusteringGroup, base_path: str) -> dict[str, Any]:
    slices = []
    for s in group.slices:
        base = f"{base_path}/{s.base_file.relative_path}" if s.base_file else None
        slices.append(
            {
                "dataFilePath": base,  # full path (HoodieSliceInfo)
                "deltaFilePaths": [lf.file_name for lf in s.log_files],
                "fileId": s.file_id,
                "partitionPath": s.partition_path,
                "bootstrapFilePath": None,
                "version": 1,
            }
        )
    return {
        "slices": slices,
        "metrics": dict(group.metrics),
        "numOutputFileGroups": group.num_output_file_groups,
        "extraMetadata": None,
        "version": 1,
    }


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


def group_from_avro(record: Mapping[str, Any], base_path: str) -> ClusteringGroup:
    """A planned group, with its slices rebuilt from the plan (base file and log names)."""
    slices = []
    for info in record.get("slices") or []:
        partition = info.get("partitionPath") or ""
        data_file = info.get("dataFilePath")
        base = parse_base_file(partition, data_file.rsplit("/", 1)[-1]) if data_file else None
        logs = tuple(
            log
            for log in (
                parse_log_file(partition, name.rsplit("/", 1)[-1])
                for name in info.get("deltaFilePaths") or ()
            )
            if log is not None
        )
        instant = base.instant_time if base else (logs[0].base_instant_time if logs else "")
        slices.append(FileSlice(partition, info["fileId"], instant, base, logs))  # type: ignore[arg-type]
    partition = slices[0].partition_path if slices else ""
    return ClusteringGroup(
        partition,
        tuple(slices),
        int(record.get("numOutputFileGroups") or 1),
        dict(record.get("metrics") or {}),
    )
