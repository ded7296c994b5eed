"""`pyhudi.services.compaction.plan`: which merge-on-read slices a compaction plan takes, and when
one is due (Hudi 0.14 `ScheduleCompactionActionExecutor` rules). No Spark: hand-built tables."""

from __future__ import annotations

import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.codec.avro_schemas import decode_container, encode_container
from pyhudi.codec.service_plans import compaction_plan_from_avro, compaction_plan_to_avro
from pyhudi.config.compaction import CompactionConfig
from pyhudi.services.compaction.plan import (
    delta_commits_since_last_compaction,
    plan_compaction,
    should_schedule,
)

P1, P2 = "p=1", "p=2"


@pytest.fixture
def tb(tmp_path) -> TimelineBuilder:
    return TimelineBuilder.create(tmp_path / "t", "MERGE_ON_READ")


def test_plan_is_none_when_no_slice_has_log_files(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P2, "b-0"))
    assert plan_compaction(tb.ctx, CompactionConfig()) is None


def test_plan_takes_every_slice_with_log_files_with_its_base_and_logs(tb: TimelineBuilder) -> None:
    t1 = tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P2, "c-0"))
    tb.write(Log(P1, "a-0"), Log(P2, "c-0"))
    tb.write(Log(P1, "a-0"))
    plan = plan_compaction(tb.ctx, CompactionConfig())
    assert plan is not None
    by_group = {(op.partition_path, op.file_id): op for op in plan.operations}
    assert set(by_group) == {(P1, "a-0"), (P2, "c-0")}  # b-0 has no log files
    a0 = by_group[(P1, "a-0")]
    assert a0.base_instant == t1
    assert a0.base_file is not None and a0.base_file.startswith("a-0_")
    assert len(a0.log_files) == 2
    assert a0.metrics["TOTAL_LOG_FILES"] == 2.0
    assert len(by_group[(P2, "c-0")].log_files) == 1


def test_slices_of_a_pending_compaction_or_clustering_are_not_planned_again(
    tb: TimelineBuilder,
) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P1, "c-0"))
    tb.write(Log(P1, "a-0"), Log(P1, "b-0"), Log(P1, "c-0"))
    tb.compaction((P1, "a-0"), execute=False)
    tb.pending_clustering((P1, "b-0"))
    plan = plan_compaction(tb.ctx, CompactionConfig())
    assert plan is not None
    assert [(op.partition_path, op.file_id) for op in plan.operations] == [(P1, "c-0")]


def test_log_file_number_threshold_leaves_out_slices_with_fewer_logs(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    tb.write(Log(P1, "a-0"), Log(P1, "b-0"))
    tb.write(Log(P1, "a-0"))
    plan = plan_compaction(tb.ctx, CompactionConfig(log_num_threshold=2))
    assert plan is not None
    assert [op.file_id for op in plan.operations] == ["a-0"]
    assert plan_compaction(tb.ctx, CompactionConfig(log_num_threshold=3)) is None


def test_log_file_num_based_strategy_orders_slices_by_log_count(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    tb.write(Log(P1, "a-0"), Log(P1, "b-0"))
    tb.write(Log(P1, "b-0"))
    tb.write(Log(P1, "b-0"))
    config = CompactionConfig(
        strategy="org.apache.hudi.table.action.compact.strategy.LogFileNumBasedCompactionStrategy"
    )
    plan = plan_compaction(tb.ctx, config)
    assert plan is not None
    assert [op.file_id for op in plan.operations] == ["b-0", "a-0"]


def test_num_commits_trigger_counts_deltacommits_since_the_last_compaction(
    tb: TimelineBuilder,
) -> None:
    tb.write(Base(P1, "a-0"))
    tb.write(Log(P1, "a-0"))
    config = CompactionConfig(trigger="NUM_COMMITS", max_delta_commits=3)
    assert delta_commits_since_last_compaction(tb.ctx) == (2, None)
    assert not should_schedule(tb.ctx, config)
    tb.write(Log(P1, "a-0"))
    assert should_schedule(tb.ctx, config)
    compaction = tb.compaction((P1, "a-0"))
    tb.ctx.reload()
    assert delta_commits_since_last_compaction(tb.ctx) == (0, compaction)
    assert not should_schedule(tb.ctx, config)


def test_time_elapsed_trigger_compares_against_the_first_deltacommit(tb: TimelineBuilder) -> None:
    first = tb.write(Base(P1, "a-0"), time="20240101000000000")
    assert first == "20240101000000000"
    config = CompactionConfig(trigger="TIME_ELAPSED", max_delta_seconds=3600)
    jan_first_utc = 1704067200.0
    assert not should_schedule(tb.ctx, config, now=jan_first_utc + 3599)
    assert should_schedule(tb.ctx, config, now=jan_first_utc + 3600)


def test_compaction_plan_avro_round_trip_keeps_every_operation(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    tb.write(Log(P1, "a-0"), Log(P2, "c-0"))
    plan = plan_compaction(tb.ctx, CompactionConfig())
    assert plan is not None
    record = decode_container(
        encode_container("HoodieCompactionPlan", compaction_plan_to_avro(plan))
    )
    assert record["version"] == 2
    assert compaction_plan_from_avro(record) == plan
