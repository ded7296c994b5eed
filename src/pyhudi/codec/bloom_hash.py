"""Bit positions of record keys in Hudi's bloom filter rows, vectorised over many keys (numpy).

Positions (Hadoop `HashFunction`): the key's UTF-8 bytes are hashed `nbHash` times with Hadoop's
MurmurHash2 variant, each seeded with the previous hash (first seed 0); position `i` = `abs(h_i %
vectorSize)` with Java's truncating `%`. Hadoop's tail is NOT reference MurmurHash2's: it XORs
`b[-3] << 16`, `b[-2] << 8`, `b[-1]` (a 3-byte tail `t0 t1 t2` gives `t0<<16 ^ t1<<8 ^ t2`) with
sign-extended Java bytes; the fixture keys `id:1,name:Alice` only match this way.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pyarrow as pa

from pyhudi.exceptions import InvalidRecordError

_M = np.uint32(0x5BD1E995)


def _key_buffers(keys: Any) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 (or raw) bytes of `keys` as one uint8 buffer plus int64 offsets (n + 1)."""
    if isinstance(keys, pa.ChunkedArray):
        arr = keys.combine_chunks()
    elif isinstance(keys, pa.Array):
        arr = keys
    elif isinstance(keys, (str, bytes)):
        raise TypeError("add_keys/might_contain_keys need an iterable of keys, not a single key")
    else:
        arr = pa.array(keys if isinstance(keys, np.ndarray) else list(keys))
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if arr.null_count:
        raise InvalidRecordError("a record key for the bloom filter is null")
    arr = arr.cast(pa.large_binary())
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    return data, offsets


