"""Block-level pieces of HBase HFile v3: block framing, checksums, cells, index chunks.

The file layout and every byte table are in the docstring of `pyhudi.codec.hfile`; this module holds
the codecs for one block (or one structure inside a block) each:

* `encode_block` / `read_block`: the 33-byte header, the (GZ-)compressed payload, CRC32C chunks.
* `encode_cell` / `decode_cells`: HBase `KeyValue`s of a data block (Hudi: empty family and
  qualifier, timestamp `Long.MAX_VALUE`, type Put, memstoreTS 0).
* `encode_root_index` / `decode_root_index`, `encode_non_root_index` / `decode_non_root_index`.

The FileInfo block and the trailer are in `pyhudi.codec.hfile.meta`.
"""

from __future__ import annotations

import itertools
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError

_fast_crc32c: Any
try:
    import google_crc32c as _fast_crc32c
except ImportError:  # pragma: no cover - a platform without its wheel: the Python loop
    _fast_crc32c = None

MAGIC_DATA = b"DATABLK*"
MAGIC_ENCODED_DATA = b"DATABLKE"
MAGIC_LEAF_INDEX = b"IDXLEAF2"
MAGIC_META = b"METABLKc"
MAGIC_INTERMEDIATE_INDEX = b"IDXINTE2"
MAGIC_ROOT_INDEX = b"IDXROOT2"
MAGIC_FILE_INFO = b"FILEINF2"
MAGIC_GENERAL_BLOOM_META = b"BLMFMET2"

BLOCK_HEADER_SIZE = 33
TRAILER_SIZE = 4096
BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_NULL, CHECKSUM_CRC32, CHECKSUM_CRC32C = 0, 1, 2
LATEST_TIMESTAMP = (1 << 63) - 1
TYPE_PUT = 4
MAX_ROW_LENGTH = 0x7FFF  # Java `Short.MAX_VALUE`
#: HBase `Compression.Algorithm` ordinals, as stored in the trailer.
CODEC_IDS = {"LZO": 0, "GZ": 1, "NONE": 2, "SNAPPY": 3, "LZ4": 4, "BZIP2": 5, "ZSTD": 6}
CODEC_NAMES = {v: k for k, v in CODEC_IDS.items()}
#: What Java's `GZIPOutputStream` (HBase `ReusableGzipOutputStream`) writes: no name, mtime 0, OS 0.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_HEADER = struct.Struct(">8siiqbii")
_INDEX_ENTRY = struct.Struct(">qi")


def as_bytes(value: bytes | str) -> bytes:
    """UTF-8 for text, a copy for bytes-like values."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C (Castagnoli), the checksum Hadoop's `DataChecksum.Type.CRC32C` computes (Google's C
    implementation when `google-crc32c` is installed, as it is with pyhudi: ~1000x the Python loop)."""
    if _fast_crc32c is not None:
        return int(_fast_crc32c.extend(crc, bytes(data)))
    return crc32c_python(data, crc)


def crc32c_python(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C in plain Python (the fallback, and the reference the tests hold the C one to)."""
    table = _CRC32C_TABLE
    crc ^= 0xFFFFFFFF
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _chunk_checksums(data: bytes, checksum_type: int, bytes_per_checksum: int) -> bytes:
    func = crc32c if checksum_type == CHECKSUM_CRC32C else zlib.crc32
    return b"".join(
        struct.pack(">I", func(data[i : i + bytes_per_checksum]))
        for i in range(0, len(data), bytes_per_checksum)
    )


# --- Hadoop `WritableUtils` variable-length longs ------------------------------------------------


def encode_vlong(value: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong` (not a protobuf varint)."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    first = -112
    if value < 0:
        value ^= -1
        first = -120
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return struct.pack(">b", first - len(body)) + body


def decode_vlong(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Hadoop `WritableUtils.readVLong`; returns (value, position after it)."""
    first = struct.unpack_from(">b", data, pos)[0]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = (-120 - first) if negative else (-112 - first)
    if pos + 1 + size > len(data):
        raise CorruptFileError("truncated Hadoop vlong")
    value = int.from_bytes(data[pos + 1 : pos + 1 + size], "big")
    return (value ^ -1 if negative else value), pos + 1 + size


# --- compression ---------------------------------------------------------------------------------


def codec_id(name: str) -> int:
    """Trailer id of a compression name (`NONE`, `GZ`; case-insensitive, `GZIP` accepted)."""
    key = name.upper()
    key = "GZ" if key == "GZIP" else key
    if key not in CODEC_IDS:
        raise ValueError(f"unknown HFile compression {name!r}; known: {sorted(CODEC_IDS)}")
    check_codec_supported(CODEC_IDS[key])
    return CODEC_IDS[key]


def check_codec_supported(codec: int) -> None:
    """Raise UnsupportedOperationError unless `codec` is NONE or GZ."""
    if codec not in (CODEC_IDS["NONE"], CODEC_IDS["GZ"]):
        name = CODEC_NAMES.get(codec, f"id {codec}")
        raise UnsupportedOperationError(
            f"HFile compression {name} is not supported (only NONE and GZ)"
        )


def compress(payload: bytes, codec: int, *, gzip_header: bytes = _GZIP_HEADER) -> bytes:
    if codec == CODEC_IDS["NONE"]:
        return payload
    check_codec_supported(codec)
    deflater = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(payload) + deflater.flush()
    tail = struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)
    return gzip_header + body + tail


