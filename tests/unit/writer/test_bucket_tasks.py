"""Packing a bucket load's (partition, bucket)s into write tasks (`writer.bucket_load.bucket_tasks`)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from pyhudi.writer import bucket_load
from pyhudi.writer.bucket_load import bucket_tasks, packed_tasks


def test_equal_buckets_are_spread_evenly_over_the_tasks() -> None:
    counts = {f"p{i:02d}": 100_000 for i in range(10)}
    table = bucket_tasks(counts, 2, 2)
    assert set(table) == set(counts) and all(len(ids) == 2 for ids in table.values())
    assert Counter(t for ids in table.values() for t in ids) == {0: 10, 1: 10}


def test_one_task_per_bucket_when_there_are_as_many_tasks() -> None:
    table = bucket_tasks({"a": 10, "b": 1000, "c": 5}, 2, 6)
    assert sorted(t for ids in table.values() for t in ids) == list(range(6))
    assert table["b"] == [0, 1]  # the largest partition's buckets first (Spark starts task 0 first)


@given(
    st.dictionaries(st.text(max_size=3), st.integers(1, 10_000), min_size=1, max_size=20),
    st.integers(1, 8),
    st.integers(1, 6),
)
def test_no_task_gets_more_than_the_largest_bucket_over_the_lightest(
    counts: dict[str, int], num_buckets: int, tasks: int
) -> None:
    table = bucket_tasks(counts, num_buckets, tasks)
    load = [0.0] * tasks
    for partition, ids in table.items():
        assert len(ids) == num_buckets and all(0 <= t < tasks for t in ids)
        for task in ids:
            load[task] += counts[partition] / num_buckets
    largest = max(counts.values()) / num_buckets
    assert max(load) - min(load) <= largest + 1e-9


def test_packed_tasks_falls_back_to_hashing_without_counts_by_id_or_past_the_bound(
    monkeypatch,
) -> None:
    counts = {"a": 10, "b": 1000}
    assert packed_tasks(counts, 2, 4, by_id=True) == bucket_tasks(counts, 2, 4)
    assert packed_tasks(counts, 2, 9, by_id=True) == bucket_tasks(counts, 2, 4)  # <= buckets
    assert packed_tasks(None, 2, 4, by_id=True) is None  # no check-and-count job
    assert packed_tasks(counts, 2, 4, by_id=False) is None  # Spark 4.0: no repartitionById
    assert packed_tasks(counts, 50_001, 4, by_id=True) is None  # 100,002 buckets named
    monkeypatch.setattr(bucket_load, "MAX_NAMED_BUCKETS", 3)
    assert packed_tasks(counts, 2, 4, by_id=True) is None
