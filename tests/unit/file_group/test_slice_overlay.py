"""Merge-on-read by position: which base rows a slice's logs drop, and the delete-vector bitmap."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from tests.unit.merge.test_merge_ordering import EVENT, base, log, values

from pyhudi.file_group.slice_overlay import delete_vector_words
from pyhudi.merge.record_merger import DELETED, merge_with_base, overlay


def test_overlay_drops_replaced_and_deleted_base_rows_and_keeps_stale_updates_out():
    stored = base([("x", 5, 0, "base-x"), ("y", 1, 0, "base-y"), ("z", 1, 0, "base-z")])
    winners = log([("x", 3, 0, "log-x"), ("y", 2, 0, "log-y"), ("w", 0, 0, "log-w")])
    winners = winners.set_column(
        winners.schema.get_field_index(DELETED), DELETED, pa.array([False, False, False])
    )
    keep, live = overlay(stored.select(["_hoodie_record_key", "a", "b"]), winners, EVENT, "a")
    assert keep.to_pylist() == [True, False, True]  # x: the base is newer; y: replaced
    assert values(live) == {"y": "log-y", "w": "log-w"}
    # The positional result is the same snapshot as the whole-row merge.
    kept = stored.filter(keep)
    assert values(kept) | values(live) == values(merge_with_base(stored, winners, EVENT, "a"))


def test_delete_vector_sets_bit_p_and_63_of_word_p_shift_6():
    positions = np.array([0, 5, 63, 64, 200], dtype=np.int64)
    words = delete_vector_words(positions)
    assert len(words) == 4  # 201 rows need 4 words
    bits = [p for p in range(256) if (int(words[p >> 6]) >> (p & 63)) & 1]
    assert bits == [0, 5, 63, 64, 200]
    assert words[0] < 0  # bit 63 is the sign bit of the int64 word, as Spark's getbit reads it
    assert len(delete_vector_words(np.zeros(0, dtype=np.int64))) == 0
