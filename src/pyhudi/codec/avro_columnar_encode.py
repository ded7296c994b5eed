"""Columnar Avro encoder: Arrow table -> schemaless Avro records (layout: `avro_columnar`).

Every field becomes one or two per-row pieces: a `_Bytes` piece (an `n x w` byte matrix with a mask
of the bytes each row uses: union branch, varints, fixed-width values, string length prefixes) and,
for strings and bytes, a `_Slices` piece (the payloads, back to back). Adjacent `_Bytes` pieces are
merged and compacted with one boolean mask; then all pieces are laid out field after field in one
buffer, and an Arrow `take` with row-major indices copies them into record order.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.avro_columnar import ColumnSpec, natural_type, require_specs

_HEADER = struct.Struct(">ii")
_BLOCK_CONTENT_VERSION = 3
_TIME_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_STRING_TYPES = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())
_BYTE_BITS = np.array([i.bit_length() for i in range(256)], np.int64)


@dataclass
class _Bytes:
    """Per-row short byte strings: row i is `matrix[i][mask[i]]` (all `w` bytes if mask is None)."""

    matrix: np.ndarray  # (n, w) uint8
    lengths: np.ndarray  # (n,) int64
    mask: np.ndarray | None = None


@dataclass
class _Slices:
    """Per-row payloads: row i is `data[offsets[i]:offsets[i + 1]]`."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # (n + 1,) int64, offsets[0] == 0


_Piece = _Bytes | _Slices


def encode_table(table: pa.Table, schema_json: str) -> tuple[np.ndarray, np.ndarray]:
    """The Avro binary of every row: records back to back (uint8) and their n+1 int64 offsets."""
    pieces = _table_pieces(table, require_specs(schema_json))
    data, offsets, per_row = _interleave(pieces, table.num_rows)
    return data, offsets[::per_row]


def encode_block_content(table: pa.Table, schema_json: str) -> bytes:
    """AVRO_DATA_BLOCK content: int32 3, int32 count, then per record int32 length + Avro."""
    pieces = _table_pieces(table, require_specs(schema_json))
    n = table.num_rows
    lengths = sum((_row_lengths(p) for p in pieces), np.zeros(n, np.int64))
    if n and int(lengths.max()) > 2**31 - 1:
        raise ValueError("an Avro record is longer than 2 GiB")
    prefix = lengths.astype(">i4").view(np.uint8).reshape(n, 4)
    pieces.insert(0, _Bytes(prefix, np.full(n, 4, np.int64)))
    data, _, _ = _interleave(pieces, n)
    return b"".join((_HEADER.pack(_BLOCK_CONTENT_VERSION, n), memoryview(data)))


def _table_pieces(table: pa.Table, specs: tuple[ColumnSpec, ...]) -> list[_Piece]:
    pieces: list[_Piece] = []
    for spec in specs:
        if spec.name not in table.column_names:
            raise ValueError(f"the table has no column for Avro field {spec.name!r}")
        column = table.column(spec.name)
        array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        pieces.extend(_field_pieces(spec, array))
    return pieces


def _field_pieces(spec: ColumnSpec, array: pa.Array) -> list[_Piece]:
    valid = _validity(array)
    if valid is not None and not spec.nullable:
        raise ValueError(
            f"Avro field {spec.name!r} is not nullable but has {array.null_count} nulls"
        )
    try:
        head, tail = _value_pieces(spec, array, valid)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise ValueError(f"Avro field {spec.name!r}: cannot encode {array.type}: {err}") from err
    if valid is not None:
        mask = head.mask if head.mask is not None else np.ones(head.matrix.shape, bool)
        head = _Bytes(head.matrix, np.where(valid, head.lengths, 0), mask & valid[:, None])
    if spec.union:
        head = _merge([_branch(spec, valid, len(array)), head])
    return [head] if tail is None else [head, tail]


def _branch(spec: ColumnSpec, valid: np.ndarray | None, n: int) -> _Bytes:
    """The union branch index, a zigzag varint of 0 or 1: one byte `00` or `02`."""
    if valid is None:
        matrix = np.full((n, 1), 2 * spec.value_index, np.uint8)
    else:
        matrix = np.where(valid, 2 * spec.value_index, 2 * spec.null_index).astype(np.uint8)
    return _Bytes(matrix.reshape(n, 1), np.ones(n, np.int64))


def _validity(array: pa.Array) -> np.ndarray | None:
    if array.null_count == 0:
        return None
    if array.type == pa.null():
        return np.zeros(len(array), bool)
    bits = np.frombuffer(array.buffers()[0], np.uint8)
    return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + len(array)] == 1


def _fixed_values(array: pa.Array, dtype: str) -> np.ndarray:
    """The values buffer of a fixed-width array, as numpy (garbage under nulls)."""
    width = np.dtype(dtype).itemsize
    buffer = array.buffers()[1]
    start = array.offset * width
    return np.frombuffer(buffer, dtype, count=len(array), offset=start)


