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
`blocks` (block framing, checksums, cells, index chunks), `meta` (FileInfo, trailer), `reader`,
`writer`; `pyhudi.codec.protobuf_lite` (varints).

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

Hudi 1.1 (table version 9) writes metadata-table HFiles with its own `hudi-io` writer (checked on
the v9 fixtures; the reader reads both): block checksum type 0 (NULL, the checksum bytes unchecked),
prevBlockOffset always -1, trailer minor version 0 with totalUncompressedBytes 0, root index keys
and `hfile.LASTKEY` holding only `uint16 rowLength, row` (no family, timestamp, type),
`hfile.AVG_KEY_LEN` the average row length, `hfile.CREATE_TIME_TS` the real write time, FileInfo
entries unsorted. Cells are the same HBase KeyValues. `write_hfile` writes the HBase layout (what
Hudi 0.14/0.15, table version 6, write), and with `hudi_io=True` the `hudi-io` one (what Hudi 1.2
writes at versions 8 and 9, whatever the version; pyhudi's metadata tables of those versions): in
addition, FileInfo in a Java `HashMap`'s order, the trailer without totalUncompressedBytes and
uncompressedDataIndexSize the data blocks' payload bytes, a data block closed before a cell that
would pass the block size, one index level, an empty file's `hfile.LASTKEY` empty and last data
block offset 0. Checked byte for byte against the 209 HFiles of the `mor_avro__v9_txns_simple_meta`
and `cow__v9_txns_complex_meta` metadata tables (Hudi 1.1) and the 105 of tables this machine's
Hudi 1.2 wrote (but for the gzip OS byte, 255 there: Hadoop without its native zlib).

Only NONE and GZ compression are supported; other codecs raise `UnsupportedOperationError`.
"""

from pyhudi.codec.hfile.meta import HFileInfo, HFileTrailer
from pyhudi.codec.hfile.reader import HFileReader
from pyhudi.codec.hfile.writer import HFILE_BOOTSTRAP_COMPARATOR, HFILE_MDT_COMPARATOR, write_hfile

__all__ = [
    "HFILE_BOOTSTRAP_COMPARATOR",
    "HFILE_MDT_COMPARATOR",
    "HFileInfo",
    "HFileReader",
    "HFileTrailer",
    "write_hfile",
]
