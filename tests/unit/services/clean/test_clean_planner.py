"""`pyhudi.services.clean.plan`: which file slices a clean deletes, per policy (Hudi 0.14 rules)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

import fastavro
import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.codec.avro_schemas import encode_container, schema
from pyhudi.codec.service_plans import clean_plan_from_avro, clean_plan_to_avro
from pyhudi.config.clean import CleanConfig, CleaningPolicy
from pyhudi.exceptions import ConfigError
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.services.clean.plan import earliest_instant_to_retain, plan_clean

P1, P2 = "p=1", "p=2"
COMMITS = CleaningPolicy.KEEP_LATEST_COMMITS
VERSIONS = CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
HOURS = CleaningPolicy.KEEP_LATEST_BY_HOURS


def planned(tb: TimelineBuilder, config: CleanConfig, **kwargs) -> set[str]:
    """Relative paths of the files the plan deletes (empty when there is no plan)."""
    plan = plan_clean(tb.ctx, config, **kwargs)
    if plan is None:
        return set()
    return {
        f"{p}/{name}" if p else name for p, names in plan.file_names().items() for name in names
    }


def updates(tb: TimelineBuilder, count: int, file_id: str = "a-0", **kwargs) -> list[str]:
    return [tb.write(Base(P1, file_id), **kwargs) for _ in range(count)]


# ---- configuration --------------------------------------------------------------------------------


def test_clean_config_from_options_reads_hudi_keys_and_defaults():
    assert CleanConfig.from_options({}) == CleanConfig()
    config = CleanConfig.from_options(
        {
            "hoodie.cleaner.policy": "keep_latest_by_hours",
            "hoodie.cleaner.hours.retained": "5",
            "hoodie.clean.max.commits": "3",
            "hoodie.cleaner.policy.failed.writes": "LAZY",
        }
    )
    assert (config.policy, config.hours_retained, config.max_commits) == (HOURS, 5, 3)
    assert config.failed_writes_policy.value == "LAZY"
    assert config.heartbeat_expiry_ms == 120_000


def test_clean_config_rejects_zero_file_versions_naming_the_key():
    with pytest.raises(ConfigError, match=r"hoodie\.cleaner\.fileversions\.retained"):
        CleanConfig.from_options({"hoodie.cleaner.fileversions.retained": "0"})


# ---- KEEP_LATEST_COMMITS --------------------------------------------------------------------------


def test_commits_policy_cow_deletes_slices_older_than_the_one_before_earliest_retained(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    t2, _ = updates(tb, 2)
    t4 = tb.write(Base(P1, "b-0"))
    t5 = tb.write(Base(P1, "a-0"))
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=2))
    assert plan is not None
    assert plan.earliest_instant_to_retain is not None
    assert (plan.earliest_instant_to_retain.time, plan.earliest_instant_to_retain.action) == (
        t4,
        Action.COMMIT,
    )
    assert plan.last_completed_commit_time == t5
    # a-0: t5 is latest, t3 is what a query as of t4 reads; b-0 keeps t4 and t1 (read as of t4-)
    expected = set(tb.slice_files(P1, "a-0", t1) + tb.slice_files(P1, "a-0", t2))
    assert planned(tb, CleanConfig(commits_retained=2)) == expected


def test_commits_policy_plans_nothing_with_no_more_commits_than_retained(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    updates(tb, 4)
    assert plan_clean(tb.ctx, CleanConfig(commits_retained=4)) is None
    assert plan_clean(tb.ctx, CleanConfig(commits_retained=3)) is None, "t1 is read as of t2"
    assert plan_clean(tb.ctx, CleanConfig(commits_retained=2)) is not None


def test_commits_policy_mor_deletes_base_and_logs_of_old_slices_together(tmp_path):
    tb = TimelineBuilder.create(tmp_path, "MERGE_ON_READ")
    t1 = tb.write(Base(P1, "a-0"))
    tb.write(Log(P1, "a-0"))
    tb.compaction((P1, "a-0"))
    tb.write(Log(P1, "a-0"))
    t5 = tb.compaction((P1, "a-0"))
    tb.write(Log(P1, "a-0"))
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=2))
    assert plan is not None and plan.earliest_commit_to_retain == t5
    assert planned(tb, CleanConfig(commits_retained=2)) == set(tb.slice_files(P1, "a-0", t1))
    assert len(tb.slice_files(P1, "a-0", t1)) == 2, "base file and its log"


def test_earliest_retained_stops_before_the_earliest_pending_write(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t0, _, t2 = updates(tb, 3)
    tb.write(Base(P1, "b-0"), complete=False)
    updates(tb, 2)
    earliest = earliest_instant_to_retain(tb.ctx.active.timeline, CleanConfig(commits_retained=1))
    assert earliest is not None and earliest.time == t2
    # t1 stays: the newest slice before the earliest retained commit
    assert planned(tb, CleanConfig(commits_retained=1)) == set(tb.slice_files(P1, "a-0", t0))


# ---- KEEP_LATEST_FILE_VERSIONS --------------------------------------------------------------------


def test_file_versions_policy_keeps_the_newest_n_slices_of_every_group(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    times = [tb.write(Base(P1, "a-0"), Base(P1, "b-0")), *updates(tb, 3)]
    config = CleanConfig(policy=VERSIONS, file_versions_retained=2)
    plan = plan_clean(tb.ctx, config)
    assert plan is not None and plan.earliest_instant_to_retain is None
    assert plan.earliest_commit_to_retain == ""
    expected = set(tb.slice_files(P1, "a-0", times[0]) + tb.slice_files(P1, "a-0", times[1]))
    assert planned(tb, config) == expected


def test_file_versions_policy_never_deletes_a_slice_at_or_after_a_pending_write(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1, t2 = updates(tb, 2)
    tb.write(Base(P1, "b-0"), complete=False)
    t4, _ = updates(tb, 2)
    config = CleanConfig(policy=VERSIONS, file_versions_retained=1)
    deleted = planned(tb, config)
    assert deleted == set(tb.slice_files(P1, "a-0", t1) + tb.slice_files(P1, "a-0", t2))
    assert not deleted & set(tb.slice_files(P1, "a-0", t4))


# ---- KEEP_LATEST_BY_HOURS -------------------------------------------------------------------------

HOURLY = ["20240101000000000", "20240101020000000", "20240101040000000", "20240101060000000"]
NOW = datetime(2024, 1, 1, 7, 0, tzinfo=timezone.utc)


def test_hours_policy_retains_commits_of_the_last_hours_and_the_slice_before(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    for t in HOURLY:
        tb.write(Base(P1, "a-0"), time=t)
    config = CleanConfig(policy=HOURS, hours_retained=2)
    plan = plan_clean(tb.ctx, config, now=NOW)
    assert plan is not None and plan.earliest_commit_to_retain == HOURLY[3]
    expected = set(tb.slice_files(P1, "a-0", HOURLY[0]) + tb.slice_files(P1, "a-0", HOURLY[1]))
    assert planned(tb, config, now=NOW) == expected


def test_hours_policy_plans_nothing_when_no_commit_is_inside_or_all_are(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    for t in HOURLY:
        tb.write(Base(P1, "a-0"), time=t)
    assert plan_clean(tb.ctx, CleanConfig(policy=HOURS, hours_retained=24), now=NOW) is None
    later = datetime(2024, 1, 3, tzinfo=timezone.utc)
    assert plan_clean(tb.ctx, CleanConfig(policy=HOURS, hours_retained=2), now=later) is None


# ---- replaced file groups and partitions ----------------------------------------------------------


def overwrite(tb: TimelineBuilder, partition: str, new_id: str, replaced: list[str]) -> str:
    return tb.write(
        Base(partition, new_id),
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.INSERT_OVERWRITE,
        replaced={partition: replaced},
    )


def test_replaced_groups_go_only_once_the_replacecommit_is_older_than_earliest_retained(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"))
    overwrite(tb, P1, "c-0", ["a-0"])
    config = CleanConfig(commits_retained=1)
    assert plan_clean(tb.ctx, config) is None, "the replacecommit itself is the earliest retained"
    tb.write(Base(P1, "c-0"))
    assert planned(tb, config) == set(tb.slice_files(P1, "a-0", t1))


def test_file_versions_policy_deletes_replaced_groups_at_once(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"))
    overwrite(tb, P1, "c-0", ["a-0"])
    config = CleanConfig(policy=VERSIONS)
    assert planned(tb, config) == set(tb.slice_files(P1, "a-0", t1))


def test_delete_partition_empties_and_deletes_the_partition_once_old_enough(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"), Base(P2, "b-0"))
    tb.write(
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.DELETE_PARTITION,
        replaced={P2: ["b-0"]},
    )
    assert plan_clean(tb.ctx, CleanConfig(commits_retained=1)) is None
    tb.write(Base(P1, "a-0"))
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert plan is not None
    assert plan.partitions_to_delete == (P2,)
    assert plan.file_names() == {P2: [tb.slice_files(P2, "b-0", t1)[0].split("/")[1]]}


def test_non_partitioned_table_cleans_files_but_never_deletes_its_root(tmp_path):
    tb = TimelineBuilder.create(tmp_path, partitioned=False)
    t1 = tb.write(Base("", "a-0"))
    overwrite(tb, "", "c-0", ["a-0"])
    plan = plan_clean(tb.ctx, CleanConfig(policy=VERSIONS))
    assert plan is not None and plan.partitions_to_delete == ()
    assert planned(tb, CleanConfig(policy=VERSIONS)) == set(tb.slice_files("", "a-0", t1))


# ---- what is never deleted ------------------------------------------------------------------------


def test_pending_compaction_keeps_its_input_slice_and_the_slice_it_opened(tmp_path):
    tb = TimelineBuilder.create(tmp_path, "MERGE_ON_READ")
    t1 = tb.write(Base(P1, "a-0"))
    tb.write(Log(P1, "a-0"))
    tb.compaction((P1, "a-0"))
    t4 = tb.write(Log(P1, "a-0"))
    tb.compaction((P1, "a-0"), execute=False)
    tb.write(Log(P1, "a-0"))
    only_t1 = set(tb.slice_files(P1, "a-0", t1))
    assert planned(tb, CleanConfig(policy=VERSIONS, file_versions_retained=1)) == only_t1
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert plan is not None and plan.earliest_commit_to_retain == t4, "capped before t5"
    assert planned(tb, CleanConfig(commits_retained=1)) == only_t1


def test_pending_clustering_input_slice_is_never_deleted(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"))
    tb.pending_clustering((P1, "a-0"), (P1, "b-0"))
    tb.write(Base(P1, "a-0"))  # a layout only a test makes: an update under pending clustering
    assert planned(tb, CleanConfig(policy=VERSIONS, file_versions_retained=1)) == set()


def test_savepointed_slices_are_kept(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1, t2, _, _ = updates(tb, 4)
    name = tb.slice_files(P1, "a-0", t1)[0].split("/")[1]
    tb.savepoint(t1, {P1: [name]})
    assert planned(tb, CleanConfig(commits_retained=1)) == set(tb.slice_files(P1, "a-0", t2))


def test_bootstrap_flags_are_false_and_paths_are_full_uris(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    updates(tb, 3)
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert plan is not None
    (info,) = plan.files_per_partition[P1]
    assert info.file_path == tb.ctx.storage.uri(tb.ctx.path(f"{P1}/{info.file_name}"))
    assert info.file_path.startswith("file:///")
    assert info.is_bootstrap_base_file is False


# ---- the plan record ------------------------------------------------------------------------------


def test_plan_encodes_as_hudi_cleaner_plan_v2_and_round_trips(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    updates(tb, 3)
    plan = plan_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert plan is not None
    data = encode_container("HoodieCleanerPlan", clean_plan_to_avro(plan))
    (record,) = list(fastavro.reader(io.BytesIO(data), reader_schema=schema("HoodieCleanerPlan")))
    assert record["version"] == 2
    assert record["policy"] == "KEEP_LATEST_COMMITS"
    assert record["filesToBeDeletedPerPartition"] == {}
    assert record["earliestInstantToRetain"] == {
        "timestamp": plan.earliest_commit_to_retain,
        "action": "commit",
        "state": "COMPLETED",
    }
    assert record["filePathsToBeDeletedPerPartition"][P1][0]["isBootstrapBaseFile"] is False
    assert record["partitionsToBeDeleted"] == []
    assert clean_plan_from_avro(record, tb.ctx.uri) == plan


def test_version_1_plan_names_are_resolved_against_the_table(tmp_path):
    record = {
        "earliestInstantToRetain": None,
        "lastCompletedCommitTimestamp": "",
        "policy": "KEEP_LATEST_FILE_VERSIONS",
        "filesToBeDeletedPerPartition": {P1: ["x_1-0-1_20240101000000000.parquet"]},
        "version": 1,
        "filePathsToBeDeletedPerPartition": None,
        "partitionsToBeDeleted": None,
    }
    plan = clean_plan_from_avro(record, "file:///t")
    assert plan.files_per_partition[P1][0].file_path == (
        "file:///t/p=1/x_1-0-1_20240101000000000.parquet"
    )
