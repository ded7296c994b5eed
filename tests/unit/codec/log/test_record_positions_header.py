"""The RECORD_POSITIONS header codec: round trips over every container kind, Hudi's run-optimized
form, and clear errors for damaged values (byte equality with Java's RoaringBitmap is checked in
tests/spark/test_record_positions.py, which has a JVM)."""

from __future__ import annotations

import base64
import struct

import numpy as np
import pytest

from pyhudi.codec.log.positions import PositionsFormatError, decode_positions, encode_positions


@pytest.mark.parametrize(
    "positions",
    [
        np.array([], dtype=np.int64),
        np.array([0]),
        np.array([65_535, 65_536, 3, 3]),
        np.arange(0, 200_000, 3),  # bitmap containers
        np.array([1, 2**32 - 1, 2**32, 2**40 + 7]),  # several high buckets
    ],
)
def test_round_trip(positions):
    assert decode_positions(encode_positions(positions)).tolist() == sorted(set(positions.tolist()))


def test_run_containers_as_hudi_writes_them_after_run_optimize():
    # One bucket (high 0): a 32-bit bitmap with a run cookie, 1 container (key 0), runs [10..14], [20..20]
    bitmap = struct.pack("<I", 12347 | (0 << 16)) + bytes([1])  # cookie + run flags
    bitmap += struct.pack("<HH", 0, 5)  # key 0, cardinality 6
    bitmap += struct.pack("<H", 2) + struct.pack("<HHHH", 10, 4, 20, 0)  # 2 runs
    value = base64.b64encode(struct.pack("<Q", 1) + struct.pack("<I", 0) + bitmap).decode()
    assert decode_positions(value).tolist() == [10, 11, 12, 13, 14, 20]


def test_negative_positions_are_refused():
    with pytest.raises(ValueError, match="non-negative"):
        encode_positions(np.array([-1, 3]))


def test_damaged_values_are_clear_errors():
    with pytest.raises(PositionsFormatError, match="RECORD_POSITIONS"):
        decode_positions("not base64!")
    truncated = base64.b64encode(base64.b64decode(encode_positions(np.arange(10)))[:-3]).decode()
    with pytest.raises(PositionsFormatError, match="RECORD_POSITIONS"):
        decode_positions(truncated)
    extra = base64.b64encode(base64.b64decode(encode_positions(np.arange(3))) + b"x").decode()
    with pytest.raises(PositionsFormatError, match="trailing"):
        decode_positions(extra)
