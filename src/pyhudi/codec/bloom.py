"""Hudi's record-key bloom filter, as stored in base-file footers (reference §4.2, §4.4).

Bytes before Base64, big-endian (Hadoop `Filter.write`/`BloomFilter.write`, Hudi
`InternalDynamicBloomFilter.write`). SIMPLE = one row alone (offsets 0-12, then its bits). DYNAMIC_V0:

| off | size            | field                                                                   |
|-----|-----------------|-------------------------------------------------------------------------|
| 0   | 4               | version int32 `-1` (positive = old unversioned format: it is `nbHash`)   |
| 4   | 4               | `nbHash` int32 (30 with the defaults)                                   |
| 8   | 1               | `hashType` int8 (`1` = MURMUR_HASH; `0` = JENKINS_HASH, unsupported)     |
| 9   | 4               | `vectorSize` int32, bits per row (2587966 with the defaults)             |
| 13  | 4               | `nr` int32, keys per row (= `num_entries`, 60000)                        |
| 17  | 4               | `currentNbRecord` int32, keys added since the last row was opened        |
| 21  | 4               | `matrixLength` int32, number of rows                                    |
| 25  | 13 + ceil(vs/8) | each row: offsets 0-12 again, then bit `i` in byte `i >> 3`, mask `1 << (i & 7)` |

Positions: see `pyhudi.codec.bloom_hash`.

Rows (`InternalDynamicBloomFilter.getActiveStandardBF`): keys go to the last row until `currentNbRecord`
reaches `nr`; then a row is opened (count reset to 0) while `rows * nr < maxNr` (`max_entries`), so the
defaults give at most 2 rows. Past the bound each key goes to a row chosen round-robin, starting with
row 0 twice; `currentNbRecord` keeps counting. `maxNr` is not serialized: as in Hudi, a deserialized
filter has `maxNr = 0` and never opens a row. Membership = all positions set in any one row. Key
order matters only across rows, i.e. once more than `nr` keys were added.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

import numpy as np
import pyarrow as pa

from pyhudi.codec.bloom_hash import hash_positions, set_key_bits
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError

FOOTER_BLOOM_KEY = "org.apache.hudi.bloomfilter"
LEGACY_FOOTER_BLOOM_KEY = "com.uber.hoodie.bloomfilter"
FOOTER_TYPE_CODE_KEY = "hoodie_bloom_filter_type_code"
FOOTER_MIN_KEY = "hoodie_min_record_key"
FOOTER_MAX_KEY = "hoodie_max_record_key"

MURMUR_HASH = 1
_VERSION = -1
_HEADER = struct.Struct(">iibi")
_DYNAMIC = struct.Struct(">iii")
_BATCH = 1 << 16


class BloomFilterTypeCode(str, Enum):
    SIMPLE = "SIMPLE"
    DYNAMIC_V0 = "DYNAMIC_V0"

    @classmethod
    def parse(cls, code: str | BloomFilterTypeCode | None) -> BloomFilterTypeCode:
        """Case-insensitive like Hudi's `BloomFilterFactory`; None means SIMPLE."""
        if code is None:
            return cls.SIMPLE
        try:
            return cls(str(code.value if isinstance(code, cls) else code).upper())
        except ValueError:
            raise ValueError(f"Bloom Filter type code not recognizable {code!r}") from None


def _batches(keys: Any) -> Iterable[Any]:
    """Keys in slices of `_BATCH` so that the (n, nb_hash) positions stay small."""
    if isinstance(keys, (str, bytes)):
        raise TypeError("add_keys/might_contain_keys need an iterable of keys, not a single key")
    if isinstance(keys, (pa.Array, pa.ChunkedArray, np.ndarray, list, tuple)):
        seq = keys
    else:
        seq = list(keys)
    for start in range(0, len(seq), _BATCH):
        yield seq[start : start + _BATCH]


def _read_header(buf: bytes, pos: int) -> tuple[int, int, int, int]:
    """(nb_hash, hash_type, vector_size, new_pos) of a Hadoop `Filter` header."""
    (ver,) = struct.unpack_from(">i", buf, pos)
    if ver > 0:
        raise UnsupportedVersionError(
            "old unversioned bloom filter (Jenkins hash) is not supported"
        )
    if ver != _VERSION:
        raise CorruptFileError(f"bloom filter: unsupported version {ver}")
    _, nb_hash, hash_type, vector_size = _HEADER.unpack_from(buf, pos)
    if hash_type != MURMUR_HASH:
        raise UnsupportedVersionError(f"bloom filter hash type {hash_type} (only MURMUR_HASH=1)")
    if nb_hash <= 0 or vector_size <= 0:
        raise CorruptFileError(f"bloom filter: nbHash={nb_hash}, vectorSize={vector_size}")
    return nb_hash, hash_type, vector_size, pos + _HEADER.size


