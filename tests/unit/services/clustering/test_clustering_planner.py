"""`pyhudi.services.clustering.plan`: which small file slices a clustering plan groups, per
partition (`SparkSizeBasedClusteringPlanStrategy`: Hudi 0.15's rules at table version 6, 1.2's at
version 9). No Spark: hand-built tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder, table_props

from pyhudi.codec.avro_schemas import decode_container, encode_container
from pyhudi.codec.service_plans import clustering_group_from_avro, clustering_plan_to_avro
from pyhudi.config.clustering import ClusteringConfig
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.services.clustering.plan import plan_clustering, select_partitions
from pyhudi.table.context import TableContext

P1, P2, P3 = "p=1", "p=2", "p=3"


@pytest.fixture
def tb(tmp_path) -> TimelineBuilder:
    return TimelineBuilder.create(tmp_path / "t")


def version_9(root: Path) -> TimelineBuilder:
    props = {**table_props(), "hoodie.table.version": "9", "hoodie.timeline.layout.version": "2"}
    return TimelineBuilder(TableContext.create(str(root), props))


def base_size(tb: TimelineBuilder) -> int:
    return next(s.base_file.size_bytes for s in tb.ctx.view().latest_file_slices() if s.base_file)


def groups_of(tb: TimelineBuilder, config: ClusteringConfig) -> list[tuple[str, set[str]]]:
    plan = plan_clustering(tb.ctx, config)
    return [] if plan is None else [(g.partition_path, set(g.file_ids)) for g in plan.groups]


def test_small_files_of_each_partition_form_one_group(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P2, "c-0"), Base(P2, "d-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P1, {"a-0", "b-0"}), (P2, {"c-0", "d-0"})]


def test_a_partition_with_one_small_file_is_clustered_by_default(tb: TimelineBuilder) -> None:
    """`single.group.clustering.enabled` is on by default in Hudi 0.15 and 1.2."""
    tb.write(Base(P1, "a-0"), Base(P2, "c-0"), Base(P2, "d-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P1, {"a-0"}), (P2, {"c-0", "d-0"})]
    no_single = ClusteringConfig(single_group=False)
    assert groups_of(tb, no_single) == [(P2, {"c-0", "d-0"})]
    sorted_config = ClusteringConfig(single_group=False, sort_columns=("id",))
    assert groups_of(tb, sorted_config) == [(P1, {"a-0"}), (P2, {"c-0", "d-0"})]


def test_single_slice_groups_closed_by_the_byte_cap_stay_at_version_6_only(
    tmp_path: Path,
) -> None:
    """Without single-group clustering, Hudi 0.15 drops only a partition's last group of one
    slice; Hudi 1.2 drops every such group unless it writes more than one file group."""
    v6, v9 = TimelineBuilder.create(tmp_path / "v6"), version_9(tmp_path / "v9")
    for tb in (v6, v9):
        tb.write(*(Base(P1, f"f{i}-0") for i in range(3)))
    size = v6.ctx.view().latest_file_slices()[0].base_file.size_bytes  # type: ignore[union-attr]
    one_per_group = ClusteringConfig(single_group=False, max_bytes_per_group=size + 1)
    assert [len(ids) for _, ids in groups_of(v6, one_per_group)] == [1, 1]
    assert groups_of(v9, one_per_group) == []
    split = ClusteringConfig(
        single_group=False, max_bytes_per_group=size + 1, target_file_max_bytes=size - 1
    )
    assert [len(ids) for _, ids in groups_of(v9, split)] == [1, 1, 1]


def test_merge_on_read_slices_go_with_their_logs_and_log_only_slices_too(tmp_path: Path) -> None:
    tb = TimelineBuilder.create(tmp_path / "mor", "MERGE_ON_READ")
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    tb.write(Log(P1, "a-0"), Log(P1, "c-0"))  # c-0: a file group of log files only
    plan = plan_clustering(tb.ctx, ClusteringConfig())
    assert plan is not None
    (group,) = plan.groups
    assert set(group.file_ids) == {"a-0", "b-0", "c-0"}
    assert {s.file_id: len(s.log_files) for s in group.slices} == {"a-0": 1, "b-0": 0, "c-0": 1}
    # Packing counts base files only: a slice without one as `hoodie.parquet.max.file.size`.
    assert group.metrics["TOTAL_SIZE"] == 2 * base_size(tb) + 120 * 1024 * 1024


def test_version_9_plans_only_partitions_written_since_the_last_clustering(
    tmp_path: Path,
) -> None:
    tb = version_9(tmp_path / "v9")
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P2, "c-0"), Base(P2, "d-0"))
    tb.write(
        Base(P1, "e-0"),
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.CLUSTER,
        replaced={P1: ["a-0", "b-0"]},
    )
    assert groups_of(tb, ClusteringConfig()) == []  # nothing written since: no plan
    tb.write(Base(P2, "f-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P2, {"c-0", "d-0", "f-0"})]
    everything = ClusteringConfig(incremental=False)
    assert groups_of(tb, everything) == [(P1, {"e-0"}), (P2, {"c-0", "d-0", "f-0"})]


def test_version_9_plans_note_the_partitions_max_num_groups_left_out(tmp_path: Path) -> None:
    tb = version_9(tmp_path / "v9")
    tb.write(Base(P1, "a-0"), Base(P2, "b-0"), Base(P3, "c-0"))
    plan = plan_clustering(tb.ctx, ClusteringConfig(max_num_groups=1))
    assert plan is not None and [g.partition_path for g in plan.groups] == [P1]
    assert plan.missing_partitions == (P2, P3)
    v6 = TimelineBuilder.create(tmp_path / "v6")
    v6.write(Base(P1, "a-0"), Base(P2, "b-0"))
    capped = plan_clustering(v6.ctx, ClusteringConfig(max_num_groups=1))
    assert capped is not None and capped.missing_partitions == ()


def test_files_at_or_above_the_small_file_limit_are_not_clustered(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    size = tb.ctx.view().latest_file_slices()[0].base_file.size_bytes  # type: ignore[union-attr]
    assert plan_clustering(tb.ctx, ClusteringConfig(small_file_limit=size)) is None
    assert groups_of(tb, ClusteringConfig(small_file_limit=size + 1)) == [(P1, {"a-0", "b-0"})]


def test_group_size_cap_splits_a_partition_and_max_groups_caps_the_plan(
    tb: TimelineBuilder,
) -> None:
    tb.write(*(Base(P1, f"f{i}-0") for i in range(4)))
    size = tb.ctx.view().latest_file_slices()[0].base_file.size_bytes  # type: ignore[union-attr]
    two_per_group = ClusteringConfig(max_bytes_per_group=2 * size + 1)
    groups = groups_of(tb, two_per_group)
    assert len(groups) == 2 and all(len(ids) == 2 for _, ids in groups)
    capped = ClusteringConfig(max_bytes_per_group=2 * size + 1, max_num_groups=1)
    assert len(groups_of(tb, capped)) == 1


def test_file_groups_of_a_pending_clustering_are_not_planned_again(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P1, "c-0"), Base(P1, "d-0"))
    tb.pending_clustering((P1, "a-0"), (P1, "b-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P1, {"c-0", "d-0"})]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (ClusteringConfig(), [P1, P2, P3]),
        (ClusteringConfig(regex="p=[12]"), [P1, P2]),
        (ClusteringConfig(selected=(P3, P1)), [P1, P3]),
        (ClusteringConfig(selected=(P3,), regex="p=1"), [P3]),  # the regex is not applied
        (ClusteringConfig(filter_mode="SELECTED_PARTITIONS", begin_partition=P2), [P2, P3]),
        (ClusteringConfig(filter_mode="SELECTED_PARTITIONS", end_partition=P2), [P1, P2]),
        (ClusteringConfig(filter_mode="RECENT_DAYS", lookback=2), [P2, P3]),
        (ClusteringConfig(filter_mode="RECENT_DAYS", lookback=1, skip_latest=1), [P2]),
    ],
)
def test_partition_filters_pick_partitions(config: ClusteringConfig, expected: list[str]) -> None:
    assert select_partitions([P3, P1, P2], config) == expected


def test_clustering_plan_avro_round_trip_rebuilds_the_groups(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    plan = plan_clustering(tb.ctx, ClusteringConfig(sort_columns=("id",)))
    assert plan is not None
    record = decode_container(
        encode_container(
            "HoodieRequestedReplaceMetadata", clustering_plan_to_avro(plan, tb.ctx.uri)
        )
    )
    assert record["operationType"] == "CLUSTER"
    strategy = record["clusteringPlan"]["strategy"]
    assert strategy["strategyParams"] == {"hoodie.clustering.plan.strategy.sort.columns": "id"}
    (group,) = record["clusteringPlan"]["inputGroups"]
    rebuilt = clustering_group_from_avro(group, tb.ctx.uri)
    assert rebuilt.partition_path == P1
    assert set(rebuilt.file_ids) == {"a-0", "b-0"}
    assert {s.base_file.file_name for s in rebuilt.slices} == {  # type: ignore[union-attr]
        s.base_file.file_name  # type: ignore[union-attr]
        for s in plan.groups[0].slices
    }
