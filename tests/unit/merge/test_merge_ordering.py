"""Event-time merging with several ordering fields (table version 9): compared as a tuple, in order."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute

from pyhudi.codec.log.delete_content import DeleteRecord
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.log.writer import avro_data_block, delete_block, encode_blocks
from pyhudi.codec.schema import (
    PARTITION_PATH,
    RECORD_KEY,
    arrow_to_avro_json,
    with_meta_fields,
)
from pyhudi.file_group.log_scan import log_records
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import ARROW, ordering_columns, tuple_greater
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base, resolve_log

EVENT, COMMIT = MergeMode.EVENT_TIME_ORDERING, MergeMode.COMMIT_TIME_ORDERING


def log(rows: list[tuple[str, int | None, int | None, str]]) -> pa.Table:
    """(key, a, b, value) per log record, in log order."""
    return pa.table(
        {
            RECORD_KEY: [r[0] for r in rows],
            "a": pa.array([r[1] for r in rows], pa.int64()),
            "b": pa.array([r[2] for r in rows], pa.int64()),
            "v": [r[3] for r in rows],
            DELETED: [False] * len(rows),
            NATURAL: [False] * len(rows),
            SEQ: pa.array(range(len(rows)), pa.int64()),
        }
    )


def base(rows: list[tuple[str, int, int, str]]) -> pa.Table:
    return log(rows).drop_columns([DELETED, NATURAL, SEQ])


def values(table: pa.Table) -> dict[str, str]:
    return dict(zip(table.column(RECORD_KEY).to_pylist(), table.column("v").to_pylist()))


def test_ordering_columns_split_the_comma_separated_fields():
    assert ordering_columns("a, b") == ["a", "b"]
    assert ordering_columns("ts") == ["ts"]
    assert ordering_columns(None) == [] and ordering_columns("") == []


def test_tuple_greater_is_lexicographic_and_null_is_not_greater():
    left = [pa.array([2, 2, 1, None]), pa.array([1, 5, 9, 1])]
    right = [pa.array([1, 2, 2, 0]), pa.array([9, 3, 0, 0])]
    assert tuple_greater(ARROW, left, right).to_pylist() == [True, True, False, False]


def test_log_versions_resolve_by_the_greatest_tuple_not_the_first_field_alone():
    records = log([("k", 1, 9, "first"), ("k", 2, 1, "tuple-max"), ("k", 2, 0, "latest")])
    assert values(resolve_log(records, EVENT, "a,b")) == {"k": "tuple-max"}
    assert values(resolve_log(records, EVENT, "a")) == {"k": "latest"}  # tie on a: later wins
    # Several ordering fields are table version 9: Hudi 1.2's commit-time merger takes the latest.
    assert values(resolve_log(records, COMMIT, "a,b", ordered_deletes=True)) == {"k": "latest"}


def test_base_record_wins_only_when_its_tuple_is_greater():
    stored = base([("x", 2, 5, "base-x"), ("y", 2, 1, "base-y"), ("z", 3, 0, "base-z")])
    winners = resolve_log(
        log([("x", 2, 3, "log-x"), ("y", 2, 3, "log-y"), ("z", 2, 9, "log-z")]), EVENT, "a,b"
    )
    merged = values(merge_with_base(stored, winners, EVENT, "a,b"))
    assert merged == {"x": "base-x", "y": "log-y", "z": "base-z"}


def test_commit_time_ordering_ignores_the_ordering_fields():
    stored = base([("x", 9, 9, "base-x")])
    winners = resolve_log(log([("x", 1, 1, "log-x")]), COMMIT, "a,b")
    assert values(merge_with_base(stored, winners, COMMIT, "a,b")) == {"x": "log-x"}


def test_a_nested_ordering_field_orders_log_versions_deletes_and_the_base():
    """`meta.ts` (Hudi's nested precombine field), also carried by delete records."""
    data_schema = pa.schema(
        [
            pa.field("meta", pa.struct([pa.field("ts", pa.int64()), pa.field("src", pa.string())])),
            pa.field("v", pa.string()),
        ]
    )
    schema = with_meta_fields(data_schema)
    avro = arrow_to_avro_json(data_schema, "t", with_meta_fields=True)

    def record(key, ts, value):  # type: ignore[no-untyped-def]
        meta = {name: None for name in schema.names}
        return {
            **meta,
            RECORD_KEY: key,
            PARTITION_PATH: "p",
            "meta": {"ts": ts, "src": "x"},
            "v": value,
        }

    data = avro_data_block(
        "001",
        avro,
        [record("a", 5, "a5"), record("a", 4, "a4"), record("b", 5, "b5"), record("c", 5, "c5")],
    )
    # a delete of b with a smaller ordering value loses; one of c with a greater one wins.
    deletes = delete_block("002", [DeleteRecord("b", "p", 3), DeleteRecord("c", "p", 9)])
    blocks = list(iter_blocks(encode_blocks([data, deletes]), read_content=True))
    winners = resolve_log(log_records(blocks, schema, "meta.ts"), EVENT, "meta.ts")
    live = winners.filter(pa.compute.invert(winners.column(DELETED)))
    assert values(live) == {"a": "a5", "b": "b5"}
    stored = pa.table(
        {RECORD_KEY: ["a", "d"], "meta": [{"ts": 9, "src": "y"}, None], "v": ["base-a", "base-d"]}
    )
    merged = merge_with_base(
        stored, winners.select([*stored.column_names, SEQ, DELETED, NATURAL]), EVENT, "meta.ts"
    )
    assert values(merged) == {"a": "base-a", "b": "b5", "d": "base-d"}
