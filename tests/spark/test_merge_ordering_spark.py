"""The Spark merge-on-read path compares several ordering fields as a tuple, like the Arrow path."""

from __future__ import annotations

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.merge.record_merger import DELETED, NATURAL
from pyhudi.reader.mor_spark import merge_event_time

COLUMNS = [RECORD_KEY, PARTITION_PATH, "a", "b", "v"]


def test_event_time_merge_keeps_the_greater_tuple_per_key(spark):
    base = spark.createDataFrame(
        [("x", "p", 2, 5, "base-x"), ("y", "p", 2, 1, "base-y"), ("z", "p", 3, 0, "base-z")],
        COLUMNS,
    )
    winners = spark.createDataFrame(
        [
            ("x", "p", 2, 3, "log-x", False, False),
            ("y", "p", 2, 3, "log-y", False, False),
            ("z", "p", 2, 9, "log-z", False, False),
            ("w", "p", 0, 0, "log-w", False, False),
        ],
        [*COLUMNS, DELETED, NATURAL],
    )
    merged = merge_event_time(base, winners, ["a", "b"]).collect()
    assert {r[RECORD_KEY]: r["v"] for r in merged} == {
        "x": "base-x",
        "y": "log-y",
        "z": "base-z",
        "w": "log-w",
    }
    single = merge_event_time(base, winners, ["a"]).collect()  # a ties on x and y: the log wins
    assert {r[RECORD_KEY]: r["v"] for r in single}["x"] == "log-x"


def test_a_stale_ordered_delete_loses_to_the_base_record_from_table_version_8(spark):
    """Version 6 (Hudi 0.15): a delete that won the log beats the base record whatever its
    ordering values. Versions 8 and 9 (`ordered_deletes`, Hudi 1.2): only a natural-order one
    does; a stale ordered delete leaves the base record, a newer one removes it."""
    base = spark.createDataFrame(
        [("x", "p", 5, 5, "base-x"), ("y", "p", 5, 5, "base-y"), ("z", "p", 5, 5, "base-z")],
        COLUMNS,
    )
    winners = spark.createDataFrame(
        [
            ("x", "p", 5, 4, None, True, False),  # stale, ordered
            ("y", "p", 5, 6, None, True, False),  # newer, ordered
            ("z", "p", None, None, None, True, True),  # natural order
        ],
        f"{RECORD_KEY} string, {PARTITION_PATH} string, a long, b long, v string, "
        f"{DELETED} boolean, {NATURAL} boolean",
    )
    version_6 = merge_event_time(base, winners, ["a", "b"]).collect()
    assert version_6 == []
    version_9 = merge_event_time(base, winners, ["a", "b"], ordered_deletes=True).collect()
    assert [r["v"] for r in version_9] == ["base-x"]
