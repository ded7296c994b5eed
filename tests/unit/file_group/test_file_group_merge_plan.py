"""`pyhudi.file_group.control_columns.plan_merge`: how incoming records merge into a stored base file (pure Arrow)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pyhudi.codec.schema import COMMIT_SEQNO, COMMIT_TIME, RECORD_KEY
from pyhudi.file_group.merge import MergeSpec, merged_rows, plan_merge
from pyhudi.merge.config import MergeMode

LATEST = MergeSpec(MergeMode.COMMIT_TIME_ORDERING, None)
EVENT_TIME = MergeSpec(MergeMode.EVENT_TIME_ORDERING, "ts")


def records(*rows: tuple[str, int, str]) -> pa.Table:
    """(key, ts, value) rows as a table keyed by `_hoodie_record_key`."""
    return pa.table(
        {
            RECORD_KEY: pa.array([r[0] for r in rows], pa.string()),
            "ts": pa.array([r[1] for r in rows], pa.int64()),
            "v": pa.array([r[2] for r in rows], pa.string()),
        }
    )


def merge(
    old: pa.Table, incoming: pa.Table, deletes: list[bool] | None = None, spec: MergeSpec = LATEST
):
    """The merged file's rows as (key, value), and the plan's counters."""
    flags = pa.chunked_array(
        [pa.array(deletes if deletes is not None else [False] * incoming.num_rows, pa.bool_())]
    )
    plan = plan_merge(old, incoming, flags, spec)
    kept = old.take(pa.array(plan.take_old, pa.int64()))
    written = incoming.take(pa.array(plan.take_new, pa.int64())).cast(
        old.schema
    )  # the writer conforms both
    merged = pa.concat_tables([kept, written]).take(pa.array(plan.order, pa.int64()))
    rows = [(r[RECORD_KEY], r["v"]) for r in merged.to_pylist()]
    return rows, (plan.num_updates, plan.num_inserts, plan.num_deletes), plan


OLD = records(("a", 1, "a0"), ("b", 5, "b0"), ("c", 3, "c0"))


def test_updates_replace_stored_rows_in_place():
    rows, counts, _ = merge(OLD, records(("c", 9, "c1"), ("a", 9, "a1")))
    assert rows == [("a", "a1"), ("b", "b0"), ("c", "c1")]
    assert counts == (2, 0, 0)


def test_inserts_are_appended_after_stored_rows_in_incoming_order():
    rows, counts, _ = merge(OLD, records(("z", 1, "z1"), ("d", 1, "d1")))
    assert rows == [("a", "a0"), ("b", "b0"), ("c", "c0"), ("z", "z1"), ("d", "d1")]
    assert counts == (0, 2, 0)


def test_deletes_drop_stored_rows():
    rows, counts, _ = merge(OLD, records(("b", 9, "gone")), [True])
    assert rows == [("a", "a0"), ("c", "c0")]
    assert counts == (0, 0, 1)


def test_delete_of_an_unknown_key_is_ignored():
    rows, counts, _ = merge(OLD, records(("x", 9, "gone")), [True])
    assert rows == [("a", "a0"), ("b", "b0"), ("c", "c0")]
    assert counts == (0, 0, 0)


def test_update_insert_and_delete_in_one_batch():
    rows, counts, _ = merge(
        OLD, records(("b", 2, "b1"), ("d", 1, "d1"), ("c", 9, "x")), [False, False, True]
    )
    assert rows == [("a", "a0"), ("b", "b1"), ("d", "d1")]
    assert counts == (1, 1, 1)


def test_commit_time_ordering_lets_a_stale_update_win():
    rows, counts, _ = merge(OLD, records(("b", 1, "stale")))
    assert rows == [("a", "a0"), ("b", "stale"), ("c", "c0")] and counts == (1, 0, 0)


def test_event_time_ordering_keeps_stored_record_when_incoming_ordering_value_is_smaller():
    rows, counts, _ = merge(
        OLD, records(("b", 4, "stale"), ("c", 9, "newer"), ("a", 1, "equal")), spec=EVENT_TIME
    )
    assert rows == [("a", "equal"), ("b", "b0"), ("c", "newer")]
    assert counts == (2, 0, 0)


def test_event_time_ordering_ignores_stale_deletes():
    rows, counts, _ = merge(
        OLD, records(("b", 4, "del"), ("c", 3, "del")), [True, True], spec=EVENT_TIME
    )
    assert rows == [("a", "a0"), ("b", "b0")]
    assert counts == (0, 0, 1)


def test_event_time_ordering_with_null_incoming_ordering_value_keeps_the_stored_record():
    """A null ordering value is the smallest (`pyhudi.merge.ordering`), as in the merge-on-read
    merge; Hudi 0.15 refuses such an upsert, pyhudi refuses it on write too."""
    incoming = pa.table({RECORD_KEY: ["b"], "ts": pa.array([None], pa.int64()), "v": ["null-ts"]})
    rows, _, _ = merge(OLD, incoming, spec=EVENT_TIME)
    assert rows[1] == ("b", "b0")


def test_event_time_ordering_casts_incoming_ordering_type_to_stored_type():
    incoming = pa.table(
        {RECORD_KEY: ["b", "c"], "ts": pa.array([4, 4], pa.int32()), "v": ["stale", "new"]}
    )
    rows, _, _ = merge(OLD, incoming, spec=EVENT_TIME)
    assert rows == [("a", "a0"), ("b", "b0"), ("c", "new")]


def test_event_time_ordering_without_the_ordering_column_falls_back_to_latest():
    spec = MergeSpec(MergeMode.EVENT_TIME_ORDERING, "missing")
    rows, _, _ = merge(OLD, records(("b", 1, "stale")), spec=spec)
    assert rows[1] == ("b", "stale")


def test_empty_incoming_keeps_the_file_unchanged():
    rows, counts, plan = merge(OLD, records())
    assert rows == [("a", "a0"), ("b", "b0"), ("c", "c0")] and counts == (0, 0, 0)
    assert plan.take_new.size == 0 and list(plan.order) == [0, 1, 2]


def test_merge_into_an_empty_file_inserts_everything():
    rows, counts, _ = merge(records(), records(("a", 1, "a1"), ("b", 1, "b1")))
    assert rows == [("a", "a1"), ("b", "b1")] and counts == (0, 2, 0)


def test_plan_positions_are_a_permutation_of_kept_and_written_rows():
    old = records(*[(f"k{i:03d}", i, "old") for i in range(50)])
    incoming = records(*[(f"k{i:03d}", 100, "new") for i in range(0, 80, 3)])
    deletes = [i % 4 == 0 for i in range(incoming.num_rows)]
    rows, counts, plan = merge(old, incoming, deletes)
    assert sorted(plan.order.tolist()) == list(range(len(plan.take_old) + len(plan.take_new)))
    assert plan.order.dtype == np.int64
    keys = [k for k, _ in rows]
    assert len(keys) == len(set(keys)) == 50 + counts[1] - counts[2]
    stored = [k for k in keys if k < "k050"]
    assert stored == sorted(stored), "stored rows keep file order"


def test_duplicate_incoming_records_for_a_stored_key_leave_one_row():
    rows, counts, _ = merge(OLD, records(("a", 7, "a1"), ("a", 8, "a2")))
    assert [k for k, _ in rows].count("a") == 1
    assert counts[1] == 0


def test_merged_rows_keep_carried_over_meta_and_number_new_rows_by_file_position():
    """One take over (stored, incoming): an update in place and an insert get this instant's
    commit time and `<instant>_<task>_<position in the file>`; kept rows keep theirs."""

    def stamped(table: pa.Table, time: str) -> pa.Table:
        n = table.num_rows
        return table.append_column(COMMIT_TIME, pa.array([time] * n)).append_column(
            COMMIT_SEQNO, pa.array([f"{time}_0_{i}" for i in range(n)])
        )

    old = stamped(OLD, "001")
    incoming = stamped(records(("d", 9, "d1"), ("b", 9, "b1")), "ignored")
    flags = pa.chunked_array([pa.array([False, False])])
    plan = plan_merge(old, incoming, flags, LATEST)
    rows = merged_rows(old, incoming, plan, "002", 4).to_pylist()
    assert [(r[RECORD_KEY], r["v"], r[COMMIT_TIME], r[COMMIT_SEQNO]) for r in rows] == [
        ("a", "a0", "001", "001_0_0"),
        ("b", "b1", "002", "002_4_1"),
        ("c", "c0", "001", "001_0_2"),
        ("d", "d1", "002", "002_4_3"),
    ]
