"""Columnar Avro encoder: Arrow table -> schemaless Avro records (layout: `avro_columnar`).

Rows are encoded in batches of `BATCH_ROWS`. In a batch every field becomes one or two per-row
pieces: a `_Bytes` piece (byte columns or fixed-width blocks, each with the rows that use it: union
branch, varint bytes, fixed-width values, string length prefixes, and the payloads of a string
field whose values in the batch all have one length and no nulls) and, for other strings and
bytes, a `_Slices` piece (the payloads, back to back). Each run of adjacent `_Bytes` pieces is
written into one `n x w` matrix and compacted with its masks (a varint byte every row has needs
none); each compacted run and each payload piece is then one Arrow binary array of n values, and
Arrow's element-wise binary join concatenates them row by row. Hudi-shaped records (fixed-width
commit time, file id, keys) come out as 3 pieces per row instead of one or two per field.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.log.avro_columnar_spec import ColumnSpec, natural_type, require_specs

#: Rows encoded together: the per-row arrays of a batch stay in the CPU caches.
BATCH_ROWS = 65_536
_HEADER = struct.Struct(">ii")
_BLOCK_CONTENT_VERSION = 3
_TIME_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_STRING_TYPES = (pa.string(), pa.large_string(), pa.binary(), pa.large_binary())
_BYTE_BITS = np.array([i.bit_length() for i in range(256)], np.int64)


@dataclass
class _Bytes:
    """Short per-row byte strings: row i is `column[i]` of each column whose mask has row i."""

    columns: list[np.ndarray]  # (n,) uint8 each, or (n, w): w bytes sharing one mask
    masks: list[np.ndarray | None]  # (n,) bool each; None: every row uses the byte(s)
    lengths: np.ndarray  # (n,) int64

    @classmethod
    def of(cls, matrix: np.ndarray, masks: list[np.ndarray | None] | None = None) -> _Bytes:
        """Every row uses the columns of `matrix` its masks allow (all of them by default)."""
        n, width = matrix.shape
        if masks is None:
            return cls([matrix], [None], np.full(n, width, np.int64))
        lengths = sum((m for m in masks if m is not None), np.zeros(n, np.int64))
        lengths += sum(m is None for m in masks)
        return cls([matrix[:, j] for j in range(width)], masks, lengths)


@dataclass
class _Slices:
    """Per-row payloads: row i is `data[offsets[i]:offsets[i + 1]]`."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # (n + 1,) int64, offsets[0] == 0


_Piece = _Bytes | _Slices


def encode_table(table: pa.Table, schema_json: str) -> tuple[np.ndarray, np.ndarray]:
    """The Avro binary of every row: records back to back (uint8) and their n+1 int64 offsets."""
    specs = require_specs(schema_json)
    batches = [_encode_batch(batch, specs, False) for batch in _batches(table, specs)]
    if len(batches) == 1:
        return batches[0]
    data = np.concatenate([d for d, _ in batches])
    bases = np.cumsum([0] + [len(d) for d, _ in batches])
    offsets = [o[:-1] + base for (_, o), base in zip(batches, bases)]
    return data, np.concatenate([*offsets, bases[-1:]])


def encode_block_content(table: pa.Table, schema_json: str) -> bytes:
    """AVRO_DATA_BLOCK content: int32 3, int32 count, then per record int32 length + Avro."""
    specs = require_specs(schema_json)
    head = _HEADER.pack(_BLOCK_CONTENT_VERSION, table.num_rows)
    parts = (_encode_batch(b, specs, True)[0].data for b in _batches(table, specs))
    return b"".join((head, *parts))


def _batches(table: pa.Table, specs: tuple[ColumnSpec, ...]) -> list[list[pa.Array]]:
    """The columns of the Avro fields in slices of BATCH_ROWS rows (at least one slice)."""
    for spec in specs:
        if spec.name not in table.column_names:
            raise ValueError(f"the table has no column for Avro field {spec.name!r}")
    columns = [table.column(spec.name) for spec in specs]
    starts = range(0, max(table.num_rows, 1), BATCH_ROWS)
    return [[_single(c.slice(start, BATCH_ROWS)) for c in columns] for start in starts]


def _single(column: pa.ChunkedArray) -> pa.Array:
    if column.num_chunks == 1:
        return column.chunk(0)
    return column.combine_chunks() if column.num_chunks else pa.array([], column.type)


