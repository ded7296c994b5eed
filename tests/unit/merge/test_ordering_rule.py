"""The event-time ordering rule (`pyhudi.merge.ordering`): when a later record replaces an
earlier one, with null ordering values on either side, equal values and ordering tuples."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pyhudi.codec.schema import RECORD_KEY
from pyhudi.file_group.merge import MergeSpec, plan_merge
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import ARROW, earlier_stays, ordering_columns, tuple_greater
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base, resolve_log

#: (earlier, later, does the earlier record stay): Hudi 0.15's `DefaultHoodieRecordPayload`
#: (`persisted == null || persisted <= incoming` updates); null incoming: null is smallest.
TRUTH_TABLE = [
    (5, 3, True),
    (5, 5, False),
    (3, 5, False),
    (None, 5, False),
    (None, None, False),
    (5, None, True),
]


def test_earlier_record_stays_only_when_its_ordering_value_is_greater():
    earlier = pa.array([e for e, _, _ in TRUTH_TABLE], pa.int64())
    later = pa.array([lt for _, lt, _ in TRUTH_TABLE], pa.int64())
    stays = earlier_stays(ARROW, [earlier], [later])
    assert stays.null_count == 0
    assert stays.to_pylist() == [s for _, _, s in TRUTH_TABLE]


def test_ordering_tuples_compare_lexicographically_with_nulls_smallest():
    left = [pa.array([2, 2, 1, None, None, 1]), pa.array([1, 5, 9, 1, 2, None])]
    right = [pa.array([1, 2, 2, 0, None, 1]), pa.array([9, 3, 0, 0, 1, 0])]
    assert tuple_greater(ARROW, left, right).to_pylist() == [True, True, False, False, True, False]


def test_tuple_of_mismatched_lengths_is_refused():
    with pytest.raises(ValueError, match="ordering tuples"):
        tuple_greater(ARROW, [pa.array([1])], [])
    assert ordering_columns(" a , b ") == ["a", "b"]


def _log(rows: list[tuple[str, int | None, str]]) -> pa.Table:
    return pa.table(
        {
            RECORD_KEY: [r[0] for r in rows],
            "ts": pa.array([r[1] for r in rows], pa.int64()),
            "v": [r[2] for r in rows],
            DELETED: [False] * len(rows),
            NATURAL: [False] * len(rows),
            SEQ: pa.array(range(len(rows)), pa.int64()),
        }
    )


def _values(table: pa.Table) -> dict[str, str]:
    return dict(zip(table.column(RECORD_KEY).to_pylist(), table.column("v").to_pylist()))


def test_merge_on_read_overlay_follows_the_rule_with_null_ordering_values():
    keys = [f"k{i}" for i in range(len(TRUTH_TABLE))]
    base = _log([(k, e, f"base{k}") for k, (e, _, _) in zip(keys, TRUTH_TABLE)])
    base = base.drop_columns([DELETED, NATURAL, SEQ])
    log = _log([(k, lt, f"log{k}") for k, (_, lt, _) in zip(keys, TRUTH_TABLE)])
    winners = resolve_log(log, MergeMode.EVENT_TIME_ORDERING, "ts")
    merged = _values(merge_with_base(base, winners, MergeMode.EVENT_TIME_ORDERING, "ts"))
    assert merged == {k: ("base" if s else "log") + k for k, (_, _, s) in zip(keys, TRUTH_TABLE)}


def test_log_versions_resolve_by_the_rule_nulls_first_ties_to_the_later():
    log = _log([("a", 5, "a1"), ("a", None, "a2"), ("b", None, "b1"), ("b", None, "b2")])
    log = pa.concat_tables([log, _log([("c", None, "c1"), ("c", 1, "c2")])])
    log = log.set_column(log.schema.get_field_index(SEQ), SEQ, pa.array(range(6), pa.int64()))
    winners = resolve_log(log, MergeMode.EVENT_TIME_ORDERING, "ts")
    assert _values(winners) == {"a": "a1", "b": "b2", "c": "c2"}


def test_copy_on_write_merge_follows_the_rule_with_null_ordering_values():
    keys = [f"k{i}" for i in range(len(TRUTH_TABLE))]
    old = _log([(k, e, "old") for k, (e, _, _) in zip(keys, TRUTH_TABLE)])
    old = old.drop_columns([DELETED, NATURAL, SEQ])
    incoming = _log([(k, lt, "new") for k, (_, lt, _) in zip(keys, TRUTH_TABLE)])
    incoming = incoming.drop_columns([DELETED, NATURAL, SEQ])
    deletes = pa.chunked_array([pa.array([False] * len(keys))])
    plan = plan_merge(old, incoming, deletes, MergeSpec(MergeMode.EVENT_TIME_ORDERING, "ts"))
    kept = np.zeros(len(keys), dtype=bool)
    kept[plan.take_old] = True
    assert kept.tolist() == [s for _, _, s in TRUTH_TABLE]
    assert plan.num_updates == sum(not s for _, _, s in TRUTH_TABLE)