def decompress(raw: bytes, codec: int, size: int) -> bytes:
    if codec == CODEC_IDS["NONE"]:
        return raw[:size]
    check_codec_supported(codec)
    try:
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw)
    except zlib.error as exc:
        raise CorruptFileError(f"HFile block does not gunzip: {exc}") from exc
    if len(out) != size:
        raise CorruptFileError(f"HFile block gunzips to {len(out)} bytes, header says {size}")
    return out


# --- block framing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockHeader:
    magic: bytes
    on_disk_size_without_header: int
    uncompressed_size_without_header: int
    prev_block_offset: int
    checksum_type: int
    bytes_per_checksum: int
    on_disk_data_size_with_header: int

    @property
    def on_disk_size_with_header(self) -> int:
        return BLOCK_HEADER_SIZE + self.on_disk_size_without_header


@dataclass(frozen=True)
class Block:
    offset: int
    header: BlockHeader
    payload: bytes  # uncompressed, without header and checksums

    @property
    def end(self) -> int:
        return self.offset + self.header.on_disk_size_with_header


def encode_block(magic: bytes, payload: bytes, prev_offset: int, codec: int) -> bytes:
    """Header + compressed payload + CRC32C of each 16 KiB chunk of (header + compressed payload)."""
    body = compress(payload, codec)
    data_size = BLOCK_HEADER_SIZE + len(body)
    checksum_size = 4 * -(-data_size // BYTES_PER_CHECKSUM)
    header = _HEADER.pack(
        magic,
        len(body) + checksum_size,
        len(payload),
        prev_offset,
        CHECKSUM_CRC32C,
        BYTES_PER_CHECKSUM,
        data_size,
    )
    data = header + body
    return data + _chunk_checksums(data, CHECKSUM_CRC32C, BYTES_PER_CHECKSUM)


#: Hudi's `hudi-io` writer (1.1+): blocks checksummed NULL with four zero bytes where the checksum
#: would be. Its gzip members carry OS byte 0 with Hadoop's native zlib (the v9 fixtures) and 255
#: without it (this machine's Hudi 1.2); no reader looks at it: 0, as HBase's.
_HUDI_IO_GZIP_HEADER = _GZIP_HEADER
_HUDI_IO_CHECKSUM = bytes(4)


def encode_block_hudi_io(magic: bytes, payload: bytes, codec: int) -> bytes:
    """A block as Hudi 1.2's `hudi-io` writer frames it: prevBlockOffset -1, checksum type NULL
    (bytesPerChecksum 16384) followed by four zero bytes."""
    body = compress(payload, codec, gzip_header=_HUDI_IO_GZIP_HEADER)
    data_size = BLOCK_HEADER_SIZE + len(body)
    header = _HEADER.pack(
        magic,
        len(body) + len(_HUDI_IO_CHECKSUM),
        len(payload),
        -1,
        CHECKSUM_NULL,
        BYTES_PER_CHECKSUM,
        data_size,
    )
    return header + body + _HUDI_IO_CHECKSUM


def read_block(data: bytes, offset: int, codec: int, *, verify: bool = True) -> Block:
    """Parse the block at `offset`; checks its checksums (CRC32C, CRC32) when `verify`."""
    if offset < 0 or offset + BLOCK_HEADER_SIZE > len(data):
        raise CorruptFileError(f"HFile block header at {offset} is outside the file")
    header = BlockHeader(*_HEADER.unpack_from(data, offset))
    data_end = offset + header.on_disk_data_size_with_header
    end = offset + header.on_disk_size_with_header
    if not offset + BLOCK_HEADER_SIZE <= data_end <= end <= len(data):
        raise CorruptFileError(f"HFile block at {offset} ({header.magic!r}) has bad sizes")
    if verify and header.checksum_type in (CHECKSUM_CRC32, CHECKSUM_CRC32C):
        expected = _chunk_checksums(
            data[offset:data_end], header.checksum_type, header.bytes_per_checksum
        )
        if data[data_end:end] != expected:
            raise CorruptFileError(f"HFile block at {offset} ({header.magic!r}): bad checksum")
    raw = data[offset + BLOCK_HEADER_SIZE : data_end]
    payload = decompress(raw, codec, header.uncompressed_size_without_header)
    return Block(offset, header, payload)


# --- cells (HBase KeyValue) ----------------------------------------------------------------------


def encode_kv_key(row: bytes, timestamp: int = LATEST_TIMESTAMP, key_type: int = TYPE_PUT) -> bytes:
    """KeyValue key: row length, row, family length 0, (no family, no qualifier), timestamp, type."""
    if len(row) > MAX_ROW_LENGTH:
        raise ValueError(f"HFile row key of {len(row)} bytes exceeds {MAX_ROW_LENGTH}")
    return struct.pack(">H", len(row)) + row + struct.pack(">bqB", 0, timestamp, key_type)


def kv_key_row(key: bytes) -> bytes:
    """The row of a serialized KeyValue key."""
    if len(key) < 2:
        raise CorruptFileError("HFile KeyValue key shorter than its row length")
    (row_length,) = struct.unpack_from(">H", key)
    if 2 + row_length > len(key):
        raise CorruptFileError("HFile KeyValue row runs past its key")
    return key[2 : 2 + row_length]


def encode_cell(row: bytes, value: bytes) -> bytes:
    """One data-block cell: key length, value length, key, value, memstoreTS vlong 0 (no tags)."""
    key = encode_kv_key(row)
    return struct.pack(">ii", len(key), len(value)) + key + value + b"\x00"


def decode_cells(payload: bytes, *, mvcc: bool, tags: bool) -> tuple[list[bytes], list[bytes]]:
    """Rows and values of a data block, in order."""
    rows: list[bytes] = []
    values: list[bytes] = []
    pos, end = 0, len(payload)
    try:
        while pos < end:
            key_length, value_length = struct.unpack_from(">ii", payload, pos)
            pos += 8
            (row_length,) = struct.unpack_from(">H", payload, pos)
            if key_length < row_length + 2 or pos + key_length + value_length > end:
                raise CorruptFileError(f"HFile cell at {pos - 8} runs past its block")
            rows.append(payload[pos + 2 : pos + 2 + row_length])
            pos += key_length
            values.append(payload[pos : pos + value_length])
            pos += value_length
            if tags:
                pos += 2 + struct.unpack_from(">H", payload, pos)[0]
            if mvcc:
                pos = decode_vlong(payload, pos)[1]
    except struct.error as exc:
        raise CorruptFileError(f"truncated HFile data block: {exc}") from exc
    if pos != end:
        raise CorruptFileError("HFile data block ends inside a cell")
    return rows, values


# --- block index chunks --------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexEntry:
    key: bytes  # full KeyValue key (data index) or block name (meta index)
    offset: int
    size: int  # on-disk size of the referenced block, header and checksums included


def encode_root_index(entries: Sequence[IndexEntry]) -> bytes:
    return b"".join(
        _INDEX_ENTRY.pack(e.offset, e.size) + encode_vlong(len(e.key)) + e.key for e in entries
    )


def decode_root_index(payload: bytes, count: int) -> list[IndexEntry]:
    """The first `count` root-format entries (a multi-level root then has 16 bytes of mid-key)."""
    entries = []
    pos = 0
    try:
        for _ in range(count):
            offset, size = _INDEX_ENTRY.unpack_from(payload, pos)
            length, pos = decode_vlong(payload, pos + 12)
            if length < 0 or pos + length > len(payload):
                raise CorruptFileError("HFile root index entry runs past its block")
            entries.append(IndexEntry(payload[pos : pos + length], offset, size))
            pos += length
    except struct.error as exc:
        raise CorruptFileError(f"truncated HFile root index: {exc}") from exc
    return entries


def encode_non_root_index(entries: Sequence[IndexEntry]) -> bytes:
    """Leaf/intermediate format: count, secondary offsets (n + 1), then unprefixed entries."""
    marks = [0]
    for entry in entries:
        marks.append(marks[-1] + 12 + len(entry.key))
    head = struct.pack(f">i{len(marks)}i", len(entries), *marks)
    return head + b"".join(_INDEX_ENTRY.pack(e.offset, e.size) + e.key for e in entries)


def decode_non_root_index(payload: bytes) -> list[IndexEntry]:
    try:
        (count,) = struct.unpack_from(">i", payload)
        marks = struct.unpack_from(f">{count + 1}i", payload, 4)
    except struct.error as exc:
        raise CorruptFileError(f"truncated HFile non-root index: {exc}") from exc
    base = 4 + 4 * (count + 1)
    if base + marks[-1] > len(payload):
        raise CorruptFileError("HFile non-root index entries run past their block")
    entries = []
    for start, stop in itertools.pairwise(marks):
        offset, size = _INDEX_ENTRY.unpack_from(payload, base + start)
        entries.append(IndexEntry(payload[base + start + 12 : base + stop], offset, size))
    return entries


def non_root_size(keys: Sequence[bytes]) -> int:
    return 4 + 4 * (len(keys) + 1) + sum(12 + len(k) for k in keys)


def root_size(keys: Sequence[bytes]) -> int:
    return sum(12 + len(encode_vlong(len(k))) + len(k) for k in keys)
