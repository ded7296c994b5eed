"""Keys and file-group hashing of the metadata table's index partitions (Hudi's `HashID`,
`ColumnIndexID`, `PartitionIndexID`, `FileIndexID`, `HoodieTableMetadataUtil`).

| partition      | record key                                                        |
|----------------|-------------------------------------------------------------------|
| `column_stats` | base64(XXH64(column)) + base64(XXH64(partition)) + base64(MD5(file name)): 12 + 12 + 24 characters |
| `bloom_filters`| base64(XXH64(partition)) + base64(MD5(file name)): 12 + 24        |
| `record_index` | the data record key itself                                        |

XXH64 uses Hudi's seed, the int `0xdabadaba` sign-extended to 64 bits, and is written big-endian; a non-partitioned table's partition
is hashed as `.`. A record key goes to file group `abs(abs(h) % n)` of its metadata partition,
where `h` is Java's `String.hashCode` over the key's UTF-16 code units (32-bit overflow).
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

import numpy as np
import pyarrow as pa

from pyhudi.codec.metadata_records import NON_PARTITIONED_NAME

#: Hudi's `HashID` seed: the Java int `0xdabadaba` widened to a long (sign-extended).
HASH_SEED = 0xFFFFFFFFDABADABA
_M64 = 2**64 - 1
_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5 = 9650029242287828579, 2870177450012600261


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def _merge(acc: int, value: int) -> int:
    return ((acc ^ _round(0, value)) * _P1 + _P4) & _M64


def xxh64(data: bytes, seed: int = HASH_SEED) -> int:
    """XXH64 of `data` (unsigned 64-bit)."""
    n, i = len(data), 0
    if n >= 32:
        acc = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64]
        while i + 32 <= n:
            for lane in range(4):
                word = int.from_bytes(data[i + 8 * lane : i + 8 * lane + 8], "little")
                acc[lane] = _round(acc[lane], word)
            i += 32
        h = (_rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)) & _M64
        for value in acc:
            h = _merge(h, value)
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h ^= _round(0, int.from_bytes(data[i : i + 8], "little"))
        h = (_rotl(h, 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h ^= (int.from_bytes(data[i : i + 4], "little") * _P1) & _M64
        h = (_rotl(h, 23) * _P2 + _P3) & _M64
        i += 4
    while i < n:
        h ^= (data[i] * _P5) & _M64
        h = (_rotl(h, 11) * _P1) & _M64
        i += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    return h ^ (h >> 32)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@lru_cache(maxsize=4096)
def column_index_id(column: str) -> str:
    """Hudi's `ColumnIndexID`: base64 of the column name's XXH64 (12 characters)."""
    return _b64(xxh64(column.encode("utf-8")).to_bytes(8, "big"))


@lru_cache(maxsize=4096)
def partition_index_id(partition: str) -> str:
    """Hudi's `PartitionIndexID` ('' = non-partitioned, hashed as `.`)."""
    name = partition or NON_PARTITIONED_NAME
    return _b64(xxh64(name.encode("utf-8")).to_bytes(8, "big"))


def file_index_id(file_name: str) -> str:
    """Hudi's `FileIndexID`: base64 of the file name's MD5 (24 characters)."""
    return _b64(hashlib.md5(file_name.encode("utf-8")).digest())


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    """The `column_stats` record key of (partition, file, column)."""
    return column_index_id(column) + partition_index_id(partition) + file_index_id(file_name)


def bloom_filter_key(partition: str, file_name: str) -> str:
    """The `bloom_filters` record key of a base file."""
    return partition_index_id(partition) + file_index_id(file_name)


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode` (over UTF-16 code units, signed 32-bit)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def _java_abs(value: int) -> int:
    return value if value == -(2**31) else abs(value)  # abs(Integer.MIN_VALUE) stays negative


def file_group_index(record_key: str, file_group_count: int) -> int:
    """Hudi's `mapRecordKeyToFileGroupIndex`: the metadata file group a key is written to."""
    if file_group_count <= 0:
        raise ValueError(f"file group count must be > 0, got {file_group_count}")
    h = _java_abs(java_string_hash(record_key))
    remainder = abs(h) % file_group_count if h >= 0 else -((-h) % file_group_count)
    return abs(remainder)


def file_group_indexes(keys: pa.Array | pa.ChunkedArray, file_group_count: int) -> pa.Array:
    """`file_group_index` of every key of a string array (int32), vectorised for ASCII keys: each
    run of equal-length keys is one matrix product with the powers of 31 (mod 2**64, then 2**32)."""
    if file_group_count <= 0:
        raise ValueError(f"file group count must be > 0, got {file_group_count}")
    array = pa.concat_arrays(keys.chunks) if isinstance(keys, pa.ChunkedArray) else keys
    array = array.cast(pa.large_string())
    if array.null_count:
        raise ValueError("record keys must not be null")
    offsets = np.frombuffer(array.buffers()[1], np.int64)[
        array.offset : array.offset + len(array) + 1
    ]
    data = np.frombuffer(array.buffers()[2], np.uint8) if len(array) else np.zeros(0, np.uint8)
    if data.size and data[offsets[0] : offsets[-1]].max(initial=0) >= 0x80:
        return pa.array(
            [file_group_index(k, file_group_count) for k in array.to_pylist()], pa.int32()
        )
    starts, lengths = offsets[:-1], np.diff(offsets)
    hashes = np.zeros(len(array), np.uint64)
    for length in np.unique(lengths):
        rows = np.nonzero(lengths == length)[0]
        if length == 0:
            continue
        units = data[starts[rows, None] + np.arange(length)].astype(np.uint64)
        hashes[rows] = units @ _powers_of_31(int(length))
    signed = (hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32).astype(np.int64)
    positive = np.where(signed == -(2**31), signed, np.abs(signed))  # Math.abs(MIN_VALUE) < 0
    remainder = np.fmod(positive, file_group_count)  # Java's % keeps the dividend's sign
    return pa.array(np.abs(remainder).astype(np.int32))


@lru_cache(maxsize=256)
def _powers_of_31(length: int) -> np.ndarray:
    """31**(length-1), ..., 31, 1 modulo 2**64."""
    return np.array([pow(31, length - 1 - i, 2**64) for i in range(length)], np.uint64)