def _fix_length_rows(data: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """The bytes of keys of one `length` starting at `starts`, as an (n, length) uint8 matrix."""
    n = len(starts)
    if n and starts[-1] - starts[0] == (n - 1) * length and np.all(np.diff(starts) == length):
        return data[starts[0] : starts[0] + n * length].reshape(n, length)
    return data[starts[:, None] + np.arange(length)]


def _sext(col: np.ndarray) -> np.ndarray:
    """Java's `(int) byte` as uint32 bits."""
    return col.view(np.int8).astype(np.int32).view(np.uint32)


class _SameLengthKeys:
    """Seed-independent parts of Hadoop MurmurHash for keys of one byte length."""

    def __init__(self, rows: np.ndarray) -> None:
        n, self.length = rows.shape
        len4 = self.length // 4
        k = np.ascontiguousarray(rows[:, : 4 * len4]).view("<u4").astype(np.uint32)
        k *= _M
        k ^= k >> np.uint32(24)
        k *= _M
        self.chunks = np.ascontiguousarray(k.T)  # (len4, n)
        left = self.length - 4 * len4
        self.tail: np.ndarray | None = None
        if left:
            tail = np.zeros(n, np.uint32)
            for back in range(left, 0, -1):  # data[len - back] << 8 * (back - 1)
                tail ^= _sext(rows[:, self.length - back]) << np.uint32(8 * (back - 1))
            self.tail = tail

    def hash(self, seed: np.ndarray) -> np.ndarray:
        """One MurmurHash pass with per-key `seed` (uint32); returns uint32 bit patterns."""
        h = seed ^ np.uint32(self.length)
        for chunk in self.chunks:
            h *= _M
            h ^= chunk
        if self.tail is not None:
            h ^= self.tail
            h *= _M
        h ^= h >> np.uint32(13)
        h *= _M
        h ^= h >> np.uint32(15)
        return h


def _length_groups(keys: Any) -> tuple[int, list[tuple[np.ndarray, _SameLengthKeys]]]:
    data, offsets = _key_buffers(keys)
    lengths = np.diff(offsets)
    if len(lengths) and lengths.min() == lengths.max():  # the usual case: one key length
        whole = np.arange(len(lengths))
        return len(lengths), [
            (whole, _SameLengthKeys(_fix_length_rows(data, offsets[:-1], int(lengths[0]))))
        ]
    groups = []
    for length in np.unique(lengths):
        idx = np.flatnonzero(lengths == length)
        groups.append((idx, _SameLengthKeys(_fix_length_rows(data, offsets[idx], int(length)))))
    return len(lengths), groups


def _positions_into(h: np.ndarray, vector_size: int, out: np.ndarray) -> np.ndarray:
    """Java's `Math.abs(h % vectorSize)` of the int32 hashes `h` (uint32 bits), into int64 `out`.

    `|h % s| == |h| % s` for a truncating `%`; in int64 `|h|` cannot overflow, and an unsigned
    remainder by a scalar is several times faster than `np.fmod` on int32."""
    out[:] = h.view(np.int32)
    np.abs(out, out=out)
    np.remainder(out.view(np.uint64), np.uint64(vector_size), out=out.view(np.uint64))
    return out


def murmur_hash(keys: Any, seed: int | np.ndarray = 0) -> np.ndarray:
    """Hadoop `MurmurHash.hash(bytes, seed)` of each key (str as UTF-8, or bytes) as int32."""
    n, groups = _length_groups(keys)
    seeds = np.broadcast_to(np.asarray(seed, dtype=np.int64).astype(np.uint32), (n,))
    out = np.empty(n, np.uint32)
    for idx, group in groups:
        out[idx] = group.hash(seeds[idx])
    return out.view(np.int32)


def hash_positions(keys: Any, nb_hash: int, vector_size: int) -> np.ndarray:
    """Hadoop `HashFunction.hash`: the (n, nb_hash) bit positions of each key (int32)."""
    n, groups = _length_groups(keys)
    # Filled round by round (contiguous rows), returned transposed; positions < vector_size < 2**31.
    out = np.empty((nb_hash, n), np.int32)
    for idx, group in _checked(groups):
        h = np.zeros(len(idx), np.uint32)
        position = np.empty(len(idx), np.int64)
        for i in range(nb_hash):
            h = group.hash(h)
            _positions_into(h, vector_size, position)
            if len(groups) == 1:
                out[i] = position
            else:
                out[i, idx] = position
    return out.T


def set_key_bits(
    keys: Any, nb_hash: int, vector_size: int, rows: list[np.ndarray], row_of_key: np.ndarray
) -> None:
    """Hadoop `BloomFilter.add` of each key into its row: `rows[row_of_key[i]]` (bool bit arrays).

    Round by round: each round's positions are scattered straight into the row (an int64 index, a
    row that stays in cache), never gathered into an (n, nb_hash) matrix first."""
    _, groups = _length_groups(keys)
    for idx, group in _checked(groups):
        targets = _row_targets(row_of_key[idx])
        h = np.zeros(len(idx), np.uint32)
        position = np.empty(len(idx), np.int64)
        for _ in range(nb_hash):
            h = group.hash(h)
            _positions_into(h, vector_size, position)
            for row, selection in targets:
                rows[row][position[selection]] = True


def _row_targets(key_rows: np.ndarray) -> list[tuple[int, Any]]:
    """(row, selection of the keys that go to it): slices when the rows fill up in key order."""
    if not len(key_rows):
        return []
    if key_rows[0] == key_rows[-1] and np.all(key_rows == key_rows[0]):
        return [(int(key_rows[0]), slice(None))]
    if np.all(key_rows[1:] >= key_rows[:-1]):
        cuts = [0, *(np.flatnonzero(np.diff(key_rows)) + 1).tolist(), len(key_rows)]
        return [(int(key_rows[a]), slice(a, b)) for a, b in itertools.pairwise(cuts)]
    return [(int(r), key_rows == r) for r in np.unique(key_rows)]  # round robin (DYNAMIC_V0)


def _checked(
    groups: list[tuple[np.ndarray, _SameLengthKeys]],
) -> list[tuple[np.ndarray, _SameLengthKeys]]:
    if any(group.length == 0 for _, group in groups):
        raise InvalidRecordError("key length must be > 0 for the bloom filter")
    return groups
