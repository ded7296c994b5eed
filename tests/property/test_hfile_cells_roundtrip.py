"""Properties of the vectorised cell layout: it finds exactly the cells the plain walk finds."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.hfile.blocks import decode_cells, encode_cell, encode_kv_key
from pyhudi.codec.hfile.cells import _gather, cell_layout

#: Values that look like the end of a key (family 0, Long.MAX_VALUE, Put) and like cell headers.
_TRAPS = [
    b"\x00\x7f" + b"\xff" * 7 + b"\x04",
    b"\x00\x00\x00\x0e\x00\x00\x00\x05\x00\x02ab\x00\x7f" + b"\xff" * 7 + b"\x04",
    encode_kv_key(b"k"),
]
values = st.one_of(
    st.binary(max_size=60),
    st.lists(st.sampled_from([*_TRAPS, b"x", b"\x7f"]), max_size=6).map(b"".join),
)
cells = st.lists(
    st.tuples(st.one_of(st.binary(max_size=24), st.sampled_from(_TRAPS)), values),
    max_size=80,
    unique_by=lambda cell: cell[0],
).map(sorted)


@settings(max_examples=200, deadline=None)
@given(items=cells)
def test_layout_finds_the_cells_the_walk_finds(items: list[tuple[bytes, bytes]]) -> None:
    payload = b"".join(encode_cell(row, value) for row, value in items)
    layout = cell_layout(payload, mvcc=True, tags=False)
    assert layout.lists() == decode_cells(payload, mvcc=True, tags=False)
    assert layout.rows().to_pylist() == [row for row, _ in items]
    assert layout.rows().equals(_gather(payload, layout.starts + 10, layout.row_lengths))
    assert [layout.value(i) for i in range(len(layout))] == [value for _, value in items]


@settings(max_examples=80, deadline=None)
@given(items=cells)
def test_layout_without_memstore_timestamps(items: list[tuple[bytes, bytes]]) -> None:
    payload = b"".join(encode_cell(row, value)[:-1] for row, value in items)  # no memstoreTS
    assert cell_layout(payload, mvcc=False, tags=False).lists() == decode_cells(
        payload, mvcc=False, tags=False
    )


def _blocks_per_key(rows: list[bytes], keys: list[bytes]) -> set[int]:
    """Per key, the block its first index row >= key points before and the block of the last
    index row <= key (the two index searches of a point lookup)."""
    found: set[int] = set()
    for key in keys:
        found.add(max(0, bisect_left(rows, key) - 1))
        found.add(max(0, bisect_right(rows, key) - 1))
    return {i for i in found if i < len(rows)}


def _may_hold(rows: list[bytes], i: int, key: bytes) -> bool:
    """Block `i` holds rows from its index row to the next block's, both included (the first
    block also rows before its index row)."""
    return (i == 0 or rows[i] <= key) and (i + 1 == len(rows) or key <= rows[i + 1])


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(st.binary(max_size=2), min_size=1, max_size=12).map(sorted),
    keys=st.lists(st.binary(max_size=2), max_size=12),
)
def test_blocks_holding_keys_are_the_blocks_that_may_hold_one(
    rows: list[bytes], keys: list[bytes]
) -> None:
    reader = HFileReader.__new__(HFileReader)
    reader._index_rows = rows
    found = reader.blocks_holding(keys)
    assert found == [i for i in range(len(rows)) if any(_may_hold(rows, i, k) for k in keys)]
    assert _blocks_per_key(rows, keys) <= set(found)
