"""pyspark 3.5's grouped Arrow apply: sorted batches cut into one table per group."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.spark_compat import run_starts, split_sorted_groups


def _batches(keys: list[str | None], sizes: list[int]) -> list[pa.RecordBatch]:
    table = pa.table({"k": pa.array(keys, pa.string()), "v": pa.array(range(len(keys)))})
    batches, start = [], 0
    for size in sizes:
        part = table.slice(start, size)
        batches.append(pa.RecordBatch.from_pydict(part.to_pydict(), schema=table.schema))
        start += size
    return batches


def test_run_starts_mark_each_change_of_value_and_treat_nulls_as_one_value() -> None:
    keys = pa.array([None, None, "a", "a", "b", None], pa.string())
    assert run_starts(keys) == [0, 2, 4, 5]
    assert run_starts(pa.array(["x"])) == [0]
    assert run_starts(pa.array([], pa.string())) == []


def test_split_sorted_groups_joins_a_group_spread_over_batches() -> None:
    keys = ["a", "a", "a", "b", "c", "c", "c", "d"]
    groups = list(split_sorted_groups(iter(_batches(keys, [2, 3, 0, 2, 1])), "k"))
    assert [g.column("k").to_pylist() for g in groups] == [
        ["a", "a", "a"],
        ["b"],
        ["c", "c", "c"],
        ["d"],
    ]
    assert [v for g in groups for v in g.column("v").to_pylist()] == list(range(8))


def test_split_sorted_groups_of_no_rows_is_nothing() -> None:
    assert list(split_sorted_groups(iter(_batches([], [0])), "k")) == []
