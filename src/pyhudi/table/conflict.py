"""Write conflicts under OCC: Hudi's `SimpleConcurrentFileWritesConflictResolutionStrategy`.

Candidates for a write committing instant `t` (checked under the table lock):
* commits, deltacommits and replacecommits completed since the write started (every completed
  one not on the timeline the write saw at its start: Hudi's "completed after the last successful
  instant" plus "pending at start, completed since");
* compaction and clustering plans still pending that were scheduled after `t` started.

Each operation mutates a set of (partition, file id) pairs: a commit's write stats (and, pyhudi
being stricter than Hudi, the file groups a replacecommit replaced); a pending compaction's or
clustering's planned file groups. Overlap is a conflict, except with a compaction that started
before `t` (`t`'s log files went to the slice after it). With the bucket index the pairs are
(partition, bucket) (`BucketIndexConcurrentFileWritesConflictResolutionStrategy`): two writers that
each create the same bucket's file group conflict although their file ids differ.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant
from pyhudi.timeline.active import ActiveTimeline

FileGroupId = tuple[str, str]


@dataclass(frozen=True)
class ConcurrentOperation:
    """One operation that ran alongside a write, with the file groups it mutated."""

    instant: Instant
    operation: str
    file_groups: frozenset[FileGroupId]


@dataclass(frozen=True)
class Conflict:
    other: ConcurrentOperation
    file_groups: frozenset[FileGroupId]

    def describe(self) -> str:
        shown = ", ".join(f"{p or '<root>'}/{f}" for p, f in sorted(self.file_groups)[:5])
        more = f" (+{len(self.file_groups) - 5} more)" if len(self.file_groups) > 5 else ""
        state = "completed" if self.other.instant.is_completed else "pending"
        return (
            f"{state} {self.other.operation.lower()} {self.other.instant.time} "
            f"({self.other.instant.action.value}) touched the same file groups: {shown}{more}"
        )


def mutated_file_groups(metadata: CommitMetadata) -> frozenset[FileGroupId]:
    written = {(s.partition_path or "", s.file_id) for s in metadata.write_stats() if s.file_id}
    return frozenset(written | metadata.replaced_file_ids())


def bucket_key(group: FileGroupId) -> FileGroupId:
    """(partition, bucket number): a bucket index file id starts with its 8-digit bucket."""
    partition, file_id = group
    prefix = file_id[:8]
    return (partition, str(int(prefix))) if prefix.isdigit() else group


def _plan_file_groups(active: ActiveTimeline, instant: Instant) -> frozenset[FileGroupId]:
    plan = read_requested_plan(active, instant)
    if instant.action is Action.COMPACTION:
        operations = plan.get("operations") or []
        return frozenset((op.get("partitionPath") or "", op["fileId"]) for op in operations)
    clustering = plan.get("clusteringPlan") or {}
    return frozenset(
        (s.get("partitionPath") or "", s["fileId"])
        for group in clustering.get("inputGroups") or []
        for s in group.get("slices") or []
    )


def operation_of(active: ActiveTimeline, instant: Instant) -> ConcurrentOperation:
    if instant.is_completed:
        metadata = active.commit_metadata(instant)
        return ConcurrentOperation(
            instant, metadata.operation_type.value, mutated_file_groups(metadata)
        )
    operation = "COMPACT" if instant.action is Action.COMPACTION else "CLUSTER"
    return ConcurrentOperation(instant, operation, _plan_file_groups(active, instant))


def candidate_instants(
    active: ActiveTimeline, current: Instant, completed_at_start: frozenset[str]
) -> list[Instant]:
    timeline = active.timeline
    completed = [
        i for i in timeline.commits() if i.time not in completed_at_start and i.time != current.time
    ]
    pending_services = [
        i
        for i in timeline.pending().with_actions(Action.COMPACTION, Action.REPLACE_COMMIT)
        if i.time > current.time and _is_service_plan(active, i)
    ]
    return completed + pending_services


def _is_service_plan(active: ActiveTimeline, instant: Instant) -> bool:
    if instant.action is Action.COMPACTION:
        return True
    return read_requested_plan(active, instant).get("operationType") == "CLUSTER"


def find_conflict(
    active: ActiveTimeline,
    current: Instant,
    mutated: Iterable[FileGroupId],
    completed_at_start: frozenset[str],
    *,
    by_bucket: bool = False,
) -> Conflict | None:
    """The first concurrent operation that overlaps `mutated`, or None (Hudi's `hasConflict`)."""
    key = bucket_key if by_bucket else (lambda g: g)
    ours = {key(g): g for g in mutated}
    if not ours:
        return None
    for instant in candidate_instants(active, current, completed_at_start):
        other = operation_of(active, instant)
        if other.operation == WriteOperationType.COMPACT.value and instant.time < current.time:
            continue  # resolveConflict: an earlier compaction does not conflict
        shared = frozenset(ours[k] for k in {key(g) for g in other.file_groups} if k in ours)
        if shared:
            return Conflict(other, shared)
    return None