def _value_pieces(
    spec: ColumnSpec, array: pa.Array, valid: np.ndarray | None
) -> tuple[_Bytes, _Slices | None]:
    if spec.kind in ("string", "bytes") and spec.logical != "decimal":
        return _string_pieces(spec, array, valid)
    if spec.logical == "decimal":
        return _decimal_piece(spec, array), None
    if spec.kind == "fixed":
        matrix = _fixed_matrix(array.cast(pa.binary(spec.size)), spec.size)
        return _Bytes(matrix, np.full(len(array), spec.size, np.int64)), None
    if spec.kind == "boolean":
        bits = _fixed_values(array.cast(pa.uint8()), "u1").reshape(-1, 1)
        return _Bytes(bits, np.ones(len(array), np.int64)), None
    if spec.kind in ("float", "double"):
        dtype = "<f4" if spec.kind == "float" else "<f8"
        values = _fixed_values(array.cast(natural_type(spec)), dtype)
        width = values.dtype.itemsize
        return _Bytes(values.view(np.uint8).reshape(-1, width), np.full(len(array), width)), None
    return _varint_piece(_integers(spec, array)), None


def _integers(spec: ColumnSpec, array: pa.Array) -> np.ndarray:
    """int64 values of an int/long field: enum indices, days, epoch units, plain integers."""
    if spec.kind == "enum":
        indices = pc.index_in(array.cast(pa.string()), value_set=pa.array(spec.symbols))
        if indices.null_count != array.null_count:
            raise ValueError(f"Avro field {spec.name!r} has a value that is not an enum symbol")
        return _fixed_values(indices.fill_null(0), "<i4").astype(np.int64)
    target = natural_type(spec)
    if pa.types.is_timestamp(target) and pa.types.is_timestamp(array.type):
        return _rescale_time(array, target.unit)
    if pa.types.is_date(target) and pa.types.is_date64(array.type):
        return _fixed_values(array, "<i8") // 86_400_000
    if not pa.types.is_integer(array.type):
        array = array.cast(target)
    width = 4 if spec.kind == "int" else 8
    return _fixed_values(array.cast(pa.int32() if width == 4 else pa.int64()), f"<i{width}")


