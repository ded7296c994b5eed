"""Timelines for archival tests: real timeline files (JSON commit metadata, Avro clean, rollback,
savepoint and replace metadata) written through `ActiveTimeline`, data files only where a test
needs them on storage. No Spark.
"""

from __future__ import annotations

from pathlib import Path

from pyhudi.codec.avro_schemas import encode_container
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import base_file_name
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext

SCHEMA = (
    '{"type":"record","name":"t_record","namespace":"hoodie.t","fields":'
    '[{"name":"id","type":["null","string"],"default":null}]}'
)


def table_props(table_type: str = "COPY_ON_WRITE", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "t",
        "hoodie.database.name": "default",
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.partition.fields": "p",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.archivelog.folder": "archived",
        **extra,
    }


def new_table(root: Path, table_type: str = "COPY_ON_WRITE", **extra: str) -> TableContext:
    return TableContext.create(str(root), table_props(table_type, **extra))


def at(n: int) -> InstantTime:
    """The n-th instant time of a test timeline: `20240101000000000` + n milliseconds."""
    return InstantTime(str(20240101000000000 + n))


def commit_metadata(
    time: str,
    *,
    partition: str = "p=1",
    file_id: str | None = None,
    operation: WriteOperationType = WriteOperationType.UPSERT,
    replaced: dict[str, tuple[str, ...]] | None = None,
    compacted: bool = False,
) -> CommitMetadata:
    file_id = file_id or f"fg{time[-4:]}-0"
    name = base_file_name(file_id, "0-1-2", time)
    stat = WriteStat(
        file_id=file_id,
        path=f"{partition}/{name}",
        partition_path=partition,
        num_writes=10,
        num_inserts=7,
        num_update_writes=3,
        total_write_bytes=4096,
        file_size_bytes=4096,
        total_log_records=5 if compacted else 0,
    )
    return CommitMetadata(
        partition_to_write_stats={partition: (stat,)},
        operation_type=operation,
        extra_metadata={"schema": SCHEMA},
        compacted=compacted,
        partition_to_replace_file_ids=replaced,
    )


def commit(
    ctx: TableContext, time: str, action: Action = Action.COMMIT, **kwargs: object
) -> CommitMetadata:
    """requested (empty; Avro for replacecommit) -> inflight (workload JSON) -> completed (JSON)."""
    metadata = commit_metadata(time, **kwargs)  # type: ignore[arg-type]
    requested_content = b""
    if action is Action.REPLACE_COMMIT:
        requested_content = encode_container(
            "HoodieRequestedReplaceMetadata",
            {
                "operationType": metadata.operation_type.value,
                "clusteringPlan": None,
                "extraMetadata": None,
                "version": 1,
            },
        )
    requested = ctx.active.create_requested(time, action, requested_content)
    workload = CommitMetadata(operation_type=metadata.operation_type)
    inflight = ctx.active.transition_to_inflight(requested, encode_commit_metadata(workload))
    ctx.active.complete(inflight, encode_commit_metadata(metadata))
    return metadata


def commits(ctx: TableContext, first: int, last: int, **kwargs: object) -> list[CommitMetadata]:
    """Commits at `at(first)` .. `at(last)`, both included."""
    return [commit(ctx, at(n), **kwargs) for n in range(first, last + 1)]  # type: ignore[arg-type]


def pending(ctx: TableContext, time: str, action: Action = Action.COMMIT) -> Instant:
    requested = ctx.active.create_requested(time, action, b"")
    return ctx.active.transition_to_inflight(requested, b"")


def clean(ctx: TableContext, time: str, earliest_commit_to_retain: str) -> None:
    plan = {
        "earliestInstantToRetain": {
            "timestamp": earliest_commit_to_retain,
            "action": "commit",
            "state": "COMPLETED",
        },
        "lastCompletedCommitTimestamp": earliest_commit_to_retain,
        "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {},
        "partitionsToBeDeleted": [],
    }
    metadata = {
        "startCleanTime": time,
        "timeTakenInMillis": 12,
        "totalFilesDeleted": 0,
        "earliestCommitToRetain": earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": earliest_commit_to_retain,
        "partitionMetadata": {},
        "version": 2,
        "bootstrapPartitionMetadata": {},
    }
    plan_bytes = encode_container("HoodieCleanerPlan", plan)
    requested = ctx.active.create_requested(time, Action.CLEAN, plan_bytes)
    inflight = ctx.active.transition_to_inflight(requested, plan_bytes)
    ctx.active.complete(inflight, encode_container("HoodieCleanMetadata", metadata))


def rollback(ctx: TableContext, time: str, target: str) -> None:
    metadata = {
        "startRollbackTime": time,
        "timeTakenInMillis": 3,
        "totalFilesDeleted": 0,
        "commitsRollback": [target],
        "partitionMetadata": {},
        "version": 1,
        "instantsRollback": [{"commitTime": target, "action": "commit"}],
    }
    requested = ctx.active.create_requested(time, Action.ROLLBACK, b"")
    inflight = ctx.active.transition_to_inflight(requested, b"")
    ctx.active.complete(inflight, encode_container("HoodieRollbackMetadata", metadata))


def savepoint(ctx: TableContext, time: str) -> None:
    metadata = {
        "savepointedBy": "test",
        "savepointedAt": 1,
        "comments": "",
        "partitionMetadata": {},
        "version": 1,
    }
    inflight = ctx.active.transition_to_inflight(Instant(time, Action.SAVEPOINT, State.REQUESTED))  # type: ignore[arg-type]
    ctx.active.complete(inflight, encode_container("HoodieSavepointMetadata", metadata))


def compaction(ctx: TableContext, time: str, file_id: str = "fg0001-0") -> CommitMetadata:
    """A compaction: `.compaction.requested` (Avro plan), `.compaction.inflight`, `.commit`."""
    plan = {
        "operations": [
            {
                "baseInstantTime": at(1),
                "deltaFilePaths": [f".{file_id}_{at(1)}.log.1_0-1-2"],
                "dataFilePath": base_file_name(file_id, "0-1-2", at(1)),
                "fileId": file_id,
                "partitionPath": "p=1",
                "metrics": {"TOTAL_LOG_FILES": 1.0},
                "bootstrapFilePath": None,
            }
        ],
        "extraMetadata": None,
        "version": 2,
        "strategy": None,
        "preserveHoodieMetadata": True,
    }
    metadata = commit_metadata(
        time, file_id=file_id, operation=WriteOperationType.COMPACT, compacted=True
    )
    requested = ctx.active.create_requested(
        time, Action.COMPACTION, encode_container("HoodieCompactionPlan", plan)
    )
    inflight = ctx.active.transition_to_inflight(requested, b"")
    ctx.active.complete(inflight, encode_commit_metadata(metadata))
    return metadata


def data_file(ctx: TableContext, partition: str, file_id: str, time: str) -> Path:
    """A placeholder base file (only its name matters to the archival checks)."""
    path = Path(ctx.partition_path(partition)) / base_file_name(file_id, "0-1-2", time)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1")
    return path


def hoodie_files(ctx: TableContext) -> list[str]:
    return sorted(p.name for p in Path(ctx.meta_path).iterdir() if p.is_file())
