"""HFile v3 writer mirroring HBase 2.4 `HFileWriterImpl` + `HFileBlockIndex.BlockIndexWriter`.

Byte layout: the docstring of `pyhudi.codec.hfile`. Public entry point: `write_hfile`.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Iterable, Mapping

from pyhudi.codec.hfile.blocks import (
    BLOCK_HEADER_SIZE,
    MAGIC_DATA,
    MAGIC_FILE_INFO,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_META,
    MAGIC_ROOT_INDEX,
    TRAILER_SIZE,
    IndexEntry,
    as_bytes,
    codec_id,
    encode_block,
    encode_block_hudi_io,
    encode_cell,
    encode_kv_key,
    encode_non_root_index,
    encode_root_index,
    non_root_size,
    root_size,
)
from pyhudi.codec.hfile.meta import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CREATE_TIME_TS,
    KEY_VALUE_VERSION,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    RESERVED_PREFIX,
    HFileTrailer,
    encode_file_info,
    java_hash_map_order,
)

#: Comparator class of the bootstrap index HFiles (Hudi 0.14 `HFileBootstrapIndex`).
HFILE_BOOTSTRAP_COMPARATOR = (
    "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex$HoodieKVComparator"
)
#: Comparator class of metadata-table HFiles (`HoodieAvroHFileWriter`), as in the fixtures.
HFILE_MDT_COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
#: HBase `hfile.index.block.max.size` and `hfile.index.block.min.entries` defaults.
DEFAULT_INDEX_CHUNK_SIZE = 128 * 1024
MIN_INDEX_ENTRIES = 16
_MAX_INDEX_LEVELS = 16


def write_hfile(
    items: Iterable[tuple[bytes, bytes]],
    *,
    file_info: Mapping[bytes | str, bytes] | None = None,
    meta_blocks: Mapping[bytes | str, bytes] | None = None,
    comparator_class: str = HFILE_BOOTSTRAP_COMPARATOR,
    block_size: int = 64 * 1024,
    compression: str = "NONE",
    index_chunk_size: int = DEFAULT_INDEX_CHUNK_SIZE,
    hudi_io: bool = False,
    create_time_ms: int = 0,
) -> bytes:
    """Write an HFile v3 the way HBase 2.4's `HFileWriterImpl` does, and return its bytes.

    `items` are (row key, value) pairs in non-decreasing unsigned byte order (a decreasing key
    raises ValueError; equal keys are allowed, as in HBase, and stay in one block). A data block
    is closed before a new row once its payload reaches `block_size` bytes (HBase default 64 KiB;
    Hudi's MDT uses 1 MiB). The index turns multi-level when the leaf chunk reaches
    `index_chunk_size` bytes. `file_info` adds user entries (keys starting with `hfile.` are
    reserved); `meta_blocks` adds named meta blocks. Index keys are the blocks' real first keys
    (HBase would write a shorter separator; both readers accept either).

    `hudi_io`: the layout of Hudi 1.2's own `hudi-io` writer instead (`_HudiIoWriter`), with
    `create_time_ms` as `hfile.CREATE_TIME_TS`.
    """
    if block_size <= 0 or index_chunk_size <= 0:
        raise ValueError("block_size and index_chunk_size must be positive")
    if hudi_io:
        io_writer = _HudiIoWriter(codec_id(compression), block_size)
        for key, value in items:
            io_writer.append(bytes(key), bytes(value))
        user = _user_file_info(file_info)
        return io_writer.finish(user, meta_blocks or {}, comparator_class, create_time_ms)
    writer = _Writer(codec_id(compression), block_size, index_chunk_size)
    for key, value in items:
        writer.append(bytes(key), bytes(value))
    return writer.finish(_user_file_info(file_info), meta_blocks or {}, comparator_class)


def _user_file_info(file_info: Mapping[bytes | str, bytes] | None) -> dict[bytes, bytes]:
    entries: dict[bytes, bytes] = {}
    for key, value in (file_info or {}).items():
        raw = as_bytes(key)
        if raw.startswith(RESERVED_PREFIX) or raw in (KEY_VALUE_VERSION, MAX_MEMSTORE_TS_KEY):
            raise ValueError(f"HFile FileInfo key {raw!r} is reserved for HBase")
        entries[raw] = bytes(value)
    return entries


class _Writer:
    """State of one HFile being written (mirrors HBase `HFileWriterImpl` + `BlockIndexWriter`)."""

    def __init__(self, codec: int, block_size: int, index_chunk_size: int) -> None:
        self._codec = codec
        self._block_size = block_size
        self._chunk_size = index_chunk_size
        self._out = bytearray()
        self._prev_offsets: dict[bytes, int] = {}
        self._cells = bytearray()
        self._block_first: bytes = b""
        self._last_row: bytes | None = None
        self._entries = self._key_bytes = self._value_bytes = 0
        self._uncompressed = 0  # trailer totalUncompressedBytes, less the trailer
        self._index_uncompressed = 0  # trailer uncompressedDataIndexSize
        self._first_data = self._last_data = -1
        self._data_blocks = 0
        self._leaf: list[IndexEntry] = []
        self._root: list[IndexEntry] = []
        self._root_counts: list[int] = []  # data blocks covered up to each root entry
        self._levels = 1

    def append(self, row: bytes, value: bytes) -> None:
        if self._last_row is not None:
            if row < self._last_row:
                raise ValueError(f"HFile keys must be sorted: {row!r} after {self._last_row!r}")
            if row != self._last_row and len(self._cells) >= self._block_size:
                self._finish_data_block()
                self._write_leaf(closing=False)
        if not self._cells:
            self._block_first = row
        self._cells += encode_cell(row, value)
        self._last_row = row
        self._entries += 1
        self._key_bytes += len(row) + 12
        self._value_bytes += len(value)

    def finish(
        self, user_info: dict[bytes, bytes], metas: Mapping[bytes | str, bytes], comparator: str
    ) -> bytes:
        self._finish_data_block()
        self._write_leaf(closing=True)
        meta_index = [
            self._write_counted(MAGIC_META, bytes(metas[name]), as_bytes(name))
            for name in sorted(metas, key=as_bytes)
        ]
        load_on_open = self._write_index()
        self._write_counted(MAGIC_ROOT_INDEX, encode_root_index(meta_index), b"")
        info_offset = len(self._out)
        self._write_counted(MAGIC_FILE_INFO, encode_file_info(self._file_info(user_info)), b"")
        trailer = HFileTrailer(
            file_info_offset=info_offset,
            load_on_open_data_offset=load_on_open,
            uncompressed_data_index_size=self._index_uncompressed,
            total_uncompressed_bytes=self._uncompressed + TRAILER_SIZE,
            data_index_count=len(self._root),
            meta_index_count=len(meta_index),
            entry_count=self._entries,
            num_data_index_levels=self._levels,
            first_data_block_offset=self._first_data,
            last_data_block_offset=self._last_data,
            comparator_class_name=comparator,
            compression_codec=self._codec,
        )
        return bytes(self._out + trailer.encode())

    def _write(self, magic: bytes, payload: bytes) -> tuple[int, int]:
        """Append one block; returns (offset, on-disk size with header)."""
        offset = len(self._out)
        block = encode_block(magic, payload, self._prev_offsets.get(magic, -1), self._codec)
        self._prev_offsets[magic] = offset
        self._out += block
        return offset, len(block)

    def _write_counted(self, magic: bytes, payload: bytes, key: bytes) -> IndexEntry:
        """A block that HBase adds to the trailer's totalUncompressedBytes."""
        offset, size = self._write(magic, payload)
        self._uncompressed += BLOCK_HEADER_SIZE + len(payload)
        return IndexEntry(key, offset, size)

    def _finish_data_block(self) -> None:
        if not self._cells:
            return
        entry = self._write_counted(
            MAGIC_DATA, bytes(self._cells), encode_kv_key(self._block_first)
        )
        if self._first_data < 0:
            self._first_data = entry.offset
        self._last_data = entry.offset
        self._data_blocks += 1
        self._leaf.append(entry)
        self._cells = bytearray()

    def _write_leaf(self, *, closing: bool) -> None:
        """HBase `BlockIndexWriter.shouldWriteBlock` + `writeInlineBlock` + `blockWritten`."""
        if not self._leaf:
            return
        if closing and not self._root:
            self._root, self._leaf = self._leaf, []  # single-level index
            return
        if not closing and non_root_size([e.key for e in self._leaf]) < self._chunk_size:
            return
        payload = encode_non_root_index(self._leaf)
        leaf = self._write_counted(MAGIC_LEAF_INDEX, payload, self._leaf[0].key)
        self._index_uncompressed += len(payload)
        self._root.append(leaf)
        self._root_counts.append(self._data_blocks)
        self._levels = 2
        self._leaf = []

    def _write_index(self) -> int:
        """Intermediate levels (if the root is too big), then the root; returns the root offset."""
        mid_key = self._mid_key_metadata() if self._levels > 1 else b""
        while (
            root_size([e.key for e in self._root]) > self._chunk_size
            and len(self._root) > MIN_INDEX_ENTRIES
            and self._levels < _MAX_INDEX_LEVELS
        ):
            self._root = self._write_intermediate_level(self._root)
            self._levels += 1
        payload = encode_root_index(self._root) + mid_key
        offset, _ = self._write(MAGIC_ROOT_INDEX, payload)
        self._index_uncompressed += len(payload)
        return offset

    def _write_intermediate_level(self, level: list[IndexEntry]) -> list[IndexEntry]:
        parent: list[IndexEntry] = []
        chunk: list[IndexEntry] = []
        for i, entry in enumerate(level):
            chunk.append(entry)
            if i >= MIN_INDEX_ENTRIES and root_size([e.key for e in chunk]) >= self._chunk_size:
                parent.append(self._write_intermediate_block(chunk))
                chunk = []
        if chunk:
            parent.append(self._write_intermediate_block(chunk))
        return parent

    def _write_intermediate_block(self, chunk: list[IndexEntry]) -> IndexEntry:
        payload = encode_non_root_index(chunk)
        offset, size = self._write(MAGIC_INTERMEDIATE_INDEX, payload)
        self._index_uncompressed += len(payload)
        return IndexEntry(chunk[0].key, offset, size)

    def _mid_key_metadata(self) -> bytes:
        """HBase `BlockIndexChunk.getMidKeyMetadata`: where the middle data block is."""
        counts = self._root_counts
        middle = (counts[-1] - 1) // 2
        i = bisect_right(counts, middle)
        before = counts[i - 1] if i > 0 else 0
        return struct.pack(">qii", self._root[i].offset, self._root[i].size, middle - before)

    def _file_info(self, user_info: dict[bytes, bytes]) -> dict[bytes, bytes]:
        n = self._entries
        info = dict(user_info)
        info[KEY_VALUE_VERSION] = struct.pack(">i", 1)
        info[MAX_MEMSTORE_TS_KEY] = struct.pack(">q", 0)
        info[AVG_KEY_LEN] = struct.pack(">i", self._key_bytes // n if n else 0)
        info[AVG_VALUE_LEN] = struct.pack(">i", self._value_bytes // n if n else 0)
        info[CREATE_TIME_TS] = struct.pack(">q", 0)
        if self._last_row is not None:
            info[LAST_KEY] = encode_kv_key(self._last_row)
        return info


class _HudiIoWriter:
    """Hudi 1.2's `hudi-io` `HFileWriterImpl`, as the files it wrote show: the same cells; a data
    block is closed before a cell that would take its payload past `block_size`; blocks framed by
    `encode_block_hudi_io`; one index level whose keys are `uint16 rowLength, row`; FileInfo in a
    Java `HashMap`'s order with `hfile.LASTKEY` row-only and `hfile.AVG_KEY_LEN` the average row
    length; the trailer at minor version 0, totalUncompressedBytes 0 and uncompressedDataIndexSize
    the data blocks' payload bytes."""

    def __init__(self, codec: int, block_size: int) -> None:
        self._codec = codec
        self._block_size = block_size
        self._out = bytearray()
        self._cells = bytearray()
        self._block_first = b""
        self._last_row: bytes | None = None
        self._entries = self._row_bytes = self._value_bytes = self._data_bytes = 0
        self._index: list[IndexEntry] = []

    def append(self, row: bytes, value: bytes) -> None:
        if self._last_row is not None and row < self._last_row:
            raise ValueError(f"HFile keys must be sorted: {row!r} after {self._last_row!r}")
        cell = encode_cell(row, value)
        if self._cells and len(self._cells) + len(cell) > self._block_size:
            self._finish_data_block()
        if not self._cells:
            self._block_first = row
        self._cells += cell
        self._data_bytes += len(cell)
        self._last_row = row
        self._entries += 1
        self._row_bytes += len(row)
        self._value_bytes += len(value)

    def _write(self, magic: bytes, payload: bytes) -> tuple[int, int]:
        offset = len(self._out)
        block = encode_block_hudi_io(magic, payload, self._codec)
        self._out += block
        return offset, len(block)

    def _finish_data_block(self) -> None:
        if not self._cells:
            return
        offset, size = self._write(MAGIC_DATA, bytes(self._cells))
        self._index.append(IndexEntry(_row_key(self._block_first), offset, size))
        self._cells = bytearray()

    def finish(
        self,
        user_info: dict[bytes, bytes],
        metas: Mapping[bytes | str, bytes],
        comparator: str,
        create_time_ms: int,
    ) -> bytes:
        self._finish_data_block()
        meta_index = []
        for name in sorted(metas, key=as_bytes):
            offset, size = self._write(MAGIC_META, bytes(metas[name]))
            meta_index.append(IndexEntry(as_bytes(name), offset, size))
        load_on_open, _ = self._write(MAGIC_ROOT_INDEX, encode_root_index(self._index))
        self._write(MAGIC_ROOT_INDEX, encode_root_index(meta_index))
        info_offset = len(self._out)
        info = self._file_info(user_info, create_time_ms)
        self._write(MAGIC_FILE_INFO, encode_file_info(info, ordered=True))
        trailer = HFileTrailer(
            file_info_offset=info_offset,
            load_on_open_data_offset=load_on_open,
            uncompressed_data_index_size=self._data_bytes,
            total_uncompressed_bytes=0,
            data_index_count=len(self._index),
            meta_index_count=len(meta_index),
            entry_count=self._entries,
            num_data_index_levels=1,
            first_data_block_offset=self._index[0].offset if self._index else -1,
            last_data_block_offset=self._index[-1].offset if self._index else 0,
            comparator_class_name=comparator,
            compression_codec=self._codec,
            minor_version=0,
        )
        return bytes(self._out + trailer.encode())

    def _file_info(self, user_info: dict[bytes, bytes], create_time_ms: int) -> dict[bytes, bytes]:
        n = self._entries
        entries = {MAX_MEMSTORE_TS_KEY: struct.pack(">q", 0), **user_info}
        entries[LAST_KEY] = b"" if self._last_row is None else _row_key(self._last_row)
        entries[AVG_KEY_LEN] = struct.pack(">i", self._row_bytes // n if n else 0)
        entries[AVG_VALUE_LEN] = struct.pack(">i", self._value_bytes // n if n else 0)
        entries[KEY_VALUE_VERSION] = struct.pack(">i", 1)
        entries[CREATE_TIME_TS] = struct.pack(">q", create_time_ms)
        return {key: entries[key] for key in java_hash_map_order(list(entries))}


def _row_key(row: bytes) -> bytes:
    """`hudi-io`'s index and last keys: the row and its length, no family, timestamp or type."""
    return struct.pack(">H", len(row)) + row
