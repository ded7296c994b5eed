"""A minimal protobuf (proto2) wire-format codec: varints and length-delimited fields only.

Enough for HBase's `FileTrailerProto` and `InfoProto` (HFile trailer and FileInfo block, see
`pyhudi.codec.hfile`). No `protobuf` package is needed.

| wire type | name             | encoding                                              |
|-----------|------------------|-------------------------------------------------------|
| 0         | VARINT           | base-128 little-endian groups, high bit = "more"      |
| 1         | I64              | 8 bytes little-endian (skipped on decode)             |
| 2         | LEN              | varint length, then that many bytes                   |
| 5         | I32              | 4 bytes little-endian (skipped on decode)             |

A field starts with the varint tag `field_number << 3 | wire_type`. Java's `uint64` fields are
written from signed longs, so a negative value (e.g. HBase's `-1` "unset" offsets) becomes the
ten-byte varint of its two's complement; `encode_varint` accepts such negatives the same way.
A message written with `writeDelimitedTo` is a varint byte length followed by the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pyhudi.exceptions import CorruptFileError

WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5
_U64 = (1 << 64) - 1

FieldValue = int | bytes


def encode_varint(value: int) -> bytes:
    """Base-128 varint; negative values are encoded as unsigned 64-bit two's complement."""
    if value < 0:
        value &= _U64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def decode_varint(data: bytes | memoryview, pos: int = 0) -> tuple[int, int]:
    """Decode one varint at `pos`; returns (value, position after it)."""
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise CorruptFileError("truncated protobuf varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise CorruptFileError("protobuf varint longer than 10 bytes")


def to_signed64(value: int) -> int:
    """Reinterpret an unsigned 64-bit varint value as a Java long."""
    return value - (1 << 64) if value >= 1 << 63 else value


def encode_message(fields: Iterable[tuple[int, FieldValue | str]]) -> bytes:
    """Serialize (field number, value) pairs in the given order; ints are varints, the rest LEN."""
    out = bytearray()
    for number, value in fields:
        if isinstance(value, bool | int):
            out += encode_varint(number << 3 | WIRE_VARINT)
            out += encode_varint(int(value))
        else:
            raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            out += encode_varint(number << 3 | WIRE_LEN)
            out += encode_varint(len(raw))
            out += raw
    return bytes(out)


def iter_fields(message: bytes | memoryview) -> Iterator[tuple[int, FieldValue]]:
    """Yield (field number, value) for VARINT and LEN fields; fixed-width fields are skipped."""
    pos = 0
    end = len(message)
    while pos < end:
        tag, pos = decode_varint(message, pos)
        number, wire = tag >> 3, tag & 7
        if wire == WIRE_VARINT:
            value, pos = decode_varint(message, pos)
            yield number, value
        elif wire == WIRE_LEN:
            length, pos = decode_varint(message, pos)
            if pos + length > end:
                raise CorruptFileError("protobuf length-delimited field runs past the message")
            yield number, bytes(message[pos : pos + length])
            pos += length
        elif wire in (WIRE_I64, WIRE_I32):
            pos += 8 if wire == WIRE_I64 else 4
        else:
            raise CorruptFileError(f"unsupported protobuf wire type {wire} (field {number})")
    if pos != end:
        raise CorruptFileError("protobuf message ends inside a field")


def encode_delimited(message: bytes) -> bytes:
    """Java `writeDelimitedTo`: varint length prefix + message."""
    return encode_varint(len(message)) + message


def decode_delimited(data: bytes | memoryview, pos: int = 0) -> tuple[bytes, int]:
    """Java `parseDelimitedFrom`: returns (message bytes, position after it)."""
    length, pos = decode_varint(data, pos)
    if pos + length > len(data):
        raise CorruptFileError("delimited protobuf message runs past the buffer")
    return bytes(data[pos : pos + length]), pos + length
