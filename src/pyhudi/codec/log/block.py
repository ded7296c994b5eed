"""One Hudi log block (log format version 1, block content version 3): frame, header map, contents.

Block frame (`HoodieLogFormatWriter.appendBlocks`, reference §5.1); all integers big-endian:

| off | size    | field                                                                     |
|-----|---------|---------------------------------------------------------------------------|
| 0   | 6       | MAGIC `#HUDI#`                                                            |
| 6   | 8       | `blockSize`: long, bytes after this field up to and including the trailer |
| 14  | 4       | log format version: int, `1` (`0` is the legacy header-less format)       |
| 18  | 4       | block type: int, `LogBlockType` ordinal                                   |
| 22  | var     | header map                                                                |
| …   | 8       | `contentLength`: long                                                     |
| …   | n       | content                                                                   |
| …   | var     | footer map (always empty: `00 00 00 00`)                                  |
| …   | 8       | trailer: long = `blockSize + 6`, the block's size from MAGIC on           |

Header/footer map: `int32 count`, then per entry `int32 ordinal`, `int32 byteLength`, UTF-8 bytes.

Contents (§5.5 to 5.10):

| block              | content                                                                   |
|--------------------|---------------------------------------------------------------------------|
| AVRO_DATA, CDC_DATA| `int32 version (3)`, `int32 count`, then per record `int32 length` + schemaless Avro |
| DELETE             | `int32 version (3)`, `int32 length`, Avro `HoodieDeleteRecordList`         |
| COMMAND            | empty; header `COMMAND_BLOCK_TYPE = "0"` (rollback), `TARGET_INSTANT_TIME` |
| PARQUET_DATA       | a complete parquet file (gzip by default), or nothing for zero records    |
| HFILE_DATA         | an HBase HFile v3 (metadata table only)                                   |

Header order: Java keeps headers in a `HashMap` keyed by enum constants, whose order follows identity
hash codes and so differs between JVM runs (the fixtures hold both `INSTANT_TIME, SCHEMA` and
`SCHEMA, INSTANT_TIME`). Readers must not rely on it. `encode_block` writes the mapping in its
iteration order, so a decoded header re-encodes to the original bytes; the block builders in
`writer` use ascending ordinals.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyhudi.exceptions import CorruptFileError
from pyhudi.model.enums import CommandBlockType, HeaderMetadataType, LogBlockType
from pyhudi.model.instant import InstantTime

MAGIC = b"#HUDI#"
#: `HoodieLogFormat.CURRENT_VERSION`.
LOG_FORMAT_VERSION = 1
#: `HoodieLogBlock.version`: content version of Avro data, CDC and delete blocks.
BLOCK_CONTENT_VERSION = 3
#: Smallest `blockSize`: version, type, empty header, content length, empty footer, trailer.
MIN_BLOCK_SIZE = 4 + 4 + 4 + 8 + 4 + 8
#: Java readers cast `blockSize` and `contentLength` to int.
MAX_BLOCK_SIZE = 2**31 - 1
#: Header ordinals a table-version-6 (Hudi 0.14) reader accepts; it fails on any other.
V6_HEADER_ORDINAL_LIMIT = 7
DEFAULT_PARQUET_COMPRESSION = "gzip"  # `hoodie.parquet.compression.codec` default in 0.14

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_TWO_I32 = struct.Struct(">ii")


class HeaderAccess:
    """Typed views of the header entries that readers need, shared by every block class."""

    header: Mapping[HeaderMetadataType, str]

    def _instant(self, key: HeaderMetadataType) -> InstantTime | None:
        value = self.header.get(key)
        if value is None:
            return None
        if not InstantTime.is_valid(value):
            raise CorruptFileError(f"log block header {key.name} is not an instant time: {value!r}")
        return InstantTime(value)

    @property
    def instant_time(self) -> InstantTime | None:
        """The instant that wrote the block (for command blocks: the rollback instant)."""
        return self._instant(HeaderMetadataType.INSTANT_TIME)

    @property
    def target_instant_time(self) -> InstantTime | None:
        """Command blocks: the instant whose blocks are rolled back."""
        return self._instant(HeaderMetadataType.TARGET_INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        return self.header.get(HeaderMetadataType.SCHEMA)

    @property
    def command_type(self) -> CommandBlockType | None:
        value = self.header.get(HeaderMetadataType.COMMAND_BLOCK_TYPE)
        try:
            return None if value is None else CommandBlockType(int(value))
        except ValueError as err:
            raise CorruptFileError(f"unknown COMMAND_BLOCK_TYPE {value!r}") from err


@dataclass(frozen=True)
class LogBlock(HeaderAccess):
    """A log block as a value: what `encode_block` writes and `decode_block` returns.

    >>> block = LogBlock(LogBlockType.COMMAND_BLOCK, {HeaderMetadataType.INSTANT_TIME: "20250126040936578"})
    >>> decode_block(block.encode()) == block
    True
    """

    block_type: LogBlockType
    header: Mapping[HeaderMetadataType, str] = field(default_factory=dict)
    content: bytes = b""
    footer: Mapping[int, str] = field(default_factory=dict)
    format_version: int = LOG_FORMAT_VERSION

    def encode(self, *, table_version: int = 6) -> bytes:
        return encode_block(
            self.block_type,
            self.header,
            self.content,
            footer=self.footer,
            table_version=table_version,
        )


# ---- frame -----------------------------------------------------------------------------------


def encode_header_map(entries: Mapping[Any, str], *, ordinal_limit: int | None = None) -> bytes:
    """The header/footer map encoding, entries in the mapping's iteration order."""
    parts = [_I32.pack(len(entries))]
    for key, value in entries.items():
        ordinal = int(key)
        if ordinal < 0 or (ordinal_limit is not None and ordinal >= ordinal_limit):
            name = getattr(key, "name", str(ordinal))
            raise ValueError(
                f"header {name} (ordinal {ordinal}) cannot be written: Hudi 0.14 readers "
                f"(table version 6) accept header ordinals 0..{V6_HEADER_ORDINAL_LIMIT - 1} only"
            )
        data = value.encode("utf-8", "surrogateescape")
        parts.append(_TWO_I32.pack(ordinal, len(data)))
        parts.append(data)
    return b"".join(parts)


def encode_block(
    block_type: LogBlockType,
    header: Mapping[HeaderMetadataType, str],
    content: bytes,
    *,
    footer: Mapping[int, str] | None = None,
    table_version: int = 6,
) -> bytes:
    """The bytes of one block, MAGIC to trailer (§5.1). Header ordinals ≥ 7 need table version 8."""
    block_type = LogBlockType(block_type)
    if block_type is LogBlockType.CORRUPT_BLOCK:
        raise ValueError("CORRUPT_BLOCK is a reader artifact and is never written")
    limit = V6_HEADER_ORDINAL_LIMIT if table_version < 8 else None
    header_bytes = encode_header_map(header, ordinal_limit=limit)
    footer_bytes = encode_header_map(footer or {})
    block_size = 4 + 4 + len(header_bytes) + 8 + len(content) + len(footer_bytes) + 8
    if block_size > MAX_BLOCK_SIZE:
        raise ValueError(f"log block of {block_size} bytes exceeds the 2 GiB Java readers can read")
    return b"".join(
        (
            MAGIC,
            _I64.pack(block_size),
            _TWO_I32.pack(LOG_FORMAT_VERSION, block_type.value),
            header_bytes,
            _I64.pack(len(content)),
            content,
            footer_bytes,
            _I64.pack(block_size + len(MAGIC)),
        )
    )
