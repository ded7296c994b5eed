"""Bit positions of record keys in Hudi's bloom filter rows, vectorised over many keys (numpy).

Positions (Hadoop `HashFunction`): the key's UTF-8 bytes are hashed `nbHash` times with Hadoop's
MurmurHash2 variant, each seeded with the previous hash (first seed 0); position `i` = `abs(h_i %
vectorSize)` with Java's truncating `%`. Hadoop's tail is NOT reference MurmurHash2's: it XORs
`b[-3] << 16`, `b[-2] << 8`, `b[-1]` (a 3-byte tail `t0 t1 t2` gives `t0<<16 ^ t1<<8 ^ t2`) with
sign-extended Java bytes; the fixture keys `id:1,name:Alice` only match this way.
"""

from __future__ import annotations

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
    groups = []
    for length in np.unique(lengths):
        idx = np.flatnonzero(lengths == length)
        groups.append((idx, _SameLengthKeys(_fix_length_rows(data, offsets[idx], int(length)))))
    return len(lengths), groups


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
    # Filled round by round (contiguous rows), returned transposed. Java's `%` keeps the sign of
    # the dividend, as np.fmod does; int32 arithmetic suffices since vector_size < 2**31.
    out = np.empty((nb_hash, n), np.int32)
    size = np.int32(vector_size)
    for idx, group in groups:
        if group.length == 0:
            raise InvalidRecordError("key length must be > 0 for the bloom filter")
        h = np.zeros(len(idx), np.uint32)
        for i in range(nb_hash):
            h = group.hash(h)
            position = np.fmod(h.view(np.int32), size)
            np.abs(position, out=position)
            if len(groups) == 1:
                out[i] = position
            else:
                out[i, idx] = position
    return out.T
