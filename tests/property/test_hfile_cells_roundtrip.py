"""Properties of the vectorised cell layout: it finds exactly the cells the plain walk finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.hfile.blocks import decode_cells, encode_cell, encode_kv_key
from pyhudi.codec.hfile.cells import cell_layout

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
    assert [layout.value(i) for i in range(len(layout))] == [value for _, value in items]


@settings(max_examples=80, deadline=None)
@given(items=cells)
def test_layout_without_memstore_timestamps(items: list[tuple[bytes, bytes]]) -> None:
    payload = b"".join(encode_cell(row, value)[:-1] for row, value in items)  # no memstoreTS
    assert cell_layout(payload, mvcc=False, tags=False).lists() == decode_cells(
        payload, mvcc=False, tags=False
    )
