"""Log deletes with ordering values (Hudi 0.15 writes `_hoodie_is_deleted` upserts of a
merge-on-read table so): how the writer encodes them and how the log resolution applies them."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pyhudi.codec.log.delete_content import (
    OrderingWrapper,
    decode_delete_records,
    encode_delete_records,
)
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.log_append import delete_entries
from pyhudi.merge.config import MergeMode
from pyhudi.merge.record_merger import (
    DELETED,
    NATURAL,
    SEQ,
    applied_deletes,
    merge_with_base,
    resolve_log,
)

EVENT = MergeMode.EVENT_TIME_ORDERING

#: Events of one key, oldest first: ("r", ts) a log record, ("d", ts) an ordered delete,
#: ("n", None) a natural-order delete; then the key's final version (None: deleted).
Case = tuple[list[tuple[str, int | None]], str | None]
CASES: list[Case] = [
    ([("r", 7), ("d", 6)], "r7"),  # stale delete against a newer update in the log: ignored
    ([("r", 5), ("d", 7)], None),
    ([("r", 5), ("d", 5)], None),  # equal: the delete applies
    ([("d", 7), ("r", 5)], "r5"),  # a record replaces a delete marker whatever its value
    ([("r", 5), ("d", 3), ("r", 1)], "r5"),
    ([("r", 5), ("d", 7), ("r", 6), ("d", 6)], None),
    ([("r", 5), ("d", 7), ("r", 6), ("d", 4)], "r6"),
    ([("r", 9), ("d", 3), ("n", None)], None),
    ([("r", 9), ("d", 3), ("d", 4), ("r", 2)], "r9"),
    ([("r", 5), ("d", 3), ("r", 8), ("d", 6)], "r8"),
    ([("r", None), ("d", 1)], None),  # a null record value is smallest
    ([("d", 2)], None),
]


def _log(cases: list[Case]) -> pa.Table:
    rows: list[tuple[str, str, int | None]] = []
    for index, (events, _) in enumerate(cases):
        rows.extend((f"k{index}", kind, ts) for kind, ts in events)
    return pa.table(
        {
            RECORD_KEY: [r[0] for r in rows],
            PARTITION_PATH: ["p"] * len(rows),
            "ts": pa.array([r[2] for r in rows], pa.int64()),
            "v": [f"{r[1]}{r[2]}" if r[1] == "r" else None for r in rows],
            DELETED: [r[1] != "r" for r in rows],
            NATURAL: [r[1] == "n" for r in rows],
            SEQ: pa.array(range(len(rows)), pa.int64()),
        }
    )


def _live(table: pa.Table) -> dict[str, str]:
    live = table.filter(pa.compute.invert(table.column(DELETED)))
    return dict(zip(live.column(RECORD_KEY).to_pylist(), live.column("v").to_pylist()))


def test_an_ordered_delete_applies_unless_the_current_log_version_is_greater() -> None:
    winners = resolve_log(_log(CASES), EVENT, "ts")
    expected = {f"k{i}": final for i, (_, final) in enumerate(CASES) if final is not None}
    assert _live(winners) == expected
    assert sorted(winners.column(RECORD_KEY).to_pylist()) == sorted(
        f"k{i}" for i in range(len(CASES))
    )


def test_each_case_alone_resolves_as_in_the_batch() -> None:
    for case in CASES:
        winners = resolve_log(_log([case]), EVENT, "ts")
        assert _live(winners) == ({"k0": case[1]} if case[1] else {}), case


def test_only_natural_deletes_need_no_rounds() -> None:
    log = _log([([("r", 5), ("n", None), ("r", 1)], "r1")])
    assert applied_deletes(log, ["ts"]).tolist() == [False, True, False]


def test_a_delete_that_won_the_log_beats_the_base_record() -> None:
    log = _log([([("r", 5), ("d", 6)], None), ([("r", 9), ("d", 6)], "r9")])
    base = pa.table(
        {RECORD_KEY: ["k0", "k1"], "ts": pa.array([9, 9], pa.int64()), "v": ["b0", "b1"]}
    )
    winners = resolve_log(log, EVENT, "ts").select([*base.column_names, SEQ, DELETED, NATURAL])
    merged = merge_with_base(base, winners, EVENT, "ts")
    assert dict(zip(merged.column(RECORD_KEY).to_pylist(), merged.column("v").to_pylist())) == {
        "k1": "r9"
    }


@pytest.mark.parametrize(
    ("data_type", "wrapper"),
    [
        (pa.int64(), OrderingWrapper.LONG),
        (pa.int32(), OrderingWrapper.INT),
        (pa.string(), OrderingWrapper.STRING),
        (pa.float64(), OrderingWrapper.DOUBLE),
    ],
)
def test_deletes_carry_the_ordering_value_in_the_wrapper_of_its_java_class(
    data_type: pa.DataType, wrapper: OrderingWrapper
) -> None:
    value = "7" if pa.types.is_string(data_type) else 7
    deletes = pa.table(
        {
            RECORD_KEY: ["a", "b"],
            PARTITION_PATH: ["p", "p"],
            "ts": pa.array([value, None], data_type),
        }
    )
    entries = decode_delete_records(encode_delete_records(delete_entries(deletes, "ts")))
    assert [(e.ordering_wrapper, e.ordering_value) for e in entries] == [
        (wrapper, value),
        (OrderingWrapper.INT, 0),  # a null value: natural order
    ]
    assert entries[1].is_natural_order and not entries[0].is_natural_order


def test_the_delete_operation_and_nested_types_keep_natural_order() -> None:
    deletes = pa.table(
        {
            RECORD_KEY: ["a"],
            PARTITION_PATH: ["p"],
            "ts": pa.array([7], pa.int64()),
            "at": pa.array([1], pa.timestamp("us")),
        }
    )
    for ordering in (None, "at", "ts,at", "missing"):
        assert [e.is_natural_order for e in delete_entries(deletes, ordering)] == [True], ordering


def test_deletes_with_several_ordering_fields_carry_an_array_wrapper_as_hudi_1_2():
    """Ordering fields `a,b` (tables of version 8 and 9): each delete's values go in Hudi 1.1+'s
    `ArrayWrapper` (union branch 12), one wrapper per field's type; a null value keeps the delete
    in natural order. The block decodes to the same records and re-encodes to the same bytes."""
    deletes = pa.table(
        {
            RECORD_KEY: ["k1", "k2"],
            PARTITION_PATH: ["p", "p"],
            "a": pa.array([5, None], pa.int64()),
            "b": pa.array(["x", "y"]),
        }
    )
    first, second = delete_entries(deletes, "a,b")
    assert first.ordering_wrapper is OrderingWrapper.ARRAY
    assert first.ordering_value == (5, "x")
    assert first.element_wrappers == (OrderingWrapper.LONG, OrderingWrapper.STRING)
    assert second.is_natural_order
    content = encode_delete_records([first, second])
    decoded = decode_delete_records(content)
    assert decoded == [first, second]
    assert encode_delete_records(decoded) == content
