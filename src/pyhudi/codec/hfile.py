"""HBase HFile v3 reader and writer, as Hudi uses it (reference §5.9, §6, §1.8).

Hudi stores the metadata table's base files and HFILE_DATA_BLOCK contents, and the bootstrap index
(`.hoodie/.aux/.bootstrap/{.partitions,.fileids}/…hfile`), as HFiles written by HBase 2.4 (Hudi
0.14/1.0). Readers: HBase's `HFileReaderImpl` (0.14) and Hudi's native `hudi-io` reader (0.15+).
Sources: HBase `HFileWriterImpl`, `HFileBlock`, `HFileBlockIndex`, `FixedFileTrailer`, `HFileInfo`;
Hudi `hudi-io/…/io/hfile/*`; hudi-rs `crates/core/src/hfile/*`. Checked byte for byte against the
HBase-written files of the `mor_avro__v8_trips_8i3u1d` fixture (the writer reproduces all 59 of its
HFiles, base files and HFILE log blocks, byte for byte).

API: `HFileReader(data)` (`.trailer`, `.file_info`, `.items()`, `.get(key)`,
`.keys_with_prefix(prefix)`, `.meta_block(name)`) and `write_hfile(items, ...)`. Modules:
`hfile_blocks` (block framing, checksums, cells, index chunks), `hfile_meta` (FileInfo, trailer),
`hfile_writer` (the writer), `protobuf_lite` (varints).

File (all integers big-endian unless noted):

| section                | blocks                                                            |
|------------------------|-------------------------------------------------------------------|
| scanned                | `DATABLK*` data blocks; `IDXLEAF2` leaf index blocks in between (multi-level index only) |
| non-scanned            | `METABLKc` meta blocks, sorted by name (Hudi MDT: `bloomFilter`)  |
| load-on-open           | `IDXINTE2` intermediate index blocks (3+ levels only), then `trailer.load_on_open_data_offset` → `IDXROOT2` data index root, `IDXROOT2` meta index (always present, maybe empty), `FILEINF2` file info |
| trailer                | last 4096 bytes                                                    |

Block (every kind):

| off | size | field                                                                              |
|-----|------|------------------------------------------------------------------------------------|
| 0   | 8    | magic                                                                              |
| 8   | 4    | onDiskSizeWithoutHeader = len(stored payload) + checksum bytes                     |
| 12  | 4    | uncompressedSizeWithoutHeader = len(payload)                                       |
| 16  | 8    | prevBlockOffset: offset of the previous block of the same magic, else -1           |
| 24  | 1    | checksumType: 0 NULL, 1 CRC32, 2 CRC32C (HBase default; all fixture blocks)        |
| 25  | 4    | bytesPerChecksum = 16384                                                           |
| 29  | 4    | onDiskDataSizeWithHeader = 33 + len(stored payload)                                |
| 33  | var  | stored payload: the payload, or for GZ one gzip member (header `1f8b0800000000000000`, deflate level 6) |
| …   | 4·k  | CRC32C of each 16384-byte chunk of bytes [0, onDiskDataSizeWithHeader)            |

Payloads:

| block      | payload                                                                               |
|------------|---------------------------------------------------------------------------------------|
| `DATABLK*` | cells: int32 keyLength, int32 valueLength, key, value, [uint16 tagsLength + tags: only if FileInfo has `hfile.MAX_TAGS_LEN`], memstoreTS as Hadoop vlong (present when `KEY_VALUE_VERSION` = 1; Hudi: `00`) |
| key        | uint16 rowLength, row, uint8 familyLength = 0, family, qualifier (empty), int64 timestamp = `Long.MAX_VALUE`, uint8 type = 4 (Put) |
| `IDXROOT2` | per entry: int64 block offset, int32 block on-disk size with header, Hadoop vint key length, key (data index: a full KeyValue key; meta index: the block name); a multi-level data root ends with 16 bytes of mid-key metadata (int64 offset, int32 size, int32 index) |
| `IDXLEAF2`/`IDXINTE2` | int32 n, n+1 int32 offsets of the entries (relative to the end of this list; the last = total size), entries: int64 offset, int32 on-disk size, key (no length) |
| `METABLKc` | opaque bytes                                                                          |
| `FILEINF2` | `PBUF`, varint length, `InfoProto{repeated BytesBytesPair map_entry = 1}` (`first` = 1, `second` = 2), sorted by key |

FileInfo entries HBase always writes: `KEY_VALUE_VERSION` int32 1, `MAX_MEMSTORE_TS_KEY` int64 0,
`hfile.AVG_KEY_LEN` int32 (full key length), `hfile.AVG_VALUE_LEN` int32, `hfile.CREATE_TIME_TS`
int64 (0 in Hudi files), `hfile.LASTKEY` (full key of the last cell; absent when empty). No
`hfile.MAX_TAGS_LEN`/`hfile.TAGS_COMPRESSED` (no tags) and no `DATA_BLOCK_ENCODING`. Hudi adds its
own: MDT `schema`, `minRecordKey`, `maxRecordKey`, `bloomFilterTypeCode`; bootstrap `INDEX_INFO`.

Trailer (4096 bytes): `TRABLK"$`, varint length + `FileTrailerProto` (1 fileInfoOffset, 2
loadOnOpenDataOffset, 3 uncompressedDataIndexSize, 4 totalUncompressedBytes, 5 dataIndexCount, 6
metaIndexCount, 7 entryCount, 8 numDataIndexLevels, 9 firstDataBlockOffset, 10 lastDataBlockOffset,
11 comparatorClassName, 12 compressionCodec: LZO 0, GZ 1, NONE 2, SNAPPY 3, LZ4 4, BZIP2 5, ZSTD 6;
13 encryptionKey), zero padding, int32 `minor << 24 | major` = `03 00 00 03`. An empty file has
offsets 9 and 10 = -1 (ten-byte varints). Field 4 = sum of (33 + payload) over data, leaf index,
meta, meta index and file info blocks, + 4096; field 3 = payload bytes of all data index blocks.

Hadoop vint/vlong: a value in [-112, 127] is one byte; otherwise one byte `-112 - n` (or `-120 - n`
for a negative value, stored inverted) followed by n big-endian bytes.

Only NONE and GZ compression are supported; other codecs raise `UnsupportedOperationError`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterator

from pyhudi.codec.hfile_blocks import (
    MAGIC_DATA,
    MAGIC_FILE_INFO,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_META,
    MAGIC_ROOT_INDEX,
    Block,
    IndexEntry,
    as_bytes,
    check_codec_supported,
    decode_cells,
    decode_non_root_index,
    decode_root_index,
    kv_key_row,
    read_block,
)
from pyhudi.codec.hfile_meta import HFileInfo, HFileTrailer, decode_file_info
from pyhudi.codec.hfile_writer import (
    HFILE_BOOTSTRAP_COMPARATOR,
    HFILE_MDT_COMPARATOR,
    write_hfile,
)
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError

__all__ = [
    "HFILE_BOOTSTRAP_COMPARATOR",
    "HFILE_MDT_COMPARATOR",
    "HFileInfo",
    "HFileReader",
    "HFileTrailer",
    "write_hfile",
]

_CACHED_BLOCKS = 256


class HFileReader:
    """An HFile held in memory: trailer, FileInfo, block index, and its cells (row key, value)."""

    def __init__(self, data: bytes, *, verify_checksums: bool = True) -> None:
        self._data = bytes(data)
        self._verify = verify_checksums
        self._verified: set[int] = set()  # block offsets whose checksums were checked
        self.trailer = HFileTrailer.decode(self._data)
        check_codec_supported(self.trailer.compression_codec)
        root = self._block(self.trailer.load_on_open_data_offset, MAGIC_ROOT_INDEX)
        meta_root = self._block(root.end, MAGIC_ROOT_INDEX)
        info = self._block(meta_root.end, MAGIC_FILE_INFO)
        self.file_info = HFileInfo(decode_file_info(info.payload))
        if self.file_info.data_block_encoding != "NONE":
            raise UnsupportedOperationError(
                f"HFile data block encoding {self.file_info.data_block_encoding} is not supported"
            )
        metas = decode_root_index(meta_root.payload, self.trailer.meta_index_count)
        self._meta_index = {e.key: e for e in metas}
        roots = decode_root_index(root.payload, self.trailer.data_index_count)
        self._index = self._descend(roots)
        self._index_rows = [kv_key_row(e.key) for e in self._index]
        self._cache: OrderedDict[int, tuple[list[bytes], list[bytes]]] = OrderedDict()

    @property
    def comparator_class_name(self) -> str:
        return self.trailer.comparator_class_name

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    @property
    def compression(self) -> str:
        return self.trailer.compression

    @property
    def data_block_count(self) -> int:
        return len(self._index)

    @property
    def meta_block_names(self) -> list[bytes]:
        return list(self._meta_index)

    def __len__(self) -> int:
        return self.trailer.entry_count

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """All (row key, value) pairs in file order."""
        for i in range(len(self._index)):
            rows, values = self._cells(i)
            yield from zip(rows, values)

    def get(self, key: bytes | str) -> bytes | None:
        """The value of the first cell whose row equals `key`, else None."""
        probe = as_bytes(key)
        for row, value in self._scan_from(probe):
            return value if row == probe else None
        return None

    def keys_with_prefix(self, prefix: bytes | str) -> Iterator[tuple[bytes, bytes]]:
        """(row, value) of every cell whose row starts with `prefix`, in order."""
        start = as_bytes(prefix)
        for row, value in self._scan_from(start):
            if not row.startswith(start):
                return
            yield row, value

    def meta_block(self, name: bytes | str) -> bytes | None:
        """Payload of the named meta block (e.g. Hudi's `bloomFilter`), else None."""
        entry = self._meta_index.get(as_bytes(name))
        return None if entry is None else self._block(entry.offset, MAGIC_META, entry.size).payload

    # --- internals -------------------------------------------------------------------------------

    def _block(self, offset: int, magic: bytes, size: int | None = None) -> Block:
        verify = self._verify and offset not in self._verified
        block = read_block(self._data, offset, self.trailer.compression_codec, verify=verify)
        self._verified.add(offset)
        if block.header.magic != magic:
            raise CorruptFileError(
                f"HFile block at {offset} is {block.header.magic!r}, expected {magic!r}"
            )
        if size is not None and size != block.header.on_disk_size_with_header:
            raise CorruptFileError(f"HFile index says {size} bytes for the block at {offset}")
        return block

    def _descend(self, entries: list[IndexEntry]) -> list[IndexEntry]:
        """Walk a multi-level index down to the entries that point at data blocks."""
        levels = self.trailer.num_data_index_levels
        for level in range(1, levels):
            magic = MAGIC_LEAF_INDEX if level == levels - 1 else MAGIC_INTERMEDIATE_INDEX
            entries = [
                child
                for entry in entries
                for child in decode_non_root_index(
                    self._block(entry.offset, magic, entry.size).payload
                )
            ]
        return entries

    def _cells(self, index: int) -> tuple[list[bytes], list[bytes]]:
        """Rows and values of a data block, from a small LRU cache of decoded blocks."""
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        entry = self._index[index]
        block = self._block(entry.offset, MAGIC_DATA, entry.size)
        info = self.file_info
        cached = decode_cells(block.payload, mvcc=info.includes_mvcc, tags=info.includes_tags)
        self._cache[index] = cached
        if len(self._cache) > _CACHED_BLOCKS:
            self._cache.popitem(last=False)
        return cached

    def _scan_from(self, key: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Cells from the first one whose row is >= `key`.

        An index key may be a shortened "fake" key (HBase's midpoint, <= the block's first row) or
        equal to the last row of the previous block (duplicate rows), so the search starts in the
        block before the first index key >= `key`.
        """
        start = max(0, bisect_left(self._index_rows, key) - 1)
        for i in range(start, len(self._index)):
            rows, values = self._cells(i)
            j = bisect_left(rows, key)
            yield from zip(rows[j:], values[j:])
