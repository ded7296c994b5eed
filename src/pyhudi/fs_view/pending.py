"""Pending table services as the file-system view sees them: compaction and clustering plans."""

from __future__ import annotations

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.model.instant import Action, Instant, State
from pyhudi.timeline.active import ActiveTimeline


def pending_compaction_operations(active: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> compaction instant, for every pending compaction plan."""
    result: dict[tuple[str, str], str] = {}
    for instant in active.timeline.pending_compactions():
        plan = read_requested_plan(active, instant)
        for operation in plan.get("operations") or []:
            result[(operation.get("partitionPath") or "", operation["fileId"])] = instant.time
    return result


def pending_clustering_file_groups(active: ActiveTimeline) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> replacecommit instant, for every pending clustering plan."""
    result: dict[tuple[str, str], str] = {}
    pending = active.timeline.pending().with_actions(Action.REPLACE_COMMIT, Action.CLUSTERING)
    for instant in pending:
        requested = read_requested_plan(active, instant)
        if not requested:
            continue
        if instant.action is Action.REPLACE_COMMIT and requested.get("operationType") != "CLUSTER":
            continue
        plan = requested.get("clusteringPlan") or {}
        for group in plan.get("inputGroups") or []:
            for file_slice in group.get("slices") or []:
                result[(file_slice.get("partitionPath") or "", file_slice["fileId"])] = instant.time
    return result


def read_requested_plan(active: ActiveTimeline, instant: Instant) -> dict:
    data = active.storage.read_bytes(
        active.instant_path(Instant(instant.time, instant.action, State.REQUESTED))
    )
    if not data:
        return {}
    return decode_container(data, what=f"plan of {instant}")
