"""Properties of the bloom filter codec, with a slow scalar port of Hadoop's MurmurHash as oracle."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.bloom import deserialize_bloom_filter, new_bloom_filter
from pyhudi.codec.bloom_hash import hash_positions, murmur_hash

MASK = 0xFFFFFFFF
M = 0x5BD1E995


def _signed_byte(b: int) -> int:
    return b - 256 if b >= 128 else b


def _to_int32(x: int) -> int:
    x &= MASK
    return x - (1 << 32) if x & 0x80000000 else x


def scalar_murmur(data: bytes, seed: int) -> int:
    """Hadoop `MurmurHash.hash(data, length, seed)`, one byte at a time, Java int semantics."""
    length = len(data)
    h = (seed ^ length) & MASK
    len4 = length >> 2
    for i in range(len4):
        i4 = i << 2
        k = _signed_byte(data[i4 + 3])  # Java: int k = data[i4 + 3]; then shift in the rest
        k = (k << 8) | data[i4 + 2]
        k = (k << 8) | data[i4 + 1]
        k = ((k << 8) | data[i4]) & MASK
        k = (k * M) & MASK
        k ^= k >> 24
        k = (k * M) & MASK
        h = ((h * M) & MASK) ^ k
    left = length - (len4 << 2)
    if left:
        if left >= 3:
            h ^= (_signed_byte(data[length - 3]) << 16) & MASK
        if left >= 2:
            h ^= (_signed_byte(data[length - 2]) << 8) & MASK
        h ^= _signed_byte(data[length - 1]) & MASK
        h = (h * M) & MASK
    h ^= h >> 13
    h = (h * M) & MASK
    h ^= h >> 15
    return _to_int32(h)


def scalar_positions(data: bytes, nb_hash: int, vector_size: int) -> list[int]:
    """Hadoop `HashFunction.hash`: chained seeds, `Math.abs(h % vectorSize)` with Java `%`."""
    out, h = [], 0
    for _ in range(nb_hash):
        h = scalar_murmur(data, h)
        rem = abs(h) % vector_size  # Java's % truncates toward zero: h % n == sign(h) * (|h| % n)
        out.append(abs(-rem if h < 0 else rem))
    return out


byte_keys = st.binary(min_size=0, max_size=13)
text_keys = st.text(min_size=1, max_size=40)
int32s = st.integers(min_value=-(2**31), max_value=2**31 - 1)


@given(st.lists(byte_keys, max_size=30), int32s)
def test_vectorized_murmur_equals_scalar(keys: list[bytes], seed: int) -> None:
    expected = [scalar_murmur(k, seed) for k in keys]
    assert murmur_hash(keys, seed).tolist() == expected


@given(st.lists(st.tuples(byte_keys, int32s), max_size=30))
def test_vectorized_murmur_with_per_key_seeds(pairs: list[tuple[bytes, int]]) -> None:
    keys = [k for k, _ in pairs]
    seeds = np.array([s for _, s in pairs], dtype=np.int64)
    assert murmur_hash(keys, seeds).tolist() == [scalar_murmur(k, s) for k, s in pairs]


@given(
    st.lists(st.binary(min_size=1, max_size=13), max_size=20),
    st.integers(min_value=1, max_value=40),
    st.integers(min_value=1, max_value=2**31 - 1),
)
def test_vectorized_positions_equal_scalar(
    keys: list[bytes], nb_hash: int, vector_size: int
) -> None:
    got = hash_positions(keys, nb_hash, vector_size)
    assert got.tolist() == [scalar_positions(k, nb_hash, vector_size) for k in keys]


@given(st.lists(text_keys, max_size=25))
def test_unicode_text_hashes_as_utf8(keys: list[str]) -> None:
    got = hash_positions(keys, 5, 2587966).tolist()
    assert got == [scalar_positions(k.encode("utf-8"), 5, 2587966) for k in keys]


@settings(deadline=None, max_examples=50)
@given(
    st.lists(text_keys, max_size=60),
    st.sampled_from(["DYNAMIC_V0", "SIMPLE"]),
    st.integers(min_value=1, max_value=20),
)
def test_added_keys_are_contained(keys: list[str], code: str, num_entries: int) -> None:
    bf = new_bloom_filter(
        num_entries=num_entries, fpp=1e-4, type_code=code, max_entries=3 * num_entries
    )
    bf.add_keys(keys)
    assert bf.might_contain_keys(keys).all()
    assert all(bf.might_contain(k) for k in keys)


@settings(deadline=None, max_examples=50)
@given(
    st.lists(text_keys, max_size=60),
    st.sampled_from(["DYNAMIC_V0", "SIMPLE"]),
    st.integers(min_value=1, max_value=20),
)
def test_serialize_round_trip_is_identical(keys: list[str], code: str, num_entries: int) -> None:
    bf = new_bloom_filter(
        num_entries=num_entries, fpp=1e-4, type_code=code, max_entries=3 * num_entries
    )
    bf.add_keys(keys)
    text = bf.serialize()
    back = deserialize_bloom_filter(text, None if code == "SIMPLE" else code)
    assert back.serialize() == text
    assert back.might_contain_keys(keys).all()
