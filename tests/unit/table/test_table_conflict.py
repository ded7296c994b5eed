"""OCC conflict resolution (Hudi's simple file-groups strategy), on hand-built timelines."""

from __future__ import annotations

from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.conflict import find_conflict


def _start(tb: TimelineBuilder) -> tuple[Instant, frozenset[str]]:
    """Our write: its instant and the completed commits it saw when it started."""
    seen = frozenset(tb.ctx.active.reload().timeline.commits().times())
    time = tb.ctx.new_instant_time()
    requested = tb.ctx.active.create_requested(time, Action.COMMIT)
    return tb.ctx.active.transition_to_inflight(requested), seen


def _conflict(tb, ours, seen, groups, **kw):  # type: ignore[no-untyped-def]
    tb.ctx.active.reload()
    return find_conflict(tb.ctx.active, ours, groups, seen, **kw)


def test_commit_completed_since_start_on_same_file_group_conflicts(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"), Base("p=1", "b"))
    ours, seen = _start(tb)
    other = tb.write(Base("p=1", "a"))
    conflict = _conflict(tb, ours, seen, [("p=1", "a")])
    assert conflict is not None
    assert conflict.other.instant.time == other
    assert conflict.file_groups == frozenset({("p=1", "a")})
    assert other in conflict.describe() and "p=1/a" in conflict.describe()


def test_disjoint_file_groups_and_new_file_groups_do_not_conflict(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"), Base("p=1", "b"))
    ours, seen = _start(tb)
    tb.write(Base("p=1", "b"), Base("p=1", "new-1"))
    assert _conflict(tb, ours, seen, [("p=1", "a"), ("p=1", "new-2")]) is None


def test_same_file_id_in_another_partition_does_not_conflict(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    ours, seen = _start(tb)
    tb.write(Base("p=2", "a"))
    assert _conflict(tb, ours, seen, [("p=1", "a")]) is None


def test_commits_completed_before_start_are_not_candidates(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"))
    ours, seen = _start(tb)
    assert _conflict(tb, ours, seen, [("p=1", "a")]) is None


def test_write_started_earlier_but_completed_since_conflicts(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"))
    early = tb.ctx.new_instant_time()
    tb.ctx.active.transition_to_inflight(tb.ctx.active.create_requested(early, Action.COMMIT))
    ours, seen = _start(tb)
    # The earlier writer completes after our start (its time is smaller than ours).
    tb.ctx.active.complete(
        Instant(early, Action.COMMIT, State.INFLIGHT), _metadata_bytes([("p=1", "a")])
    )
    conflict = _conflict(tb, ours, seen, [("p=1", "a")])
    assert conflict is not None and conflict.other.instant.time == early


def _metadata_bytes(groups):  # type: ignore[no-untyped-def]
    from pyhudi.codec.commit_metadata import encode_commit_metadata
    from pyhudi.model.commit import CommitMetadata, WriteStat

    stats = {}
    for partition, file_id in groups:
        stats.setdefault(partition, []).append(
            WriteStat(
                file_id=file_id, path=f"{partition}/{file_id}.parquet", partition_path=partition
            )
        )
    return encode_commit_metadata(
        CommitMetadata(
            partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
            operation_type=WriteOperationType.UPSERT,
        )
    )


def test_replacecommit_replacing_our_file_group_conflicts(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"))
    ours, seen = _start(tb)
    tb.write(
        Base("p=1", "c"),
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.CLUSTER,
        replaced={"p=1": ["a"]},
    )
    conflict = _conflict(tb, ours, seen, [("p=1", "a")])
    assert conflict is not None and conflict.other.operation == "CLUSTER"


def test_pending_clustering_scheduled_after_start_conflicts_before_not(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"), Base("p=1", "b"))
    tb.pending_clustering(("p=1", "b"))  # scheduled before our write: the write planned around it
    ours, seen = _start(tb)
    assert _conflict(tb, ours, seen, [("p=1", "b")]) is None
    later = tb.pending_clustering(("p=1", "a"))
    conflict = _conflict(tb, ours, seen, [("p=1", "a")])
    assert conflict is not None
    assert conflict.other.instant.time == later and not conflict.other.instant.is_completed


def test_compaction_before_our_start_does_not_conflict_after_it_does(tmp_path):
    tb = TimelineBuilder.create(tmp_path, "MERGE_ON_READ")
    tb.write(Base("p=1", "a"), Base("p=1", "b"))
    tb.write(Log("p=1", "a"), Log("p=1", "b"))
    early = tb.compaction(("p=1", "a"), execute=False)
    ours, seen = _start(tb)
    # The earlier compaction completes while we write: our logs went to its new slice.
    tb.ctx.active.complete(
        tb.ctx.active.transition_to_inflight(Instant(early, Action.COMPACTION, State.REQUESTED)),
        _metadata_bytes([("p=1", "a")]).replace(b'"UPSERT"', b'"COMPACT"'),
    )
    assert _conflict(tb, ours, seen, [("p=1", "a")]) is None
    tb.compaction(("p=1", "b"), execute=False)
    conflict = _conflict(tb, ours, seen, [("p=1", "b")])
    assert conflict is not None and conflict.other.operation == "COMPACT"


def test_bucket_index_conflicts_on_the_same_bucket_with_different_file_ids(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    ours, seen = _start(tb)
    tb.write(Base("p=1", "00000003-aaaa-0"))
    mine = [("p=1", "00000003-bbbb-0")]
    assert _conflict(tb, ours, seen, mine) is None
    assert _conflict(tb, ours, seen, mine, by_bucket=True) is not None
    assert _conflict(tb, ours, seen, [("p=1", "00000004-bbbb-0")], by_bucket=True) is None
