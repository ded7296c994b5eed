"""The side results a write task returns for the metadata table's indexes: key changes against
the previous slice, and column ranges from the footer the parquet writer returns (the same ranges
the driver reads back from the file)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.file_group.column_ranges import footer_column_ranges, table_column_ranges
from pyhudi.file_group.index_results import (
    COLUMN_RANGES,
    DELETED_KEYS,
    INSERTED_KEYS,
    encode_column_ranges,
    index_results_of,
    key_changes,
    log_key_changes,
)
from pyhudi.file_group.stats import STATS_SCHEMA, stats_table


def test_key_changes_of_a_new_file_are_its_distinct_keys() -> None:
    changes = key_changes([pa.chunked_array([["b", "a", "b"]])], None)
    assert sorted(changes[INSERTED_KEYS]) == ["a", "b"] and changes[DELETED_KEYS] == []


def test_key_changes_of_a_merge_against_the_old_base_keys() -> None:
    written = [pa.chunked_array([["a", "c"]]), pa.array(["d", "d"])]
    old = pa.chunked_array([["a", "b"], ["b", "c"]])
    changes = key_changes(written, old)
    assert sorted(changes[INSERTED_KEYS]) == ["d"]
    assert changes[DELETED_KEYS] == ["b"]


def test_log_key_changes_are_unlocated_upserts_and_located_deletes() -> None:
    keys = pa.array(["a", "b", "c", "d", "e", "e"])
    deletes = pa.array([False, False, True, True, False, False])
    located = pa.array([True, False, True, False, False, False])
    changes = log_key_changes(keys, deletes, located)
    assert sorted(changes[INSERTED_KEYS]) == ["b", "e"]
    assert changes[DELETED_KEYS] == ["c"]  # "d" was in no file group: nothing leaves


def test_log_key_changes_of_an_update_only_append_are_empty() -> None:
    changes = log_key_changes(pa.array(["a", "b"]), pa.array([False, False]), pa.array([True] * 2))
    assert changes == {INSERTED_KEYS: [], DELETED_KEYS: []}


def test_log_key_changes_are_not_given_when_not_exact() -> None:
    keys, deletes = pa.array(["a", "b"]), pa.array([False, False])
    assert log_key_changes(keys, deletes, None) == {}  # the index cannot tell
    assert log_key_changes(keys, deletes, pa.array([True, None])) == {}
    both = log_key_changes(pa.array(["a", "a"]), pa.array([True, False]), pa.array([True, True]))
    assert both == {}  # upserted and deleted in one append: the merge decides


def test_footer_ranges_from_the_writer_equal_the_ones_read_back(tmp_path: Path) -> None:
    table = pa.table(
        {
            "i": pa.array([3, None, -1], pa.int32()),
            "s": ["b", "a", None],
            "d": pa.array([dt.date(2024, 1, 2), None, dt.date(2023, 5, 6)]),
            "dec": pa.array([Decimal("1.50"), Decimal("-3.25"), None], pa.decimal128(10, 2)),
            "ts": pa.array([5, 1, 9], pa.timestamp("us")),
            "nested": pa.array([{"x": 1}, None, {"x": 2}]),
        }
    )
    path = tmp_path / "f.parquet"
    writer = pq.ParquetWriter(str(path), table.schema, write_statistics=True)
    writer.write_table(table, row_group_size=2)
    writer.close()
    from_writer = footer_column_ranges("f.parquet", writer.writer.metadata)
    assert from_writer == footer_column_ranges("f.parquet", pq.read_metadata(path))
    assert [s.column_name for s in from_writer] == ["i", "s", "d", "dec", "ts"]
    assert [s.value_wrapper for s in from_writer] == [
        "IntWrapper",
        "StringWrapper",
        "DateWrapper",
        "DecimalWrapper",
        "LongWrapper",
    ]


def test_stats_rows_carry_side_results_to_the_driver() -> None:
    ranges = table_column_ranges(".f_1.log.1_0-1-1", pa.table({"a": [2, 1], "b": ["x", None]}))
    row = {
        "partition_path": "p",
        "file_id": "f",
        "file_name": ".f_1.log.1_0-1-1",
        "prev_commit": "1",
        COLUMN_RANGES: encode_column_ranges(ranges),
    }
    plain = {"partition_path": "p", "file_id": "g", "file_name": "g_0-1-1_2.parquet"}
    table = stats_table([row, plain])
    assert table.schema == STATS_SCHEMA
    results = index_results_of(table.to_pylist())
    assert list(results) == [("p", ".f_1.log.1_0-1-1")]  # rows without side results: none
    result = results[("p", ".f_1.log.1_0-1-1")]
    assert result.inserted_keys is None and result.column_ranges == tuple(ranges)
    assert [(s.min_value, s.max_value, s.null_count) for s in ranges] == [(1, 2, 0), ("x", "x", 1)]
