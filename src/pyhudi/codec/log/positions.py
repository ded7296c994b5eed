"""The `RECORD_POSITIONS` log block header (ordinal 5): the block's records' row positions in the
file slice's base file, as Hudi's `LogReaderUtils.encodePositions` writes them.

The value is Base64 (`java.util.Base64`, with padding) of a `Roaring64NavigableMap` serialized
in the portable format (`serializePortable`), all integers little-endian:

* uint64 number of buckets, then per bucket (ascending high 32 bits of the positions):
  uint32 high bits, then a 32-bit RoaringBitmap of the low bits in the portable format:
* cookie: uint32 12346 and a uint32 container count (no run containers), or a uint16 12347 and
  a uint16 count-1 followed by a bit set of which containers are runs;
* per container: uint16 key (bits 16..31) and uint16 cardinality-1; then uint32 byte offsets
  of the containers (always without runs, with runs when there are at least 4 containers);
* containers: an array (cardinality <= 4096: sorted uint16), a bitmap (1024 uint64 words) or a
  run container (uint16 run count, then uint16 start / length-1 pairs).

`encode_positions` writes array and bitmap containers only (Java's `runOptimize` may use runs;
both are valid); `decode_positions` reads all three kinds.
"""

from __future__ import annotations

import base64
import binascii
import struct

import numpy as np

_NO_RUN_COOKIE = 12346
_RUN_COOKIE = 12347
_ARRAY_MAX = 4096
_NO_OFFSET_THRESHOLD = 4
_U16, _U32, _U64 = np.dtype("<u2"), np.dtype("<u4"), np.dtype("<u8")


class PositionsFormatError(ValueError):
    """A RECORD_POSITIONS value that is not a Base64 portable Roaring64NavigableMap."""


def encode_positions(positions: np.ndarray) -> str:
    """The header value for row `positions` (non-negative integers, any order, duplicates ignored)."""
    values = np.unique(np.asarray(positions, dtype=np.int64))
    if len(values) and values[0] < 0:
        raise ValueError(f"record positions must be non-negative, got {int(values[0])}")
    values = values.astype(np.uint64)
    highs = (values >> np.uint64(32)).astype(np.uint32)
    bounds = np.flatnonzero(np.diff(highs)) + 1
    parts = [struct.pack("<Q", len(np.unique(highs)) if len(values) else 0)]
    for chunk in np.split(values, bounds) if len(values) else ():
        parts.append(struct.pack("<I", int(chunk[0] >> np.uint64(32))))
        parts.append(_encode_bitmap32((chunk & np.uint64(0xFFFFFFFF)).astype(np.uint32)))
    return base64.b64encode(b"".join(parts)).decode("ascii")


def _encode_bitmap32(low: np.ndarray) -> bytes:
    keys = (low >> 16).astype(np.uint16)
    bounds = np.flatnonzero(np.diff(keys)) + 1
    chunks = np.split((low & 0xFFFF).astype(np.uint16), bounds)
    containers = [_container_bytes(c) for c in chunks]
    header = [struct.pack("<II", _NO_RUN_COOKIE, len(chunks))]
    header += [struct.pack("<HH", int(k), len(c) - 1) for k, c in zip(keys[[0, *bounds]], chunks)]
    offset = 8 + 8 * len(chunks)
    for data in containers:
        header.append(struct.pack("<I", offset))
        offset += len(data)
    return b"".join([*header, *containers])


def _container_bytes(values: np.ndarray) -> bytes:
    if len(values) <= _ARRAY_MAX:
        return values.astype(_U16).tobytes()
    words = np.zeros(1024, dtype=np.uint64)
    v = values.astype(np.uint64)
    np.bitwise_or.at(words, v >> np.uint64(6), np.left_shift(np.uint64(1), v & np.uint64(63)))
    return words.astype(_U64).tobytes()


def decode_positions(value: str) -> np.ndarray:
    """The ascending int64 positions of a header value written by Hudi or `encode_positions`."""
    try:
        data = base64.b64decode(value.strip(), validate=True)
        buckets = struct.unpack_from("<Q", data, 0)[0]
        pos, parts = 8, []
        for _ in range(buckets):
            high = struct.unpack_from("<I", data, pos)[0]
            low, pos = _decode_bitmap32(data, pos + 4)
            parts.append((np.uint64(high) << np.uint64(32)) | low.astype(np.uint64))
    except (binascii.Error, struct.error, ValueError, IndexError) as error:
        raise PositionsFormatError(f"RECORD_POSITIONS header is not readable: {error}") from error
    if pos != len(data):
        raise PositionsFormatError(f"RECORD_POSITIONS header has {len(data) - pos} trailing bytes")
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _decode_bitmap32(data: bytes, pos: int) -> tuple[np.ndarray, int]:
    cookie = struct.unpack_from("<I", data, pos)[0]
    if cookie == _NO_RUN_COOKIE:
        count, pos, runs = struct.unpack_from("<I", data, pos + 4)[0], pos + 8, b""
    elif cookie & 0xFFFF == _RUN_COOKIE:
        count = (cookie >> 16) + 1
        runs, pos = data[pos + 4 : pos + 4 + (count + 7) // 8], pos + 4 + (count + 7) // 8
    else:
        raise ValueError(f"unknown roaring cookie {cookie}")
    described = np.frombuffer(data, _U16, 2 * count, pos).reshape(count, 2).astype(np.uint32)
    pos += 4 * count
    if not runs or count >= _NO_OFFSET_THRESHOLD:
        pos += 4 * count  # container offsets: containers are read in order, so not needed
    parts = []
    for i, (key, card_minus_one) in enumerate(described):
        is_run = bool(runs) and bool(runs[i // 8] >> (i % 8) & 1)
        values, pos = _decode_container(data, pos, int(card_minus_one) + 1, is_run)
        parts.append((key << 16) | values)
    return (np.concatenate(parts) if parts else np.zeros(0, np.uint32)), pos


def _decode_container(
    data: bytes, pos: int, cardinality: int, is_run: bool
) -> tuple[np.ndarray, int]:
    if is_run:
        n = struct.unpack_from("<H", data, pos)[0]
        pairs = np.frombuffer(data, _U16, 2 * n, pos + 2).reshape(n, 2).astype(np.uint32)
        ranges = [np.arange(s, s + length + 1, dtype=np.uint32) for s, length in pairs]
        return (np.concatenate(ranges) if ranges else np.zeros(0, np.uint32)), pos + 2 + 4 * n
    if cardinality <= _ARRAY_MAX:
        return np.frombuffer(data, _U16, cardinality, pos).astype(np.uint32), pos + 2 * cardinality
    words = np.frombuffer(data, _U64, 1024, pos)
    bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.uint32), pos + 8192