def _read_row(buf: bytes, pos: int, nb_hash: int, vector_size: int) -> tuple[np.ndarray, int]:
    row_hashes, _, row_size, pos = _read_header(buf, pos)
    if (row_hashes, row_size) != (nb_hash, vector_size):
        raise CorruptFileError("bloom filter row does not match the filter's nbHash/vectorSize")
    n_bytes = (vector_size + 7) // 8
    if pos + n_bytes > len(buf):
        raise CorruptFileError("bloom filter bytes are truncated")
    raw = np.frombuffer(buf, np.uint8, n_bytes, pos)
    bits = np.unpackbits(raw, count=vector_size, bitorder="little").view(np.bool_)
    return bits, pos + n_bytes


class BloomFilter(ABC):
    """A Hudi bloom filter of record keys: rows of bits sharing `nb_hash` and `vector_size`."""

    type_code: BloomFilterTypeCode

    def __init__(
        self, vector_size: int, nb_hash: int, rows: list[np.ndarray] | None = None
    ) -> None:
        self.vector_size = vector_size
        self.nb_hash = nb_hash
        self.hash_type = MURMUR_HASH
        self.rows = rows if rows is not None else [np.zeros(vector_size, np.bool_)]

    def add(self, key: str) -> None:
        self.add_keys([key])

    def might_contain(self, key: str) -> bool:
        return bool(self.might_contain_keys([key])[0])

    def add_keys(self, keys: Any) -> None:
        """Add keys in order (order matters for DYNAMIC_V0 rows); hashing is vectorized."""
        for batch in _batches(keys):
            row_of_key = self._assign_rows(len(batch))
            set_key_bits(batch, self.nb_hash, self.vector_size, self.rows, row_of_key)

    def might_contain_keys(self, keys: Any) -> np.ndarray:
        """Bool mask: the key may be in the filter (all its bits set in some row)."""
        masks = [np.zeros(0, np.bool_)]
        for batch in _batches(keys):
            positions = hash_positions(batch, self.nb_hash, self.vector_size)
            hit = np.zeros(len(positions), np.bool_)
            for bits in self.rows:
                hit |= bits[positions].all(axis=1)
            masks.append(hit)
        return np.concatenate(masks)

    def serialize(self) -> str:
        """The Base64 text Hudi stores in the footer (standard alphabet, padded, one line)."""
        return base64.b64encode(self.to_bytes()).decode("ascii")

    def _row_bytes(self) -> list[bytes]:
        head = _HEADER.pack(_VERSION, self.nb_hash, self.hash_type, self.vector_size)
        return [head + np.packbits(bits, bitorder="little").tobytes() for bits in self.rows]

    @abstractmethod
    def _assign_rows(self, n: int) -> np.ndarray:
        """Row index of each of the next `n` keys, advancing the filter's counters."""

    @abstractmethod
    def to_bytes(self) -> bytes:
        """The serialized bytes before Base64."""


class SimpleBloomFilter(BloomFilter):
    """Hudi `SimpleBloomFilter`: one Hadoop `BloomFilter`."""

    type_code = BloomFilterTypeCode.SIMPLE

    def _assign_rows(self, n: int) -> np.ndarray:
        return np.zeros(n, np.int64)

    def to_bytes(self) -> bytes:
        return self._row_bytes()[0]


class DynamicBloomFilter(BloomFilter):
    """Hudi `HoodieDynamicBoundedBloomFilter` (`InternalDynamicBloomFilter`): bounded rows of filters."""

    type_code = BloomFilterTypeCode.DYNAMIC_V0

    def __init__(
        self,
        vector_size: int,
        nb_hash: int,
        nr: int,
        max_nr: int,
        rows: list[np.ndarray] | None = None,
        current_nb_record: int = 0,
    ) -> None:
        super().__init__(vector_size, nb_hash, rows)
        self.nr = nr
        self.max_nr = max_nr
        self.current_nb_record = current_nb_record
        self.reached_max = False
        self.cur_matrix_index = 0

    def _assign_rows(self, n: int) -> np.ndarray:
        parts: list[np.ndarray] = []
        while n > 0:
            if self.reached_max:
                parts.append((self.cur_matrix_index + np.arange(n)) % len(self.rows))
                self.cur_matrix_index += n
                self.current_nb_record += n
                break
            if self.current_nb_record < self.nr:
                take = min(n, self.nr - self.current_nb_record)
                parts.append(np.full(take, len(self.rows) - 1))
            elif _java_int(len(self.rows) * self.nr) < self.max_nr:
                self.rows.append(np.zeros(self.vector_size, np.bool_))
                self.current_nb_record = 0
                continue
            else:  # the bound is reached: this key goes to row 0, the round robin starts at 0 again
                self.reached_max = True
                take = 1
                parts.append(np.zeros(1, np.int64))
            self.current_nb_record += take
            n -= take
        self.current_nb_record = _java_int(self.current_nb_record)
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def to_bytes(self) -> bytes:
        head = _HEADER.pack(_VERSION, self.nb_hash, self.hash_type, self.vector_size)
        counts = _DYNAMIC.pack(self.nr, self.current_nb_record, len(self.rows))
        return b"".join([head, counts, *self._row_bytes()])


