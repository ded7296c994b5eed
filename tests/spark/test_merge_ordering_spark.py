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
