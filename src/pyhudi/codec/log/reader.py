"""Reading a whole log file: block framing, corrupt-block detection, forward and reverse iteration.

A log file is blocks back to back, with no file header or trailer (frame layout in `block`):

| bytes                       | meaning                                                     |
|-----------------------------|-------------------------------------------------------------|
| `#HUDI#` `blockSize` …      | block at offset `o`, ending at `e = o + 14 + blockSize`     |
| 8 bytes before `e`          | trailer = `blockSize + 6`: checked, and the reverse pointer |
| `#HUDI#` at `e`, or EOF     | the next block                                              |

Corruption (Hudi's `HoodieLogFileReader.isBlockCorrupt`, reference §5.11): a block is corrupt when
its size runs past EOF, the trailer disagrees with `blockSize`, or (with `strict=True`) the
bytes after it are neither MAGIC nor EOF. The reader then scans forward to the next MAGIC and
yields one CORRUPT_BLOCK for the bytes in between; the valid blocks after it are read as usual.

Where pyhudi is more lenient than Hudi 0.14, by default:
* a valid block followed by garbage stays valid; the garbage becomes its own corrupt range
  (Java marks the preceding block corrupt and loses it; `strict=True` reproduces that);
* bytes that do not start with MAGIC where a block should begin (garbage between blocks, a torn
  MAGIC at EOF) are a corrupt range (Java fails, or ignores fewer than 6 trailing bytes);
* a frame whose inner structure does not add up (header, content length, footer) is corrupt
  (Java would throw); adjacent corrupt ranges are merged into one.
Log format version 0 (the legacy header-less format) raises `UnsupportedVersionError`.
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import IO, Any

from pyhudi.codec.log.block import (
    LOG_FORMAT_VERSION,
    MAGIC,
    MAX_BLOCK_SIZE,
    MIN_BLOCK_SIZE,
    HeaderAccess,
    LogBlock,
)
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError
from pyhudi.model.enums import HeaderMetadataType, LogBlockType

LogSource = bytes | bytearray | memoryview | IO[bytes]
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_TWO_I32 = struct.Struct(">ii")
_SCAN_CHUNK_BYTES = 1 << 20  # Hudi scans for the next MAGIC in 1 MiB buffers too
_PRELUDE_READ_BYTES = 8 << 10  # first read of a block: version, type, header, content length


class _Source:
    """Random access to the log bytes, from memory or a seekable binary file."""

    size: int

    def read(self, offset: int, length: int) -> bytes | memoryview:
        raise NotImplementedError

    def find_magic(self, start: int, stop: int) -> int:
        raise NotImplementedError


class _BufferSource(_Source):
    def __init__(self, data: bytes) -> None:
        self._data, self._view, self.size = data, memoryview(data), len(data)

    def read(self, offset: int, length: int) -> memoryview:
        return self._view[offset : offset + length]

    def find_magic(self, start: int, stop: int) -> int:
        return self._data.find(MAGIC, start, stop)


class _FileSource(_Source):
    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.size = file.seek(0, io.SEEK_END)

    def read(self, offset: int, length: int) -> bytes:
        self._file.seek(offset)
        return self._file.read(length)

    def find_magic(self, start: int, stop: int) -> int:
        pos = start
        while pos < stop:
            chunk = self.read(pos, min(_SCAN_CHUNK_BYTES, stop - pos))
            found = chunk.find(MAGIC)
            if found >= 0:
                return pos + found
            if pos + len(chunk) >= stop or not chunk:
                return -1
            pos += len(chunk) - (len(MAGIC) - 1)  # a MAGIC may straddle two chunks
        return -1


def _as_source(source: LogSource) -> _Source:
    if isinstance(source, bytes):
        return _BufferSource(source)
    if isinstance(source, (bytearray, memoryview)):
        return _BufferSource(bytes(source))  # a private copy: lazy content must not change under us
    if hasattr(source, "read") and hasattr(source, "seek"):
        return _FileSource(source)
    raise TypeError(f"a log source is bytes or a seekable binary file, not {type(source).__name__}")


@dataclass(frozen=True)
class BlockLocation:
    """Where a block sits in its file. For corrupt blocks the content is the whole corrupt range."""

    offset: int
    size_bytes: int
    content_offset: int
    content_length: int

    @property
    def end_offset(self) -> int:
        return self.offset + self.size_bytes


@dataclass(frozen=True)
class LocatedBlock(HeaderAccess):
    """A block as read from a log file: header parsed, content read from the source on first use.

    With a file-object source, the file must stay open until `content` has been read (or pass
    `read_content=True` to the iterators).
    """

    block_type: LogBlockType
    header: Mapping[HeaderMetadataType, str]
    footer: Mapping[int, str]
    format_version: int | None
    location: BlockLocation
    corrupt_reason: str | None = None
    _source: _Source | None = field(default=None, repr=False, compare=False)

    @property
    def is_corrupt(self) -> bool:
        return self.block_type is LogBlockType.CORRUPT_BLOCK

    @property
    def offset(self) -> int:
        return self.location.offset

    @property
    def size_bytes(self) -> int:
        return self.location.size_bytes

    @property
    def end_offset(self) -> int:
        return self.location.end_offset

    @cached_property
    def content(self) -> bytes:
        return self.read_content_range(0, self.location.content_length)

    def read_content_range(self, start: int, length: int) -> bytes:
        """`length` content bytes from `start` (clipped to the content), without loading the rest."""
        if "content" in self.__dict__:
            return self.content[start : start + length]
        if self._source is None:
            raise ValueError("this block has no source to read its content from")
        length = max(0, min(length, self.location.content_length - start))
        return bytes(self._source.read(self.location.content_offset + start, length))

    def to_log_block(self) -> LogBlock:
        """The block as a value (content loaded); corrupt blocks cannot be converted."""
        if self.is_corrupt:
            raise CorruptFileError(f"corrupt log bytes at {self.offset}: {self.corrupt_reason}")
        assert self.format_version is not None
        return LogBlock(
            self.block_type, dict(self.header), self.content, dict(self.footer), self.format_version
        )


# ---- parsing one block -----------------------------------------------------------------------


def _decode_map(
    buf: bytes | memoryview, offset: int, stop: int, *, typed: bool
) -> tuple[dict[Any, str], int]:
    """A header (typed keys) or footer (int keys) map; values UTF-8 with `surrogateescape`."""
    if offset + 4 > stop:
        raise CorruptFileError(f"header map count at {offset} runs past {stop}")
    (count,) = _I32.unpack_from(buf, offset)
    if count < 0 or offset + 4 + 8 * count > stop:
        raise CorruptFileError(f"header map at {offset} has an impossible entry count {count}")
    pos, entries = offset + 4, {}
    for _ in range(count):
        if pos + 8 > stop:
            raise CorruptFileError(f"header map entry at {pos} runs past {stop}")
        ordinal, length = _TWO_I32.unpack_from(buf, pos)
        if length < 0 or pos + 8 + length > stop:
            raise CorruptFileError(f"header map value at {pos} has an impossible length {length}")
        try:
            key: Any = HeaderMetadataType(ordinal) if typed else ordinal
        except ValueError as err:
            raise CorruptFileError(f"unknown header ordinal {ordinal} at {pos}") from err
        entries[key] = bytes(buf[pos + 8 : pos + 8 + length]).decode("utf-8", "surrogateescape")
        pos += 8 + length
    return entries, pos


def _parse_prelude(chunk: bytes | memoryview, size: int) -> tuple[int, dict[Any, str], int, int]:
    """Block type, header, content offset and length, relative to the block start."""
    version, type_ordinal = _TWO_I32.unpack_from(chunk, 14)
    if version == 0:
        raise UnsupportedVersionError(
            "log format version 0 (the legacy format without header and footer) is not supported"
        )
    if version != LOG_FORMAT_VERSION:
        raise CorruptFileError(f"unknown log format version {version}")
    if not 0 <= type_ordinal < len(LogBlockType) or type_ordinal == LogBlockType.CORRUPT_BLOCK:
        raise CorruptFileError(f"invalid block type ordinal {type_ordinal}")
    header, pos = _decode_map(chunk, 22, min(len(chunk), size), typed=True)
    if pos + 8 > len(chunk):
        raise CorruptFileError(f"content length at {pos} runs past the block")
    (content_length,) = _I64.unpack_from(chunk, pos)
    if not 0 <= content_length <= size - (pos + 8) - 12:
        raise CorruptFileError(f"content length {content_length} does not fit the block")
    return type_ordinal, header, pos + 8, content_length


def _parse_frame(src: _Source, pos: int, end: int) -> LocatedBlock:
    size, read_bytes = end - pos, _PRELUDE_READ_BYTES
    while True:  # read just enough for the header: a big block's content stays unread
        chunk = src.read(pos, min(size, read_bytes))
        try:
            type_ordinal, header, content_rel, content_length = _parse_prelude(chunk, size)
            break
        except CorruptFileError:
            if len(chunk) >= size:
                raise
            read_bytes *= 8
    footer_rel = content_rel + content_length
    footer_buf = src.read(pos + footer_rel, size - 8 - footer_rel)
    footer, footer_end = _decode_map(footer_buf, 0, len(footer_buf), typed=False)
    if footer_end != len(footer_buf):
        raise CorruptFileError(
            f"{len(footer_buf) - footer_end} unexplained bytes before the trailer"
        )
    location = BlockLocation(pos, size, pos + content_rel, content_length)
    return LocatedBlock(
        LogBlockType(type_ordinal), header, footer, LOG_FORMAT_VERSION, location, None, src
    )


def _block_at(src: _Source, pos: int, strict: bool) -> LocatedBlock | str:
    """The block starting at `pos`, or the reason the bytes there are corrupt."""
    limit = src.size
    head = bytes(src.read(pos, min(14, limit - pos)))
    if head[:6] != MAGIC:
        return (
            "EOF inside MAGIC"
            if len(head) < 6 and MAGIC.startswith(head)
            else "no MAGIC at block start"
        )
    if len(head) < 14:
        return "EOF inside the block size"
    (block_size,) = _I64.unpack_from(head, 6)
    end = pos + 14 + block_size
    if not MIN_BLOCK_SIZE <= block_size <= MAX_BLOCK_SIZE:
        return f"block size {block_size} is impossible"
    if end > limit:
        return f"block size {block_size} runs past EOF at {limit}"
    (trailer,) = _I64.unpack_from(src.read(end - 8, 8))
    if trailer - len(MAGIC) != block_size:
        return f"trailer {trailer} does not match block size {block_size}"
    if strict and end + len(MAGIC) <= limit and src.read(end, len(MAGIC)) != MAGIC:
        return "neither MAGIC nor EOF after the block"
    try:
        return _parse_frame(src, pos, end)
    except (CorruptFileError, struct.error) as err:
        return str(err)


def _corrupt(src: _Source, start: int, stop: int, reason: str) -> LocatedBlock:
    location = BlockLocation(start, stop - start, start, stop - start)
    return LocatedBlock(LogBlockType.CORRUPT_BLOCK, {}, {}, None, location, reason, src)


def _merge(first: LocatedBlock, second: LocatedBlock) -> LocatedBlock:
    size = second.end_offset - first.offset
    return replace(first, location=BlockLocation(first.offset, size, first.offset, size))


# ---- iteration -------------------------------------------------------------------------------


def _forward(src: _Source, limit: int, read_content: bool, strict: bool) -> Iterator[LocatedBlock]:
    """Blocks starting before `limit` (the file size, or where reverse reading gave up)."""
    pos, pending = 0, None
    while pos < limit:
        found = _block_at(src, pos, strict)
        if isinstance(found, str):
            following = src.find_magic(pos + 1, limit)
            stop = limit if following < 0 else following
            corrupt = _corrupt(src, pos, stop, found)
            pending = corrupt if pending is None else _merge(pending, corrupt)
            pos = stop
            continue
        if pending is not None:
            yield _loaded(pending, read_content)
            pending = None
        yield _loaded(found, read_content)
        pos = found.end_offset
    if pending is not None:
        yield _loaded(pending, read_content)


def _loaded(block: LocatedBlock, read_content: bool) -> LocatedBlock:
    if read_content:
        _ = block.content
    return block


def iter_blocks(
    source: LogSource, *, read_content: bool = False, strict: bool = False
) -> Iterator[LocatedBlock]:
    """Every block of a log file in file order, corrupt ranges included as CORRUPT_BLOCK entries.

    `read_content=False` (default) reads only headers; `block.content` is read on first access.
    `strict=True` applies Hudi 0.14's rule that a block must be followed by MAGIC or EOF.
    """
    src = _as_source(source)
    return _forward(src, src.size, read_content, strict)


def iter_blocks_reverse(
    source: LogSource, *, read_content: bool = False, strict: bool = False
) -> Iterator[LocatedBlock]:
    """Blocks from last to first, following each trailer back to its MAGIC.

    When a trailer does not lead to a valid block ending exactly there, the rest (the file up to
    that point) is read forward and yielded in reverse, as Hudi falls back to forward reading.
    """
    src = _as_source(source)
    end = src.size
    while end > 0:
        block = _block_ending_at(src, end, strict)
        if block is None:
            yield from reversed(list(_forward(src, end, read_content, strict)))
            return
        yield _loaded(block, read_content)
        end = block.offset


def _block_ending_at(src: _Source, end: int, strict: bool) -> LocatedBlock | None:
    if end < 14 + MIN_BLOCK_SIZE:
        return None
    (trailer,) = _I64.unpack_from(src.read(end - 8, 8))
    start = end - 8 - trailer
    if start < 0 or trailer < MIN_BLOCK_SIZE:
        return None
    found = _block_at(src, start, strict)
    if isinstance(found, str) or found.end_offset != end:
        return None
    return found


def read_blocks(
    source: LogSource, *, read_content: bool = False, strict: bool = False
) -> list[LocatedBlock]:
    return list(iter_blocks(source, read_content=read_content, strict=strict))


def read_log_file(path: str | os.PathLike[str], *, strict: bool = False) -> list[LocatedBlock]:
    """All blocks of the log file at `path`, read into memory (contents stay lazy slices)."""
    with open(path, "rb") as file:
        data = file.read()
    return read_blocks(data, strict=strict)


def read_single_block(data: bytes) -> LogBlock:
    """`data` must be exactly one valid block."""
    blocks = read_blocks(data)
    if len(blocks) != 1 or blocks[0].is_corrupt:
        reasons = [b.corrupt_reason for b in blocks if b.is_corrupt]
        raise CorruptFileError(
            f"expected exactly one valid log block, found {len(blocks)} ({reasons})"
        )
    return blocks[0].to_log_block()


def decode_block(data: bytes) -> LogBlock:
    """Exactly one complete, valid block (content copied). Raises `CorruptFileError` otherwise."""
    return read_single_block(data)
