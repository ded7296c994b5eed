"""HFile v3 reader: trailer, load-on-open blocks, block index, cells (layout: `pyhudi.codec.hfile`)."""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from pyhudi.codec.hfile.blocks import (
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
    decode_non_root_index,
    decode_root_index,
    kv_key_row,
    read_block,
)
from pyhudi.codec.hfile.cells import CellColumns, cell_layout
from pyhudi.codec.hfile.meta import HFileInfo, HFileTrailer, decode_file_info
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError

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

    def cell_columns(self, index: int) -> CellColumns:
        """The cells of data block `index` as positions into its payload (no object per cell)."""
        entry = self._index[index]
        block = self._block(entry.offset, MAGIC_DATA, entry.size)
        info = self.file_info
        return cell_layout(block.payload, mvcc=info.includes_mvcc, tags=info.includes_tags)

    def blocks_holding(self, keys: Iterable[bytes]) -> list[int]:
        """The data blocks (indexes, in order) that may hold a row equal to one of `keys`.

        Block `i` may hold the rows from its index key to the next block's index key, both
        included (a row equal to an index key may also end the block before, see `_scan_from`),
        the first block also the rows before its index key: one search of the sorted keys per
        block, not two searches of the index per key."""
        rows = self._index_rows
        probes = sorted(keys)
        found = []
        for i, row in enumerate(rows):
            at = 0 if i == 0 else bisect_left(probes, row)
            upper = rows[i + 1] if i + 1 < len(rows) else None
            if at < len(probes) and (upper is None or probes[at] <= upper):
                found.append(i)
        return found

    def blocks_with_prefix(self, prefix: bytes) -> range:
        """The data blocks (indexes) that may hold a row starting with `prefix`."""
        rows = self._index_rows
        first = max(0, bisect_left(rows, prefix) - 1)
        upper = _prefix_end(prefix)
        stop = len(rows) if upper is None else bisect_left(rows, upper)
        return range(first, max(stop, first + 1) if rows else 0)

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
        cached = self.cell_columns(index).lists()
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


def _prefix_end(prefix: bytes) -> bytes | None:
    """The least byte string above every string starting with `prefix` (None: no bound)."""
    trimmed = prefix.rstrip(b"\xff")
    if not trimmed:
        return None
    return trimmed[:-1] + bytes([trimmed[-1] + 1])
