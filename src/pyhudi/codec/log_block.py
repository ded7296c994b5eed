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
`log_writer` use ascending ordinals.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum
from functools import lru_cache
from importlib import resources
from itertools import chain
from typing import IO, Any, cast

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError, UnsupportedVersionError
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


def decode_block(data: bytes) -> LogBlock:
    """Exactly one complete, valid block (content copied). Raises `CorruptFileError` otherwise."""
    from pyhudi.codec.log_reader import read_single_block  # the reader imports this module

    return read_single_block(data)


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


# ---- delete blocks -------------------------------------------------------------------------


class OrderingWrapper(str, Enum):
    """Branches of the `orderingVal` union of `HoodieDeleteRecord` (0.14), in union order (§5.6)."""

    NULL = "null"
    BOOLEAN = "BooleanWrapper"
    INT = "IntWrapper"
    LONG = "LongWrapper"
    FLOAT = "FloatWrapper"
    DOUBLE = "DoubleWrapper"
    BYTES = "BytesWrapper"
    STRING = "StringWrapper"
    DATE = "DateWrapper"
    DECIMAL = "DecimalWrapper"
    TIME_MICROS = "TimeMicrosWrapper"
    TIMESTAMP_MICROS = "TimestampMicrosWrapper"

    @property
    def avro_name(self) -> str:
        return f"org.apache.hudi.avro.model.{self.value}"


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_EPOCH_DAY = date(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
_INT_RANGES = {OrderingWrapper.INT: 2**31, OrderingWrapper.LONG: 2**63}
_WRAPPER_BY_AVRO_NAME = {w.avro_name: w for w in OrderingWrapper if w is not OrderingWrapper.NULL}
# Checked in order: datetime before date (a datetime is a date).
_WRAPPER_BY_TYPE: tuple[tuple[type, OrderingWrapper], ...] = (
    (float, OrderingWrapper.DOUBLE),
    (str, OrderingWrapper.STRING),
    (datetime, OrderingWrapper.TIMESTAMP_MICROS),
    (date, OrderingWrapper.DATE),
    (time, OrderingWrapper.TIME_MICROS),
    (Decimal, OrderingWrapper.DECIMAL),
)


def infer_ordering_wrapper(value: object) -> tuple[OrderingWrapper, object]:
    """Java's `wrapValueIntoAvro` for Python values; None becomes `IntWrapper(0)`.

    Integer 0 is "natural order": such a delete always applies (§5.13). Hudi's reference
    recommends it for writers without ordering values, and hudi-rs cannot read the null branch.
    """
    if value is None:
        return OrderingWrapper.INT, 0
    if isinstance(value, bool):
        return OrderingWrapper.BOOLEAN, value
    if isinstance(value, int):
        return (OrderingWrapper.INT if -(2**31) <= value < 2**31 else OrderingWrapper.LONG), value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return OrderingWrapper.BYTES, bytes(value)
    for kind, wrapper in _WRAPPER_BY_TYPE:
        if isinstance(value, kind):
            return wrapper, value
    raise TypeError(f"no Hudi ordering-value wrapper for {type(value).__name__} {value!r}")


@dataclass(frozen=True)
class DeleteRecord:
    """One key of a delete block. `ordering_wrapper` is inferred from the value when not given.

    Decoded records keep the wrapper they were written with, so they re-encode to the same bytes.
    Naive datetimes are taken as UTC; decoded timestamps are UTC-aware.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: object | None = None
    ordering_wrapper: OrderingWrapper | None = None

    def __post_init__(self) -> None:
        if self.ordering_wrapper is None:
            wrapper, value = infer_ordering_wrapper(self.ordering_value)
            object.__setattr__(self, "ordering_value", value)
        else:
            wrapper = OrderingWrapper(self.ordering_wrapper)
        object.__setattr__(self, "ordering_wrapper", wrapper)

    @property
    def is_natural_order(self) -> bool:
        """`IntWrapper(0)`: the delete wins regardless of the stored record's ordering value."""
        return self.ordering_wrapper is OrderingWrapper.INT and self.ordering_value == 0


def _wrap_ordering_value(wrapper: OrderingWrapper, value: Any) -> Any:
    if wrapper is OrderingWrapper.NULL:
        return None
    if wrapper in _INT_RANGES and not -_INT_RANGES[wrapper] <= value < _INT_RANGES[wrapper]:
        raise ValueError(f"ordering value {value} does not fit {wrapper.value}")
    if wrapper is OrderingWrapper.DATE and isinstance(value, date):
        value = (value - _EPOCH_DAY).days
    elif wrapper is OrderingWrapper.TIMESTAMP_MICROS and isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        value = (aware - _EPOCH) // _MICROSECOND
    return (wrapper.avro_name, {"value": value})


def _unwrap_ordering_value(wrapped: Any) -> tuple[OrderingWrapper, Any]:
    if wrapped is None:
        return OrderingWrapper.NULL, None
    name, record = wrapped
    wrapper, value = _WRAPPER_BY_AVRO_NAME[name], record["value"]
    try:
        if wrapper is OrderingWrapper.DATE:
            value = _EPOCH_DAY + timedelta(days=value)
        elif wrapper is OrderingWrapper.TIMESTAMP_MICROS:
            value = _EPOCH + timedelta(microseconds=value)
    except OverflowError:
        pass  # outside Python's date range: keep the raw days / microseconds
    return wrapper, value


@lru_cache(maxsize=1)
def _delete_list_schema() -> Any:
    text = resources.files("pyhudi.codec").joinpath("avsc/HoodieDeleteRecordList.resolved.avsc")
    return fastavro.parse_schema(json.loads(text.read_text(encoding="utf-8")))


def encode_delete_records(records: Iterable[DeleteRecord]) -> bytes:
    """DELETE_BLOCK content, version 3: length-prefixed Avro `HoodieDeleteRecordList`."""
    items = [
        {
            "recordKey": r.record_key,
            "partitionPath": r.partition_path,
            "orderingVal": _wrap_ordering_value(
                OrderingWrapper(r.ordering_wrapper), r.ordering_value
            ),
        }
        for r in records
    ]
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _delete_list_schema(), {"deleteRecordList": items})
    data = out.getvalue()
    return _TWO_I32.pack(BLOCK_CONTENT_VERSION, len(data)) + data