def _java_int(value: int) -> int:
    """Wrap to a Java int (two's complement 32 bit)."""
    return (value + 2**31) % 2**32 - 2**31


def bloom_sizes(num_entries: int, fpp: float) -> tuple[int, int]:
    """(bitSize, numHashes) of Hudi's `BloomFilterUtils` for `num_entries` keys at rate `fpp`."""
    bit_size = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    return bit_size, math.ceil(math.log(2) * bit_size / num_entries)


def new_bloom_filter(
    num_entries: int = 60000,
    fpp: float = 1e-9,
    type_code: str | BloomFilterTypeCode = BloomFilterTypeCode.DYNAMIC_V0,
    max_entries: int = 100000,
) -> BloomFilter:
    """Hudi `BloomFilterFactory.createBloomFilter` with the `hoodie.index.bloom.*` settings."""
    bit_size, nb_hash = bloom_sizes(num_entries, fpp)
    if not 0 < bit_size < 2**31:
        raise ValueError(f"bloom filter bit size {bit_size} out of range")
    if BloomFilterTypeCode.parse(type_code) is BloomFilterTypeCode.SIMPLE:
        return SimpleBloomFilter(bit_size, nb_hash)
    return DynamicBloomFilter(bit_size, nb_hash, num_entries, max_entries)


def continued_bloom_filter(
    previous: BloomFilter | None,
    keys_in_it: int,
    num_entries: int,
    fpp: float,
    type_code: str | BloomFilterTypeCode,
    max_entries: int,
) -> BloomFilter | None:
    """`previous` (read from a footer) ready to take more keys, when it is exactly the filter
    `new_bloom_filter(...)` builds from `keys_in_it` keys: same type and sizes, and (DYNAMIC_V0)
    the same per-row bound with its rows and counter those keys leave, before the round robin past
    `max_entries`, whose position a footer does not keep. Otherwise None."""
    if previous is None or previous.type_code is not BloomFilterTypeCode.parse(type_code):
        return None
    if (previous.vector_size, previous.nb_hash) != bloom_sizes(num_entries, fpp):
        return None
    if not isinstance(previous, DynamicBloomFilter):
        return previous
    rows, current = len(previous.rows), previous.current_nb_record
    if previous.nr != num_entries or not 0 <= current <= num_entries:
        return None
    if (rows - 1) * num_entries + current != keys_in_it or (rows > 1 and current == 0):
        return None
    previous.max_nr = max_entries
    return previous


def deserialize_bloom_filter(
    text: str | bytes, type_code: str | BloomFilterTypeCode | None = None
) -> BloomFilter:
    """Hudi `BloomFilterFactory.fromString`; a missing type code means SIMPLE."""
    try:
        buf = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CorruptFileError(f"bloom filter is not valid Base64: {exc}") from exc
    try:
        nb_hash, _, vector_size, pos = _read_header(buf, 0)
        if BloomFilterTypeCode.parse(type_code) is BloomFilterTypeCode.SIMPLE:
            bits, _ = _read_row(buf, 0, nb_hash, vector_size)
            return SimpleBloomFilter(vector_size, nb_hash, [bits])
        nr, current, n_rows = _DYNAMIC.unpack_from(buf, pos)
        pos += _DYNAMIC.size
        rows = []
        for _ in range(n_rows):
            bits, pos = _read_row(buf, pos, nb_hash, vector_size)
            rows.append(bits)
    except struct.error as exc:
        raise CorruptFileError(f"bloom filter bytes are truncated: {exc}") from exc
    return DynamicBloomFilter(vector_size, nb_hash, nr, 0, rows, current)


def footer_metadata(
    bloom: BloomFilter | None, min_key: str | None, max_key: str | None
) -> dict[str, str]:
    """The Hudi footer entries (`HoodieBloomFilterWriteSupport.finalizeMetadata`)."""
    meta: dict[str, str] = {}
    if bloom is not None:
        meta[FOOTER_BLOOM_KEY] = bloom.serialize()
        if bloom.type_code is BloomFilterTypeCode.DYNAMIC_V0:
            meta[FOOTER_TYPE_CODE_KEY] = bloom.type_code.value
    if min_key is not None and max_key is not None:
        meta[FOOTER_MIN_KEY] = min_key
        meta[FOOTER_MAX_KEY] = max_key
    return meta


def read_footer_bloom(
    metadata: Mapping[bytes, bytes] | Mapping[str, str] | None,
) -> BloomFilter | None:
    """The bloom filter of a parquet footer (pyarrow `FileMetaData.metadata`), or None."""
    if not metadata:
        return None
    meta = {_text(k): v for k, v in metadata.items()}
    value = meta.get(FOOTER_BLOOM_KEY, meta.get(LEGACY_FOOTER_BLOOM_KEY))
    if value is None:
        return None
    code = meta.get(FOOTER_TYPE_CODE_KEY)
    return deserialize_bloom_filter(value, None if code is None else _text(code))


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