def _encode_batch(
    columns: list[pa.Array], specs: tuple[ColumnSpec, ...], length_prefix: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The records of one batch (each after its int32 length if `length_prefix`), and offsets."""
    n = len(columns[0]) if columns else 0
    pieces = [p for spec, array in zip(specs, columns) for p in _field_pieces(spec, array)]
    if length_prefix:
        lengths = sum((_row_lengths(p) for p in pieces), np.zeros(n, np.int64))
        if n and int(lengths.max()) > 2**31 - 1:
            raise ValueError("an Avro record is longer than 2 GiB")
        pieces.insert(0, _Bytes.of(lengths.astype(">i4").view(np.uint8).reshape(n, 4)))
    return _interleave(pieces, n)


# ---- one field ------------------------------------------------------------------------------


def _field_pieces(spec: ColumnSpec, array: pa.Array) -> list[_Piece]:
    """The union branch and value bytes of one field, then its payloads (strings, bytes)."""
    valid = _validity(array)
    if valid is not None and not spec.nullable:
        raise ValueError(
            f"Avro field {spec.name!r} is not nullable but has {array.null_count} nulls"
        )
    try:
        head, tail = _value_pieces(spec, array, valid)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise ValueError(f"Avro field {spec.name!r}: cannot encode {array.type}: {err}") from err
    if valid is not None:  # null rows: branch only
        masks = [valid if m is None else m & valid for m in head.masks]
        head = _Bytes(head.columns, masks, np.where(valid, head.lengths, 0))
    if spec.union:
        branch = np.full(len(array), 2 * spec.value_index, np.uint8)  # zigzag varint of 0 or 1
        if valid is not None:
            branch[~valid] = 2 * spec.null_index
        head = _Bytes([branch, *head.columns], [None, *head.masks], head.lengths + 1)
    return [head] if tail is None else [head, tail]


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
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * width)


def _value_pieces(
    spec: ColumnSpec, array: pa.Array, valid: np.ndarray | None
) -> tuple[_Bytes, _Slices | None]:
    if spec.logical == "decimal":
        return _decimal_piece(spec, array), None
    if spec.kind in ("string", "bytes"):
        return _string_pieces(spec, array, valid)
    if spec.kind == "fixed":
        return _Bytes.of(_fixed_matrix(array.cast(pa.binary(spec.size)), spec.size)), None
    if spec.kind == "boolean":
        return _Bytes.of(_fixed_values(array.cast(pa.uint8()), "u1").reshape(-1, 1)), None
    if spec.kind in ("float", "double"):
        values = _fixed_values(
            array.cast(natural_type(spec)), "<f4" if spec.kind == "float" else "<f8"
        )
        return _Bytes.of(values.view(np.uint8).reshape(len(values), values.itemsize)), None
    return _varint_piece(_integers(spec, array)), None


def _integers(spec: ColumnSpec, array: pa.Array) -> np.ndarray:
    """int64 values of an int/long/enum field: enum indices, days, epoch units, plain integers."""
    if spec.kind == "enum":
        indices = pc.index_in(array.cast(pa.string()), value_set=pa.array(spec.symbols))
        if indices.null_count != array.null_count:
            raise ValueError(f"Avro field {spec.name!r} has a value that is not an enum symbol")
        return _fixed_values(indices.fill_null(0), "<i4").astype(np.int64)
    target = natural_type(spec)
    if pa.types.is_timestamp(target) and pa.types.is_timestamp(array.type):
        return _rescale_time(array, target.unit)
    if pa.types.is_date32(target) and pa.types.is_date64(array.type):
        return _fixed_values(array, "<i8") // 86_400_000
    if not pa.types.is_integer(array.type):
        array = array.cast(target)
    if spec.kind == "int":
        return _fixed_values(array.cast(pa.int32()), "<i4").astype(np.int64)
    return _fixed_values(array.cast(pa.int64()), "<i8")


def _rescale_time(array: pa.Array, unit: str) -> np.ndarray:
    """Epoch values in `unit`, rounded down like fastavro (`timestamp-millis` of microseconds)."""
    values = _fixed_values(array, "<i8")
    have, want = _TIME_UNITS[array.type.unit], _TIME_UNITS[unit]
    return values // (have // want) if have > want else values * (want // have)


def _varint_piece(values: np.ndarray) -> _Bytes:
    """Zigzag varints of int64 values: 7 bits a byte, low group first, high bit = more follow."""
    rest = ((values << 1) ^ (values >> 63)).view(np.uint64)
    top = int(rest.max()) if len(values) else 0
    columns: list[np.ndarray] = []
    masks: list[np.ndarray | None] = []
    lengths = np.ones(len(values), np.int64)
    used = None  # the rows that reach byte j: all for the first byte
    for _ in range(max(1, (top.bit_length() + 6) // 7)):
        more = rest >= 0x80
        columns.append((rest & np.uint64(0x7F)).astype(np.uint8) | (more.view(np.uint8) << 7))
        masks.append(used)
        used = None if more.all() else more  # every row has a next byte: no mask to apply
        lengths += more
        rest = rest >> np.uint64(7)
    return _Bytes(columns, masks, lengths)


def _string_pieces(
    spec: ColumnSpec, array: pa.Array, valid: np.ndarray | None
) -> tuple[_Bytes, _Slices | None]:
    """The length varint and the payloads (UTF-8 or raw bytes) of a string/bytes field; payloads
    that all have one length and no nulls are fixed-width bytes (no slices piece)."""
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
    payload, head = payload[offsets[0] : offsets[-1]], _varint_piece(lengths)
    width = int(lengths[0]) if len(lengths) else 0
    if valid is None and width and (lengths == width).all():  # one length: fixed-width bytes
        block = payload.reshape(len(lengths), width)
        return _Bytes([*head.columns, block], [*head.masks, None], head.lengths + width), None
    return head, _Slices(payload, offsets - offsets[0])


def _fixed_matrix(array: pa.Array, size: int) -> np.ndarray:
    flat = np.frombuffer(array.buffers()[1], np.uint8, len(array) * size, array.offset * size)
    return flat.reshape(len(array), size)


# ---- decimals -------------------------------------------------------------------------------


def _decimal_piece(spec: ColumnSpec, array: pa.Array) -> _Bytes:
    """Big-endian two's complement of the unscaled values (fixed: sign-extended to the size)."""
    array = array.cast(pa.decimal128(spec.precision, spec.scale))
    big_endian = _fixed_matrix(array, 16)[:, ::-1]  # decimal128 is 16 bytes little-endian
    negative = big_endian[:, 0] >= 0x80
    if spec.kind == "fixed":
        return _Bytes.of(_sign_extend(big_endian, negative, spec))
    size = _decimal_sizes(big_endian, negative)
    if len(size) and int(size.max()) > 16:
        raise ValueError(f"Avro field {spec.name!r}: a decimal does not fit 16 bytes")
    masks: list[np.ndarray | None] = [None, *(size > 15 - j for j in range(16))]
    return _Bytes.of(np.hstack((_varint_piece(size).columns[0][:, None], big_endian)), masks)


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
    """The values as `spec.size` bytes; ValueError if one does not fit."""
    size = spec.size
    sign = np.where(negative, 0xFF, 0).astype(np.uint8)[:, None]
    if size >= 16:
        return np.hstack((np.repeat(sign, size - 16, axis=1), big_endian))
    dropped, kept = big_endian[:, : 16 - size], big_endian[:, 16 - size :]
    if len(kept) and ((dropped != sign).any() or ((kept[:, 0] >= 0x80) != negative).any()):
        raise ValueError(f"Avro field {spec.name!r}: a decimal does not fit fixed({size})")
    return kept


# ---- interleaving ---------------------------------------------------------------------------


def _row_lengths(piece: _Piece) -> np.ndarray:
    return piece.lengths if isinstance(piece, _Bytes) else np.diff(piece.offsets)


def _compact(run: list[_Bytes], n: int) -> _Slices:
    """A run of byte pieces as one slices piece: the used bytes of each row, in row order."""
    columns = [c for piece in run for c in piece.columns]
    masks = [m for piece in run for m in piece.masks]
    starts = np.cumsum([0] + [1 if c.ndim == 1 else c.shape[1] for c in columns])
    matrix = np.empty((n, int(starts[-1])), np.uint8)
    for column, start, stop in zip(columns, starts[:-1], starts[1:]):
        matrix[:, start:stop] = column.reshape(n, stop - start)
    if all(m is None for m in masks):
        data = matrix.reshape(-1)
    else:
        used = np.empty(matrix.shape, bool)
        for mask, start, stop in zip(masks, starts[:-1], starts[1:]):
            used[:, start:stop] = True if mask is None else mask.reshape(n, 1)
        data = matrix[used]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(sum((p.lengths for p in run), np.zeros(n, np.int64)), out=offsets[1:])
    return _Slices(data, offsets)


def _grouped(pieces: list[_Piece], n: int) -> list[_Slices]:
    """The pieces with every run of adjacent byte pieces compacted into one."""
    out: list[_Slices] = []
    run: list[_Bytes] = []
    for piece in [*pieces, None]:
        if isinstance(piece, _Bytes):
            run.append(piece)
            continue
        if run:
            out.append(_compact(run, n))
            run = []
        if piece is not None:
            out.append(piece)
    return out


def _interleave(pieces: list[_Piece], n: int) -> tuple[np.ndarray, np.ndarray]:
    """All rows' bytes in row order, and the n+1 record offsets."""
    slices = _grouped(pieces, n)
    if n == 0 or not slices:
        return np.zeros(0, np.uint8), np.zeros(n + 1, np.int64)
    if len(slices) == 1:
        return slices[0].data, slices[0].offsets
    arrays = [
        pa.Array.from_buffers(
            pa.large_binary(), n, [None, pa.py_buffer(s.offsets), pa.py_buffer(s.data)]
        )
        for s in slices
    ]
    # (the separator made here: `pa.scalar` at import time would import pandas in every worker)
    joined = pc.binary_join_element_wise(*arrays, pa.scalar(b"", pa.large_binary()))
    offsets = np.frombuffer(joined.buffers()[1], np.int64, n + 1, joined.offset * 8)
    data = np.frombuffer(joined.buffers()[2], np.uint8)
    return data[offsets[0] : offsets[-1]], offsets - offsets[0]
