"""`pyhudi.services.clustering.plan`: which small base files a clustering plan groups, per
partition (Hudi 0.14 `SparkSizeBasedClusteringPlanStrategy` rules). No Spark: hand-built tables."""

from __future__ import annotations

import pytest
from tests.helpers.timeline_builder import Base, TimelineBuilder

from pyhudi.codec.avro_schemas import decode_container, encode_container
from pyhudi.codec.service_plans import clustering_group_from_avro, clustering_plan_to_avro
from pyhudi.config.clustering import ClusteringConfig
from pyhudi.services.clustering.plan import plan_clustering, select_partitions

P1, P2, P3 = "p=1", "p=2", "p=3"


@pytest.fixture
def tb(tmp_path) -> TimelineBuilder:
    return TimelineBuilder.create(tmp_path / "t")


def groups_of(tb: TimelineBuilder, config: ClusteringConfig) -> list[tuple[str, set[str]]]:
    plan = plan_clustering(tb.ctx, config)
    return [] if plan is None else [(g.partition_path, set(g.file_ids)) for g in plan.groups]


def test_small_files_of_each_partition_form_one_group(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P2, "c-0"), Base(P2, "d-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P1, {"a-0", "b-0"}), (P2, {"c-0", "d-0"})]


def test_a_partition_with_one_small_file_is_left_alone_without_sort_columns(
    tb: TimelineBuilder,
) -> None:
    tb.write(Base(P1, "a-0"), Base(P2, "c-0"), Base(P2, "d-0"))
    assert groups_of(tb, ClusteringConfig()) == [(P2, {"c-0", "d-0"})]
    sorted_config = ClusteringConfig(sort_columns=("id",))
    assert groups_of(tb, sorted_config) == [(P1, {"a-0"}), (P2, {"c-0", "d-0"})]


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
        (ClusteringConfig(filter_mode="SELECTED_PARTITIONS", selected=(P3, P1)), [P1, P3]),
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
