"""Avro records of table service plans (`HoodieCompactionPlan`, `HoodieRequestedReplaceMetadata`
with a `HoodieClusteringPlan`, `HoodieCleanerPlan`), as Python dicts for `avro_schemas`.

| plan        | record (reference §7)                    | paths in the record                       |
|-------------|------------------------------------------|-------------------------------------------|
| compaction  | `HoodieCompactionPlan` v2                | file names (v1: full paths, read back)    |
| clustering  | `HoodieRequestedReplaceMetadata` v1      | base file: full path; log files: names    |
| clean       | `HoodieCleanerPlan` v2                   | full paths (v1: names, resolved on read)  |
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.config import clustering as clustering_keys
from pyhudi.config.clean import CleaningPolicy
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.model.plans import (
    CleanFileInfo,
    CleanPlan,
    ClusteringGroup,
    ClusteringPlan,
    CompactionOperation,
    CompactionPlan,
)

#: `HoodieCompactionPlan` version written (file names, not full paths).
COMPACTION_PLAN_VERSION = 2


def clean_plan_to_avro(plan: CleanPlan) -> dict[str, Any]:
    """The `HoodieCleanerPlan` record (the deprecated name-only map is written empty, as Hudi)."""
    earliest = plan.earliest_instant_to_retain
    return {
        "earliestInstantToRetain": None
        if earliest is None
        else {"timestamp": earliest.time, "action": earliest.action.value, "state": "COMPLETED"},
        "lastCompletedCommitTimestamp": plan.last_completed_commit_time,
        "policy": plan.policy.value,
        "filesToBeDeletedPerPartition": {},
        "version": plan.version,
        "filePathsToBeDeletedPerPartition": {
            partition: [
                {"filePath": f.file_path, "isBootstrapBaseFile": f.is_bootstrap_base_file}
                for f in files
            ]
            for partition, files in plan.files_per_partition.items()
        },
        "partitionsToBeDeleted": list(plan.partitions_to_delete),
    }


def clean_plan_from_avro(record: Mapping[str, Any], base_uri: str) -> CleanPlan:
    """A plan read back; version 1 plans (file names only) are resolved against `base_uri`."""
    earliest = record.get("earliestInstantToRetain")
    files = {
        partition: tuple(
            CleanFileInfo(f["filePath"], bool(f.get("isBootstrapBaseFile"))) for f in infos or ()
        )
        for partition, infos in (record.get("filePathsToBeDeletedPerPartition") or {}).items()
    }
    if not files:  # CleanPlanV1MigrationHandler: names relative to the partition folder
        for partition, names in (record.get("filesToBeDeletedPerPartition") or {}).items():
            folder = posixpath.join(base_uri, partition) if partition else base_uri
            files[partition] = tuple(CleanFileInfo(posixpath.join(folder, n)) for n in names)
    return CleanPlan(
        earliest_instant_to_retain=None
        if not earliest
        else Instant(
            InstantTime(earliest["timestamp"]), Action(earliest["action"]), State.COMPLETED
        ),
        last_completed_commit_time=record.get("lastCompletedCommitTimestamp") or "",
        policy=CleaningPolicy(record["policy"]),
        files_per_partition=files,
        partitions_to_delete=tuple(record.get("partitionsToBeDeleted") or ()),
        version=record.get("version") or 1,
    )


def clustering_group_to_avro(group: ClusteringGroup, base_path: str) -> dict[str, Any]:
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


def clustering_group_from_avro(record: Mapping[str, Any], base_path: str) -> ClusteringGroup:
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


# ---- compaction -------------------------------------------------------------------------------


def compaction_operation_to_avro(operation: CompactionOperation) -> dict[str, Any]:
    return {
        "baseInstantTime": operation.base_instant,
        "deltaFilePaths": list(operation.log_files),
        "dataFilePath": operation.base_file,
        "fileId": operation.file_id,
        "partitionPath": operation.partition_path,
        "metrics": dict(operation.metrics),
        "bootstrapFilePath": None,
    }


def compaction_operation_from_avro(record: Mapping[str, Any]) -> CompactionOperation:
    data_file = record.get("dataFilePath")
    return CompactionOperation(
        partition_path=record.get("partitionPath") or "",
        file_id=record["fileId"],
        base_instant=record.get("baseInstantTime") or "",
        base_file=data_file.rsplit("/", 1)[-1] if data_file else None,  # version 1: full paths
        log_files=tuple(p.rsplit("/", 1)[-1] for p in record.get("deltaFilePaths") or ()),
        metrics=dict(record.get("metrics") or {}),
    )


def compaction_plan_to_avro(plan: CompactionPlan) -> dict[str, Any]:
    return {
        "operations": [compaction_operation_to_avro(op) for op in plan.operations],
        "extraMetadata": None,
        "version": COMPACTION_PLAN_VERSION,
        "strategy": None,
        "preserveHoodieMetadata": True,
    }


def compaction_plan_from_avro(record: Mapping[str, Any]) -> CompactionPlan:
    return CompactionPlan(
        tuple(compaction_operation_from_avro(op) for op in record.get("operations") or ())
    )


# ---- clustering -------------------------------------------------------------------------------


def clustering_plan_to_avro(plan: ClusteringPlan, base_path: str) -> dict[str, Any]:
    params = (
        {clustering_keys.SORT_COLUMNS.key: ",".join(plan.sort_columns)} if plan.sort_columns else {}
    )
    clustering_plan = {
        "inputGroups": [clustering_group_to_avro(g, base_path) for g in plan.groups],
        "strategy": {
            "strategyClassName": clustering_keys.EXECUTION_STRATEGY_CLASS,
            "strategyParams": params,
            "version": 1,
        },
        "extraMetadata": {},
        "version": 1,
        "preserveHoodieMetadata": True,
        # Hudi 1.2's schema only (table versions 8 and 9); 0.15's has no such field.
        "missingSchedulePartitions": list(plan.missing_partitions) or None,
    }
    return {
        "operationType": "CLUSTER",
        "clusteringPlan": clustering_plan,
        "extraMetadata": {},
        "version": 1,
    }
