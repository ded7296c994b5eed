"""AVRO_DATA_BLOCK and CDC_DATA_BLOCK content (reference §5.5, §5.10): `int32 version (3)`,
`int32 count`, then per record `int32 length` + the record's schemaless Avro binary encoding."""

from __future__ import annotations

import io
import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import chain
from typing import IO, Any, cast

import fastavro

from pyhudi.codec.log.block import BLOCK_CONTENT_VERSION
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError

_I32 = struct.Struct(">i")
_TWO_I32 = struct.Struct(">ii")

# ---- Avro data blocks (and CDC blocks, same layout) -----------------------------------------


@lru_cache(maxsize=128)
def parsed_avro_schema(schema_json: str) -> Any:
    """A writer schema parsed once per distinct JSON text (blocks of one table repeat it)."""
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as err:
        raise CorruptFileError(f"log block SCHEMA is not a usable Avro schema: {err}") from err


class _PartSink:
    """A file object whose `write` is `list.append`: fastavro's compiled writer calls it once per record."""

    __slots__ = ("write",)

    def __init__(self, parts: list[bytes]) -> None:
        self.write = parts.append


@lru_cache(maxsize=1)
def _writer_writes_once() -> bool:
    """Does fastavro hand each record to `write` in one fresh buffer (its compiled writer does)?"""
    probe = fastavro.parse_schema(
        {"type": "record", "name": "p", "fields": [{"name": "a", "type": "string"}]}
    )
    parts: list[bytes] = []
    for value in ("x", "yz"):
        fastavro.schemaless_writer(cast(IO[bytes], _PartSink(parts)), probe, {"a": value})
    return [bytes(p) for p in parts] == [b"\x02x", b"\x04yz"]


def encode_avro_records(schema_json: str, records: Iterable[Mapping[str, Any]]) -> bytes:
    """AVRO_DATA_BLOCK content: version 3, count, then each record as length + schemaless Avro."""
    schema = parsed_avro_schema(schema_json)
    parts: list[bytes] = []
    write = fastavro.schemaless_writer
    if _writer_writes_once():
        sink = cast(IO[bytes], _PartSink(parts))
        for record in records:
            write(sink, schema, record)
    else:  # a pure-Python fastavro writes field by field: cut the records out of one buffer
        parts = _encode_records_one_by_one(schema, records)
    lengths = map(_I32.pack, map(len, parts))
    head = _TWO_I32.pack(BLOCK_CONTENT_VERSION, len(parts))
    return b"".join(chain((head,), chain.from_iterable(zip(lengths, parts))))


def _encode_records_one_by_one(schema: Any, records: Iterable[Mapping[str, Any]]) -> list[bytes]:
    parts = []
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, record)
        parts.append(buf.getvalue())
    return parts


def avro_record_count(content: bytes | memoryview, *, content_length: int | None = None) -> int:
    """The record count of an Avro data or CDC block from its first 8 content bytes.

    Pass `content_length` when `content` is only the head of the content.
    """
    total = len(content) if content_length is None else content_length
    if len(content) < 8:
        raise CorruptFileError(f"Avro data block content of {total} bytes has no record count")
    version, count = _TWO_I32.unpack_from(content, 0)
    if not 1 <= version <= BLOCK_CONTENT_VERSION:
        raise UnsupportedVersionError(f"Avro data block content version {version} is not supported")
    if count < 0 or 8 + 4 * count > total:
        raise CorruptFileError(f"Avro data block claims {count} records in {total} bytes")
    return int(count)


def decode_avro_records(
    content: bytes | memoryview, schema_json: str, *, reader_schema_json: str | None = None
) -> list[dict[str, Any]]:
    """Records of an AVRO_DATA_BLOCK (or CDC_DATA_BLOCK) written with `schema_json`.

    Content versions 1 to 3 share this layout. Like Java, each record is read at the offset its
    length prefix gives, and bytes a record leaves unread are skipped.
    """
    count = avro_record_count(content)
    writer = parsed_avro_schema(schema_json)
    reader = parsed_avro_schema(reader_schema_json) if reader_schema_json else None
    stream = io.BytesIO(content)
    seek, tell = stream.seek, stream.tell
    read: Any = fastavro.schemaless_reader
    out: list[dict[str, Any]] = []
    unpack_length, append, pos = _I32.unpack_from, out.append, 8
    try:
        for _ in range(count):
            (length,) = unpack_length(content, pos)
            seek(pos + 4)
            append(read(stream, writer, reader))
            pos += 4 + length
            if length < 0 or tell() > pos:
                raise CorruptFileError(f"Avro record {len(out) - 1} overruns its length {length}")
    except (EOFError, ValueError, IndexError, KeyError, TypeError, struct.error) as err:
        raise CorruptFileError(f"cannot decode Avro data block record {len(out)}: {err}") from err
    return out


def decode_legacy_avro_content(content: bytes) -> tuple[str, list[dict[str, Any]]]:
    """Log format version 0 data blocks: deflated schema, count, records. Returns schema and records."""
    try:
        (schema_length,) = _I32.unpack_from(content, 0)
        schema_json = zlib.decompress(content[4 : 4 + schema_length]).decode("utf-8")
        rest = content[4 + schema_length :]
        body = _TWO_I32.pack(BLOCK_CONTENT_VERSION, _I32.unpack_from(rest, 0)[0]) + rest[4:]
    except (struct.error, zlib.error, UnicodeDecodeError) as err:
        raise CorruptFileError(
            f"cannot decode a legacy (version 0) Avro data block: {err}"
        ) from err
    return schema_json, decode_avro_records(body, schema_json)