def decode_delete_records(content: bytes | memoryview) -> list[DeleteRecord]:
    if len(content) < 8:
        raise CorruptFileError(f"delete block content of {len(content)} bytes has no header")
    version, length = _TWO_I32.unpack_from(content, 0)
    if version in (1, 2):
        raise UnsupportedVersionError(
            f"delete block version {version} holds Java-serialized keys (pre-0.12 writers); not readable"
        )
    if version != BLOCK_CONTENT_VERSION:
        raise UnsupportedVersionError(f"delete block version {version} is not supported")
    if length < 0 or 8 + length > len(content):
        raise CorruptFileError(
            f"delete block data length {length} exceeds its {len(content)} bytes"
        )
    try:
        stream = io.BytesIO(content[8 : 8 + length])
        decoded: Any = fastavro.schemaless_reader(
            stream, _delete_list_schema(), None, return_record_name=True
        )
        items = decoded["deleteRecordList"]
        return [
            DeleteRecord(
                i["recordKey"], i["partitionPath"], *_unwrap_ordering_value(i["orderingVal"])[::-1]
            )
            for i in items
        ]
    except (EOFError, ValueError, IndexError, KeyError, TypeError, struct.error) as err:
        raise CorruptFileError(f"cannot decode delete block records: {err}") from err


# ---- parquet data blocks -------------------------------------------------------------------


def encode_parquet_records(
    table: pa.Table,
    *,
    compression: str = DEFAULT_PARQUET_COMPRESSION,
    key_value_metadata: Mapping[str, str] | None = None,
) -> bytes:
    """PARQUET_DATA_BLOCK content: one whole parquet file; no bytes at all for zero records."""
    if table.num_rows == 0:
        return b""  # `HoodieParquetDataBlock.serializeRecords` writes nothing for no records
    if key_value_metadata:
        merged = {
            **(table.schema.metadata or {}),
            **{k.encode(): v.encode() for k, v in key_value_metadata.items()},
        }
        table = table.replace_schema_metadata(merged)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return bytes(sink.getvalue().to_pybytes())


def decode_parquet_block(
    content: bytes | memoryview,
    *,
    schema: pa.Schema | None = None,
    columns: list[str] | None = None,
) -> pa.Table:
    """The records of a PARQUET_DATA_BLOCK; empty content gives an empty table (of `schema` if given)."""
    if len(content) == 0:
        return schema.empty_table() if schema is not None else pa.table({})
    try:
        return pq.read_table(pa.BufferReader(pa.py_buffer(content)), columns=columns, schema=schema)
    except (pa.ArrowException, OSError) as err:
        raise CorruptFileError(
            f"cannot read the parquet file of a parquet data block: {err}"
        ) from err


def parquet_record_count(content: bytes | memoryview) -> int:
    if len(content) == 0:
        return 0
    try:
        return int(pq.ParquetFile(pa.BufferReader(pa.py_buffer(content))).metadata.num_rows)
    except (pa.ArrowException, OSError) as err:
        raise CorruptFileError(
            f"cannot read the parquet footer of a parquet data block: {err}"
        ) from err


# ---- HFILE and CDC blocks --------------------------------------------------------------------


#: CDC_DATA_BLOCK content has the Avro data block layout (§5.10).
decode_cdc_records = decode_avro_records


def decode_hfile_block(
    content: bytes | memoryview, schema_json: str | None = None, *, key_field: str = "key"
) -> list[dict[str, Any]]:
    """Records of an HFILE_DATA_BLOCK (metadata table): HFile cells in key order, Avro values.

    Hudi blanks the key field inside each value to save space and keeps the key in the cell's
    row, so the key is restored from the row. The writer schema is the SCHEMA header, else the
    HFile's FileInfo `schema` entry.
    """
    try:
        from pyhudi.codec.hfile import HFileReader  # optional: the HFile codec lives apart
    except ImportError as err:
        raise UnsupportedOperationError("HFILE_DATA_BLOCK needs pyhudi.codec.hfile") from err
    try:
        reader = HFileReader(bytes(content))
        schema = parsed_avro_schema(
            schema_json or reader.file_info.entries[b"schema"].decode("utf-8")
        )
        records: list[dict[str, Any]] = []
        for row, value in reader.items():
            record: Any = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
            if key_field in record and not record[key_field]:
                record[key_field] = row.decode("utf-8", "surrogateescape")
            records.append(record)
    except (EOFError, ValueError, IndexError, KeyError, TypeError, struct.error) as err:
        raise CorruptFileError(f"cannot decode HFILE data block: {err}") from err
    return records