def _rescale_time(array: pa.Array, unit: str) -> np.ndarray:
    """Epoch values in `unit`, rounded down like fastavro (`timestamp-millis` of microseconds)."""
    values = _fixed_values(array, "<i8")
    have, want = _TIME_UNITS[array.type.unit], _TIME_UNITS[unit]
    if have > want:
        return values // (have // want)
    return values * (want // have)


def _varint_piece(values: np.ndarray) -> _Bytes:
    """Zigzag varints of int64 values: 7 bits a byte, low group first, high bit = more follow."""
    rest = ((values << 1) ^ (values >> 63)).view(np.uint64)
    n = len(values)
    top = int(rest.max()) if n else 0
    width = max(1, (top.bit_length() + 6) // 7)
    matrix = np.empty((n, width), np.uint8)
    lengths = np.ones(n, np.int64)
    for j in range(width):
        nxt = rest >> np.uint64(7)
        more = nxt != 0
        matrix[:, j] = (rest & np.uint64(0x7F)).astype(np.uint8) | (more.view(np.uint8) << 7)
        lengths += more
        rest = nxt
    mask = None if n == 0 or int(lengths.min()) == width else np.arange(width) < lengths[:, None]
    return _Bytes(matrix, lengths, mask)


def _string_pieces(
    spec: ColumnSpec, array: pa.Array, valid: np.ndarray | None
) -> tuple[_Bytes, _Slices]:
    """The length varint and the payloads (UTF-8 or raw bytes) of a string/bytes field."""
    if array.type not in _STRING_TYPES:
        array = array.cast(pa.large_binary() if spec.kind == "bytes" else pa.large_string())
    wide = array.type in (pa.large_string(), pa.large_binary())
    offsets = np.frombuffer(array.buffers()[1], np.int64 if wide else np.int32)
    offsets = offsets[array.offset : array.offset + len(array) + 1].astype(np.int64)
    lengths = np.diff(offsets)
    if valid is not None and lengths[~valid].any():  # null slots that hold bytes: empty them
        empty = pa.scalar("", pa.string()).cast(array.type)
        return _string_pieces(spec, pc.if_else(pa.array(valid), array, empty), None)
    data = array.buffers()[2]
    payload = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    payload = payload[offsets[0] : offsets[-1]]
    return _varint_piece(lengths), _Slices(payload, offsets - offsets[0])


def _fixed_matrix(array: pa.Array, size: int) -> np.ndarray:
    buffer = array.buffers()[1]
    flat = np.frombuffer(buffer, np.uint8, count=len(array) * size, offset=array.offset * size)
    return flat.reshape(len(array), size)


def _decimal_piece(spec: ColumnSpec, array: pa.Array) -> _Bytes:
    """Big-endian two's complement of the unscaled values (fixed: sign-extended to the size)."""
    array = array.cast(pa.decimal128(spec.precision, spec.scale))
    n = len(array)
    big_endian = _fixed_matrix(array, 16)[:, ::-1]  # decimal128 is 16 bytes little-endian
    negative = big_endian[:, 0] >= 0x80
    if spec.kind == "fixed":
        return _Bytes(_sign_extend(big_endian, negative, spec), np.full(n, spec.size, np.int64))
    size = _decimal_sizes(big_endian, negative)
    if n and int(size.max()) > 16:
        raise ValueError(f"Avro field {spec.name!r}: a decimal does not fit 16 bytes")
    prefix = _varint_piece(size)
    mask = np.arange(16) >= (16 - size)[:, None]
    matrix = np.hstack((prefix.matrix, big_endian))
    return _Bytes(matrix, size + 1, np.hstack((np.ones((n, 1), bool), mask)))


def _decimal_sizes(big_endian: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """fastavro's byte count `(abs(v).bit_length() + 8) // 8` of each 16-byte big-endian value.

    For negative v, `~v = abs(v) - 1`; abs(v) has one more bit than ~v exactly when ~v is
    `2^k - 1` (zero included): its first non-zero byte is `2^j - 1` and all later bytes are FF.
    """
    magnitude = np.where(negative[:, None], ~big_endian, big_endian)
    nonzero = magnitude != 0
    first = np.argmax(nonzero, axis=1)
    top = magnitude[np.arange(len(magnitude)), first].astype(np.int64)
    any_set = nonzero.any(axis=1)
    bits = np.where(any_set, (15 - first) * 8 + _BYTE_BITS[top], 0)
    tail_ones = ((magnitude == 0xFF) | (np.arange(16) <= first[:, None])).all(axis=1)
    power = negative & (~any_set | (tail_ones & ((top & (top + 1)) == 0)))
    return (bits + power + 8) // 8


def _sign_extend(big_endian: np.ndarray, negative: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    size, n = spec.size, len(big_endian)
    if size >= 16:
        fill = np.where(negative, 0xFF, 0).astype(np.uint8)
        return np.hstack((np.repeat(fill[:, None], size - 16, axis=1), big_endian))
    dropped = big_endian[:, : 16 - size]
    sign = np.where(negative, 0xFF, 0).astype(np.uint8)[:, None]
    kept_sign = big_endian[:, 16 - size] >= 0x80
    if n and ((dropped != sign).any() or (kept_sign != negative).any()):
        raise ValueError(f"Avro field {spec.name!r}: a decimal does not fit fixed({size})")
    return big_endian[:, 16 - size :]


def _row_lengths(piece: _Piece) -> np.ndarray:
    return piece.lengths if isinstance(piece, _Bytes) else np.diff(piece.offsets)


def _merge(group: list[_Bytes]) -> _Bytes:
    """Adjacent byte pieces as one: matrices side by side."""
    if len(group) == 1:
        return group[0]
    matrix = np.hstack([p.matrix for p in group])
    lengths = sum((p.lengths for p in group), np.zeros(len(matrix), np.int64))
    if all(p.mask is None for p in group):
        return _Bytes(matrix, lengths)
    masks = [p.mask if p.mask is not None else np.ones(p.matrix.shape, bool) for p in group]
    return _Bytes(matrix, lengths, np.hstack(masks))


def _compact(piece: _Piece) -> _Slices:
    if isinstance(piece, _Slices):
        return piece
    data = piece.matrix.reshape(-1) if piece.mask is None else piece.matrix[piece.mask]
    offsets = np.zeros(len(piece.lengths) + 1, np.int64)
    np.cumsum(piece.lengths, out=offsets[1:])
    return _Slices(np.ascontiguousarray(data), offsets)


def _grouped(pieces: list[_Piece]) -> list[_Slices]:
    """Pieces with every run of adjacent byte pieces merged, all as slices."""
    out: list[_Slices] = []
    run: list[_Bytes] = []
    for piece in [*pieces, None]:
        if isinstance(piece, _Bytes):
            run.append(piece)
            continue
        if run:
            out.append(_compact(_merge(run)))
            run = []
        if piece is not None:
            out.append(piece)
    return out


def _interleave(pieces: list[_Piece], n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """All rows' bytes in row order; offsets of every piece of every row; pieces per row."""
    slices = [s for s in _grouped(pieces)]
    if n == 0 or not slices:
        return np.zeros(0, np.uint8), np.zeros(n + 1, np.int64), 1
    if len(slices) == 1:
        return slices[0].data, slices[0].offsets, 1
    bases = np.cumsum([0] + [len(s.data) for s in slices])
    source_offsets = np.concatenate(
        [s.offsets[:-1] + b for s, b in zip(slices, bases)] + [bases[-1:]]
    )
    source = pa.Array.from_buffers(
        pa.large_binary(),
        len(source_offsets) - 1,
        [
            None,
            pa.py_buffer(source_offsets),
            pa.py_buffer(np.concatenate([s.data for s in slices])),
        ],
    )
    count = len(slices)
    order = (np.arange(n)[:, None] + np.arange(count)[None, :] * n).reshape(-1)
    taken = source.take(pa.array(order))
    out_offsets = np.frombuffer(taken.buffers()[1], np.int64, count=len(order) + 1)
    return np.frombuffer(taken.buffers()[2], np.uint8), out_offsets - out_offsets[0], count
