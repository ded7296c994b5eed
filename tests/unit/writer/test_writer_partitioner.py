"""`pyhudi.writer.partitioner.plan_insert_buckets`: Hudi's UpsertPartitioner sizing rules, without Spark."""

from __future__ import annotations

import math

import pytest
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder, table_props

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.file import BaseFile, FileSlice
from pyhudi.model.instant import Action, InstantTime
from pyhudi.table.context import TableContext
from pyhudi.writer.config import SizingConfig
from pyhudi.writer.partitioner import (
    InsertBucket,
    average_record_size,
    plan_insert_buckets,
    small_file_slices,
)

BASE_INSTANT = InstantTime("20240101000000000")


def sizing(**changes) -> SizingConfig:
    values = {
        "max_file_size_bytes": 1000,
        "small_file_limit_bytes": 600,
        "insert_split_size": 7,
        "auto_split": True,
        "record_size_estimate_bytes": 10,
        "compression": "snappy",
        "row_group_size_bytes": 1 << 20,
        "page_size_bytes": 1 << 16,
        "dictionary": True,
    }
    values.update(changes)
    return SizingConfig(**values)


def small_file(partition: str, file_id: str, size_bytes: int) -> FileSlice:
    name = f"{file_id}_0-1-2_{BASE_INSTANT}.parquet"
    base = BaseFile(partition, name, file_id, "0-1-2", BASE_INSTANT, size_bytes)
    return FileSlice(partition, file_id, BASE_INSTANT, base)


def totals(buckets: list[InsertBucket]) -> dict[str, int]:
    out: dict[str, int] = {}
    for bucket in buckets:
        out[bucket.partition] = out.get(bucket.partition, 0) + bucket.records
    return out


def test_small_files_are_filled_first_smallest_first_up_to_max_size():
    buckets = plan_insert_buckets(
        {"p": 250}, {"p": [small_file("p", "big", 500), small_file("p", "tiny", 100)]}, 10, sizing()
    )
    assert [(b.file_id, b.base_file_name, b.records) for b in buckets[:2]] == [
        ("tiny", f"tiny_0-1-2_{BASE_INSTANT}.parquet", 90),  # (1000 - 100) // 10
        ("big", f"big_0-1-2_{BASE_INSTANT}.parquet", 50),  # (1000 - 500) // 10
    ]
    assert all(b.base_file_name is None for b in buckets[2:])
    assert totals(buckets) == {"p": 250}


def test_inserts_that_fit_in_small_files_open_no_new_file_group():
    buckets = plan_insert_buckets({"p": 30}, {"p": [small_file("p", "a", 100)]}, 10, sizing())
    assert buckets == [InsertBucket("p", "a", f"a_0-1-2_{BASE_INSTANT}.parquet", 30)]


def test_new_buckets_hold_max_size_over_record_size_records_with_auto_split():
    buckets = plan_insert_buckets({"p": 250}, {}, 10, sizing())  # 100 records per file
    assert [b.records for b in buckets] == [84, 83, 83]
    assert all(b.base_file_name is None for b in buckets)


def test_new_buckets_hold_insert_split_size_records_without_auto_split():
    buckets = plan_insert_buckets(
        {"p": 25}, {}, 10, sizing(auto_split=False)
    )  # 7 per bucket -> 4 buckets
    assert [b.records for b in buckets] == [7, 6, 6, 6]


def test_bucket_sizes_differ_by_at_most_one_and_never_exceed_the_target():
    for total in (1, 99, 100, 101, 1000, 1234):
        records = [b.records for b in plan_insert_buckets({"p": total}, {}, 10, sizing())]
        assert sum(records) == total
        assert max(records) - min(records) <= 1
        assert max(records) <= 100
        assert len(records) == math.ceil(total / 100)


def test_new_file_groups_get_distinct_new_file_ids():
    buckets = plan_insert_buckets({"p": 1000, "q": 500}, {}, 10, sizing())
    ids = [b.file_id for b in buckets]
    assert len(set(ids)) == len(ids)
    assert all(i.endswith("-0") for i in ids)


def test_counts_are_conserved_per_partition_and_partitions_are_independent():
    inserts = {"a": 123, "b": 7, "c": 0}
    small = {
        "a": [small_file("a", "a1", 950), small_file("a", "a2", 599)],
        "b": [small_file("b", "b1", 0)],
    }
    buckets = plan_insert_buckets(inserts, small, 10, sizing())
    assert totals(buckets) == {"a": 123, "b": 7}
    assert [b.file_id for b in buckets if b.partition == "b"] == ["b1"]
    assert {b.file_id for b in buckets if b.partition == "a" and b.base_file_name} == {"a2", "a1"}


