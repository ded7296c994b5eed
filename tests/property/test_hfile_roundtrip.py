"""Properties of the HFile v3 codec: whatever sorted cells are written are read back and found."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.hfile import HFileReader, write_hfile
from pyhudi.codec.hfile.blocks import decode_vlong, encode_vlong
from pyhudi.codec.protobuf_lite import decode_varint, encode_varint, to_signed64

cells = st.lists(
    st.tuples(st.binary(max_size=40), st.binary(max_size=300)),
    max_size=150,
    unique_by=lambda cell: cell[0],
).map(sorted)


@settings(max_examples=60, deadline=None)
@given(
    items=cells,
    block_size=st.sampled_from([1, 200, 64 * 1024]),
    index_chunk_size=st.sampled_from([64, 128 * 1024]),
    compression=st.sampled_from(["NONE", "GZ"]),
)
def test_written_cells_read_back_and_are_found(
    items: list[tuple[bytes, bytes]], block_size: int, index_chunk_size: int, compression: str
) -> None:
    data = write_hfile(
        items, block_size=block_size, index_chunk_size=index_chunk_size, compression=compression
    )
    reader = HFileReader(data)
    assert list(reader.items()) == items
    assert reader.entry_count == len(items)
    assert reader.file_info.last_key == (items[-1][0] if items else None)
    for key, value in items:
        assert reader.get(key) == value


@settings(max_examples=60, deadline=None)
@given(items=cells, probe=st.binary(max_size=6), block_size=st.sampled_from([1, 100, 4096]))
def test_lookups_agree_with_a_scan(
    items: list[tuple[bytes, bytes]], probe: bytes, block_size: int
) -> None:
    reader = HFileReader(write_hfile(items, block_size=block_size, index_chunk_size=64))
    assert reader.get(probe) == dict(items).get(probe)
    assert list(reader.keys_with_prefix(probe)) == [c for c in items if c[0].startswith(probe)]


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_hadoop_vlong_round_trip(value: int) -> None:
    encoded = encode_vlong(value)
    assert decode_vlong(encoded, 0) == (value, len(encoded))


@given(st.integers(min_value=-(2**63), max_value=2**64 - 1))
def test_protobuf_varint_round_trip(value: int) -> None:
    decoded, end = decode_varint(encode_varint(value))
    assert end == len(encode_varint(value))
    assert decoded == (value if value >= 0 else value + 2**64)
    assert to_signed64(decoded) == (value if value < 2**63 else value - 2**64)
