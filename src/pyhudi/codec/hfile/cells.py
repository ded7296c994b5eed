"""Where the cells of an HFile data block are, found with numpy instead of one Python step a cell.

A data block is a run of cells (`int32 keyLength, int32 valueLength, key, value, [tags],
[memstoreTS vlong]`), so the position of a cell is only known from the one before it: a walk.
Reading a 200,000-entry record-index HFile that way costs ~1 s of Python; `cell_layout` finds the
same positions vectorised, exactly:

1. Every key Hudi writes ends in the same 10 bytes: family length 0, timestamp `Long.MAX_VALUE`,
   type Put (`00 7f ff ff ff ff ff ff ff 04`). Their positions `p` are candidates.
2. A cell with row length `r` ending its key at `p` starts at `s = p - 10 - r`, and must have
   `uint16 rowLength(s + 8) == r` and `keyLength(s) == r + 12`. The row lengths tried are those of
   the cells the walk meets (step 3): one numpy pass per distinct row length.
3. The chain check: the first start is 0, each start's next cell (`s + 8 + keyLength +
   valueLength [+ 1]`) is the next start found, the last one ends the block. When it holds, the
   starts are exactly the walk's; where it first breaks, the walk's cell there names a new row
   length to try. A key of another shape (tags, a multi-byte memstoreTS, another type or
   timestamp) or too many row lengths fall back to the plain Python walk: never a wrong answer.

`CellColumns` holds the positions and hands out rows (an Arrow binary array, for vectorised
matching) and single values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pyhudi.codec.hfile.blocks import TYPE_PUT, decode_vlong
from pyhudi.exceptions import CorruptFileError

#: Passes over distinct row lengths before the plain walk takes over.
_MAX_ROW_LENGTHS = 24
#: Key bytes after the row (family length 0, timestamp Long.MAX_VALUE, type Put).
_KEY_TAIL = b"\x00\x7f" + b"\xff" * 7 + bytes([TYPE_PUT])
_KEY_EXTRA = 2 + len(_KEY_TAIL)  # row length field + the tail = keyLength - rowLength
_TIMESTAMP_WORD = int.from_bytes(_KEY_TAIL[1:9], "big")


@dataclass(frozen=True)
class CellColumns:
    """The cells of one data block: start offsets, key, value and row lengths (numpy int64)."""

    payload: bytes
    starts: np.ndarray
    key_lengths: np.ndarray
    value_lengths: np.ndarray
    row_lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def rows(self) -> pa.BinaryArray:
        """Every cell's row key, in order, as one Arrow binary array (no Python object per row)."""
        return _gather(self.payload, self.starts + 10, self.row_lengths)

    def row(self, index: int) -> bytes:
        start = int(self.starts[index]) + 10
        return self.payload[start : start + int(self.row_lengths[index])]

    def value(self, index: int) -> bytes:
        start = int(self.starts[index]) + 8 + int(self.key_lengths[index])
        return self.payload[start : start + int(self.value_lengths[index])]

    def lists(self) -> tuple[list[bytes], list[bytes]]:
        """(rows, values) as lists of bytes (the `HFileReader` cache's form)."""
        data = self.payload
        row_at = (self.starts + 10).tolist()
        value_at = (self.starts + 8 + self.key_lengths).tolist()
        rows = [data[a : a + n] for a, n in zip(row_at, self.row_lengths.tolist(), strict=True)]
        values = [
            data[a : a + n] for a, n in zip(value_at, self.value_lengths.tolist(), strict=True)
        ]
        return rows, values


def cell_layout(payload: bytes, *, mvcc: bool, tags: bool) -> CellColumns:
    """The positions of every cell of a data block payload (`CorruptFileError` when cells do not
    tile the block)."""
    starts = None if tags else _vectorised_starts(payload, mvcc)
    if starts is None:
        starts = _walked_starts(payload, mvcc=mvcc, tags=tags)
    buf = np.frombuffer(payload, np.uint8)
    keys, values = _int32_at(buf, starts), _int32_at(buf, starts + 4)
    rows = _uint16_at(buf, starts + 8) if len(starts) else starts
    if len(starts) and (np.any(keys < rows + 2) or np.any(values < 0)):
        raise CorruptFileError("HFile cell runs past its key")
    return CellColumns(payload, starts, keys, values, rows)


def _vectorised_starts(payload: bytes, mvcc: bool) -> np.ndarray | None:
    """Cell starts by steps 1-3 of the module docstring, or None (walk instead)."""
    buf = np.frombuffer(payload, np.uint8)
    end = len(buf)
    if end == 0:
        return np.zeros(0, np.int64)
    if end < 8 + _KEY_EXTRA:
        return None
    tails = _tail_positions(buf)
    found = np.full(len(tails), -1, np.int64)
    tried: set[int] = set()
    length = int(_uint16_at(buf, np.array([8], np.int64))[0])
    for _ in range(_MAX_ROW_LENGTHS):
        if length in tried:
            return None  # the chain breaks on a cell no row length explains
        tried.add(length)
        _resolve(buf, tails, found, length)
        starts = found[found >= 0]  # distinct: one row length per start
        if len(starts) > 1 and np.any(starts[1:] < starts[:-1]):
            starts = np.sort(starts)
        broken = _first_break(buf, starts, mvcc)
        if broken is None:
            return starts
        if broken == _GIVE_UP or broken + 10 > end:
            return None
        length = int(_uint16_at(buf, np.array([broken + 8], np.int64))[0])
    return None


