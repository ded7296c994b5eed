"""HFile FileInfo map and fixed trailer (byte layout: the docstring of `pyhudi.codec.hfile`)."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from pyhudi.codec.hfile.blocks import CODEC_IDS, CODEC_NAMES, TRAILER_SIZE, kv_key_row
from pyhudi.codec.protobuf_lite import (
    decode_delimited,
    encode_delimited,
    encode_message,
    iter_fields,
    to_signed64,
)
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError

MAGIC_TRAILER = b'TRABLK"$'
PB_MAGIC = b"PBUF"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
DATA_BLOCK_ENCODING = b"DATA_BLOCK_ENCODING"
RESERVED_PREFIX = b"hfile."


# --- FileInfo ------------------------------------------------------------------------------------


def encode_file_info(entries: Mapping[bytes, bytes], *, ordered: bool = False) -> bytes:
    """`PBUF` + delimited `InfoProto{repeated BytesBytesPair map_entry = 1}`, sorted by key (HBase),
    or in the order of `entries` (`ordered`)."""
    keys = list(entries) if ordered else sorted(entries)
    pairs = [(1, encode_message([(1, key), (2, entries[key])])) for key in keys]
    return PB_MAGIC + encode_delimited(encode_message(pairs))


def java_hash_map_order(keys: list[bytes]) -> list[bytes]:
    """`keys` (ASCII) in the iteration order of a Java `HashMap<String, _>` they were put into in
    this order: by bucket of the spread `String.hashCode`, insertion order within a bucket."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: bytes) -> int:
        h = 0
        for ch in key.decode("utf-8"):
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(keys, key=bucket)


def decode_file_info(payload: bytes) -> dict[bytes, bytes]:
    if payload[:4] != PB_MAGIC:
        raise CorruptFileError("HFile FileInfo block does not start with PBUF")
    message, _ = decode_delimited(payload, 4)
    entries: dict[bytes, bytes] = {}
    for number, pair in iter_fields(message):
        if number == 1 and isinstance(pair, bytes):
            fields = dict(iter_fields(pair))
            first, second = fields.get(1, b""), fields.get(2, b"")
            if not isinstance(first, bytes) or not isinstance(second, bytes):
                raise CorruptFileError("HFile FileInfo entry is not a bytes pair")
            entries[first] = second
    return entries


# --- trailer -------------------------------------------------------------------------------------

_TRAILER_FIELDS = (
    "file_info_offset",
    "load_on_open_data_offset",
    "uncompressed_data_index_size",
    "total_uncompressed_bytes",
    "data_index_count",
    "meta_index_count",
    "entry_count",
    "num_data_index_levels",
    "first_data_block_offset",
    "last_data_block_offset",
)


@dataclass(frozen=True)
class HFileTrailer:
    """`FixedFileTrailer`: the last 4096 bytes (fields 1-13 of `FileTrailerProto`)."""

    file_info_offset: int = 0
    load_on_open_data_offset: int = 0
    uncompressed_data_index_size: int = 0
    total_uncompressed_bytes: int = 0
    data_index_count: int = 0
    meta_index_count: int = 0
    entry_count: int = 0
    num_data_index_levels: int = 1
    first_data_block_offset: int = -1
    last_data_block_offset: int = -1
    comparator_class_name: str = ""
    compression_codec: int = CODEC_IDS["NONE"]
    encryption_key: bytes | None = None
    major_version: int = 3
    minor_version: int = 3

    @property
    def compression(self) -> str:
        return CODEC_NAMES.get(self.compression_codec, f"UNKNOWN({self.compression_codec})")

    def encode(self) -> bytes:
        fields: list[tuple[int, int | bytes | str]] = [
            (i + 1, getattr(self, name))
            for i, name in enumerate(_TRAILER_FIELDS)
            # Hudi's `hudi-io` writer (minor version 0) leaves totalUncompressedBytes out
            if not (name == "total_uncompressed_bytes" and self.minor_version == 0)
        ]
        fields += [(11, self.comparator_class_name), (12, self.compression_codec)]
        if self.encryption_key is not None:
            fields.append((13, self.encryption_key))
        body = MAGIC_TRAILER + encode_delimited(encode_message(fields))
        version = struct.pack(">I", self.minor_version << 24 | self.major_version)
        return body + bytes(TRAILER_SIZE - len(body) - 4) + version

    @classmethod
    def decode(cls, data: bytes) -> HFileTrailer:
        """Parse the trailer at the end of a whole HFile."""
        if len(data) < TRAILER_SIZE:
            raise CorruptFileError(f"{len(data)} bytes is too small for an HFile v3")
        (version,) = struct.unpack_from(">I", data, len(data) - 4)
        major, minor = version & 0xFFFFFF, version >> 24
        if major != 3:
            raise UnsupportedVersionError(f"HFile major version {major} (only 3 is supported)")
        start = len(data) - TRAILER_SIZE
        if data[start : start + 8] != MAGIC_TRAILER:
            raise CorruptFileError('HFile trailer magic TRABLK"$ not found')
        message, _ = decode_delimited(data, start + 8)
        values: dict[str, object] = {"major_version": major, "minor_version": minor}
        for number, value in iter_fields(message):
            if 1 <= number <= 10 and isinstance(value, int):
                values[_TRAILER_FIELDS[number - 1]] = to_signed64(value)
            elif number == 11 and isinstance(value, bytes):
                values["comparator_class_name"] = value.decode("utf-8")
            elif number == 12 and isinstance(value, int):
                values["compression_codec"] = value
            elif number == 13 and isinstance(value, bytes):
                values["encryption_key"] = value
        return cls(**values)  # type: ignore[arg-type]


def _int(value: bytes | None, fmt: str) -> int:
    return struct.unpack(fmt, value)[0] if value and len(value) == struct.calcsize(fmt) else 0


@dataclass(frozen=True, eq=False)
class HFileInfo(Mapping[bytes, bytes]):
    """The FileInfo map (raw bytes keys and values), with typed helpers for HBase's own entries."""

    entries: dict[bytes, bytes] = field(default_factory=dict)

    def __getitem__(self, key: bytes) -> bytes:
        return self.entries[key]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def text(self, name: str) -> str | None:
        """An entry decoded as UTF-8 (e.g. Hudi's `schema`, `minRecordKey`)."""
        value = self.entries.get(name.encode("utf-8"))
        return None if value is None else value.decode("utf-8")

    @property
    def last_key(self) -> bytes | None:
        """Row of `hfile.LASTKEY` (the last cell of the file)."""
        value = self.entries.get(LAST_KEY)
        return kv_key_row(value) if value else None

    @property
    def avg_key_len(self) -> int:
        return _int(self.entries.get(AVG_KEY_LEN), ">i")

    @property
    def avg_value_len(self) -> int:
        return _int(self.entries.get(AVG_VALUE_LEN), ">i")

    @property
    def create_time_ms(self) -> int:
        return _int(self.entries.get(CREATE_TIME_TS), ">q")

    @property
    def includes_mvcc(self) -> bool:
        """Cells end with a memstoreTS vlong (`KEY_VALUE_VERSION` = 1)."""
        return _int(self.entries.get(KEY_VALUE_VERSION), ">i") == 1

    @property
    def includes_tags(self) -> bool:
        """Cells carry a tags length (HBase writes `hfile.MAX_TAGS_LEN` only then)."""
        return MAX_TAGS_LEN in self.entries

    @property
    def data_block_encoding(self) -> str:
        return self.entries.get(DATA_BLOCK_ENCODING, b"NONE").decode("utf-8")