def test_small_file_already_at_max_size_takes_nothing():
    buckets = plan_insert_buckets(
        {"p": 5},
        {"p": [small_file("p", "full", 1000), small_file("p", "over", 1200)]},
        10,
        sizing(),
    )
    assert [b.file_id for b in buckets if b.base_file_name] == []
    assert totals(buckets) == {"p": 5}


def test_record_larger_than_a_file_still_gets_one_record_per_bucket():
    buckets = plan_insert_buckets({"p": 3}, {}, 5000, sizing())
    assert [b.records for b in buckets] == [
        1,
        1,
        1,
    ]  # the per-bucket target rounds to 0, floored at 1


def test_partitions_are_planned_in_sorted_order():
    buckets = plan_insert_buckets({"z": 1, "a": 1, "m": 1}, {}, 10, sizing())
    assert [b.partition for b in buckets] == ["a", "m", "z"]


def test_no_inserts_no_buckets():
    assert plan_insert_buckets({}, {"p": [small_file("p", "a", 1)]}, 10, sizing()) == []


def test_average_record_size_without_a_table_is_the_estimate():
    assert average_record_size(None, sizing(record_size_estimate_bytes=321)) == 321


@pytest.mark.parametrize(("record_size", "expected_new"), [(1, 1), (10, 3), (100, 30)])
def test_record_size_scales_the_number_of_new_file_groups(record_size, expected_new):
    buckets = plan_insert_buckets({"p": 300}, {}, record_size, sizing(max_file_size_bytes=1000))
    assert len(buckets) == expected_new


# ---- small files: which slices take inserts (Hudi's UpsertPartitioner / SparkUpsertDeltaCommitPartitioner)


def mor_table(tmp_path) -> TimelineBuilder:
    """Partition p: file groups whose base files grow with their id's length, `bb-0` with a log."""
    tb = TimelineBuilder.create(tmp_path / "t", "MERGE_ON_READ")
    tb.write(Base("p", "a-0"), Base("p", "bb-0"), Base("p", "ccc-0"), Base("p", "dddd-0"))
    tb.write(Log("p", "a-0"))
    return tb


def small_ids(tb: TimelineBuilder, *, merge_on_read: bool = True, **changes) -> list[str]:
    chosen = small_file_slices(tb.ctx, ["p"], sizing(**changes), merge_on_read=merge_on_read)
    return [s.file_id for s in chosen.get("p", [])]


def test_merge_on_read_inserts_go_to_the_smallest_base_files_without_logs(tmp_path):
    tb = mor_table(tmp_path)
    assert small_ids(tb) == ["bb-0"]  # a-0 is smaller but has a log file
    assert small_ids(tb, small_file_candidates=2) == ["bb-0", "ccc-0"]
    assert small_ids(tb, small_file_limit_bytes=0) == []


def test_pending_clustering_of_the_smallest_leaves_merge_on_read_no_small_file(tmp_path):
    """Hudi limits the candidates before it drops those under pending clustering."""
    tb = mor_table(tmp_path)
    tb.pending_clustering(("p", "bb-0"))
    assert small_ids(tb) == []
    assert small_ids(tb, small_file_candidates=2) == ["ccc-0"]


def test_copy_on_write_inserts_go_to_every_small_base_file(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("p", "a-0"), Base("p", "bb-0"), Base("p", "ccc-0"))
    assert sorted(small_ids(tb, merge_on_read=False)) == ["a-0", "bb-0", "ccc-0"]


def test_a_deltacommit_measures_records_by_its_base_files_only(tmp_path):
    ctx = TableContext.create(str(tmp_path / "t"), table_props("MERGE_ON_READ"))
    base = WriteStat("f", "p/f_0-1-2_1.parquet", "p", num_writes=10, total_write_bytes=700)
    log = WriteStat("f", "p/.f_1.log.1_0-1-3", "p", num_writes=1, total_write_bytes=5000)
    metadata = CommitMetadata({"p": (base, log)}, WriteOperationType.UPSERT)
    requested = ctx.active.create_requested(ctx.new_instant_time(), Action.DELTA_COMMIT)
    ctx.active.complete(
        ctx.active.transition_to_inflight(requested), encode_commit_metadata(metadata)
    )
    assert average_record_size(ctx.reload(), sizing()) == 70  # 700 bytes / 10 records
