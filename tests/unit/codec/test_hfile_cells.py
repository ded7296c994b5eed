"""The vectorised HFile cell layout: the shapes it handles, the ones it leaves to the walk, errors."""

from __future__ import annotations

import struct

import pytest

from pyhudi.codec.hfile import HFileReader, write_hfile
from pyhudi.codec.hfile.blocks import crc32c, crc32c_python, decode_cells, encode_cell
from pyhudi.codec.hfile.cells import _vectorised_starts, cell_layout
from pyhudi.exceptions import CorruptFileError


def _block(items: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(encode_cell(row, value) for row, value in items)


def test_layout_of_uniform_cells_is_vectorised_and_exact() -> None:
    items = [(f"key-{i:010d}".encode(), b"v" * (i % 7)) for i in range(5000)]
    payload = _block(items)
    assert _vectorised_starts(payload, mvcc=True) is not None
    layout = cell_layout(payload, mvcc=True, tags=False)
    assert layout.rows().to_pylist() == [row for row, _ in items]
    assert layout.lists() == decode_cells(payload, mvcc=True, tags=False)


def test_layout_of_many_row_lengths_is_vectorised() -> None:
    items = sorted((f"k{i}".encode(), b"value") for i in range(3000))  # 2..5-byte rows
    payload = _block(items)
    assert _vectorised_starts(payload, mvcc=True) is not None
    assert cell_layout(payload, mvcc=True, tags=False).lists() == decode_cells(
        payload, mvcc=True, tags=False
    )


def test_multibyte_memstore_timestamp_falls_back_to_the_walk() -> None:
    cell = encode_cell(b"a", b"v")[:-1] + bytes([0x8F, 0x01])  # vlong of 1 byte + 1: 300-ish
    payload = cell + encode_cell(b"b", b"w")
    assert _vectorised_starts(payload, mvcc=True) is None
    assert cell_layout(payload, mvcc=True, tags=False).lists() == decode_cells(
        payload, mvcc=True, tags=False
    )


def test_cells_with_tags_are_walked() -> None:
    cell = encode_cell(b"a", b"v")[:-1] + struct.pack(">H", 3) + b"tag" + b"\x00"
    layout = cell_layout(cell, mvcc=True, tags=True)
    assert layout.lists() == ([b"a"], [b"v"])


def test_empty_block_has_no_cells() -> None:
    assert len(cell_layout(b"", mvcc=True, tags=False)) == 0


def test_truncated_block_is_corrupt() -> None:
    payload = _block([(b"a", b"value"), (b"b", b"value")])
    with pytest.raises(CorruptFileError):
        cell_layout(payload[:-3], mvcc=True, tags=False)


def test_reader_blocks_for_keys_and_prefixes_cover_the_rows() -> None:
    items = [(f"{p}{i:05d}".encode(), b"x" * 50) for p in "abc" for i in range(400)]
    reader = HFileReader(write_hfile(items, block_size=2048))
    assert reader.data_block_count > 10
    for key, _ in items[::37]:
        rows = {
            row for i in reader.blocks_holding([key]) for row in reader.cell_columns(i).lists()[0]
        }
        assert key in rows
    wanted = sorted(row for row, _ in items if row.startswith(b"b"))
    got = sorted(
        row
        for i in reader.blocks_with_prefix(b"b")
        for row in reader.cell_columns(i).lists()[0]
        if row.startswith(b"b")
    )
    assert got == wanted
    assert len(reader.blocks_with_prefix(b"b")) < reader.data_block_count


def test_fast_crc32c_equals_the_python_one() -> None:
    data = bytes(range(256)) * 100
    assert crc32c(data) == crc32c_python(data) == crc32c(data[100:], crc32c(data[:100]))