def _tail_positions(buf: np.ndarray) -> np.ndarray:
    """Positions of `_KEY_TAIL` (the family-length byte) that leave room for a row length field."""
    size = len(_KEY_TAIL)
    last = len(buf) - size
    marks = np.flatnonzero(buf[1 : last + 1] == _KEY_TAIL[1]) + 1 if last >= 1 else np.zeros(0)
    marks = marks[marks >= 10].astype(np.int64)
    if len(marks) == 0:
        return marks
    # the 8 bytes from 0x7f (the timestamp Long.MAX_VALUE) compared as one word, then the 2 others
    words = np.ndarray((len(buf) - 7,), ">u8", buffer=buf, strides=(1,))
    marks = marks[words[marks] == _TIMESTAMP_WORD]
    marks = marks[(buf[marks - 1] == _KEY_TAIL[0]) & (buf[marks + 8] == _KEY_TAIL[-1])]
    return marks - 1


def _resolve(buf: np.ndarray, tails: np.ndarray, found: np.ndarray, row_length: int) -> None:
    """Set `found` for the key tails a cell of `row_length` explains."""
    open_ = found < 0
    starts = tails - 10 - row_length
    ok = open_ & (starts >= 0)
    idx = np.flatnonzero(ok)
    cand = starts[idx]
    good = (_uint16_at(buf, cand + 8) == row_length) & (
        _int32_at(buf, cand) == row_length + _KEY_EXTRA
    )
    found[idx[good]] = cand[good]


_GIVE_UP = -1


def _first_break(buf: np.ndarray, starts: np.ndarray, mvcc: bool) -> int | None:
    """None when `starts` is the whole walk; else the walk's first cell start missing from
    `starts`, or `_GIVE_UP` (a cell shape the vectorised path does not follow)."""
    end = len(buf)
    if len(starts) == 0 or starts[0] != 0:
        return 0
    nxt = starts + 8 + _int32_at(buf, starts) + _int32_at(buf, starts + 4)
    if mvcc:
        if int(nxt.max()) >= end:
            return _GIVE_UP
        if np.any(buf[nxt].view(np.int8) < -112):  # a multi-byte memstoreTS
            return _GIVE_UP
        nxt = nxt + 1
    expected = np.append(starts[1:], end)
    bad = np.flatnonzero(nxt != expected)
    if len(bad) == 0:
        return None
    walked = int(nxt[bad[0]])
    # past the next start found: that start is not a cell (a key-like value): walk instead
    return walked if walked < int(expected[bad[0]]) else _GIVE_UP


def _walked_starts(payload: bytes, *, mvcc: bool, tags: bool) -> np.ndarray:
    """The plain walk (any cell shape HBase allows)."""
    starts: list[int] = []
    pos, end = 0, len(payload)
    try:
        while pos < end:
            starts.append(pos)
            key_length = int.from_bytes(payload[pos : pos + 4], "big", signed=True)
            value_length = int.from_bytes(payload[pos + 4 : pos + 8], "big", signed=True)
            if key_length < 2 or value_length < 0 or pos + 8 + key_length + value_length > end:
                raise CorruptFileError(f"HFile cell at {pos} runs past its block")
            pos += 8 + key_length + value_length
            if tags:
                pos += 2 + int.from_bytes(payload[pos : pos + 2], "big")
            if mvcc:
                pos = decode_vlong(payload, pos)[1]
    except IndexError as exc:
        raise CorruptFileError(f"truncated HFile data block: {exc}") from exc
    if pos != end:
        raise CorruptFileError("HFile data block ends inside a cell")
    return np.asarray(starts, np.int64)


def _int32_at(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Big-endian int32 at each offset (offsets must leave 4 bytes)."""
    return _at(buf, at, ">i4")


def _uint16_at(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Big-endian uint16 at each offset (offsets must leave 2 bytes)."""
    return _at(buf, at, ">u2")


def _at(buf: np.ndarray, at: np.ndarray, dtype: str) -> np.ndarray:
    """The `dtype` value starting at each byte offset `at` (an unaligned strided view, no copy)."""
    size = np.dtype(dtype).itemsize
    if len(at) == 0:
        return np.zeros(0, np.int64)
    if int(at.max()) + size > len(buf) or int(at.min()) < 0:
        raise CorruptFileError("HFile cell header runs past its block")
    view = np.ndarray((len(buf) - size + 1,), dtype, buffer=buf, strides=(1,))
    return view[at].astype(np.int64)


def _gather(payload: bytes, starts: np.ndarray, lengths: np.ndarray) -> pa.BinaryArray:
    """The byte ranges (`starts`, `lengths`) of `payload` as an Arrow binary array."""
    offsets = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if total >= 1 << 31:
        raise CorruptFileError("HFile rows of one block exceed 2 GiB")
    idx = np.repeat(starts - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    data = np.frombuffer(payload, np.uint8)[idx]
    return pa.BinaryArray.from_buffers(
        pa.binary(),
        len(starts),
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data.tobytes())],
    )
