"""Columnar Avro decoder: AVRO_DATA_BLOCK content -> Arrow table (layout: `avro_columnar`).

The record offsets come from the length prefixes (one short Python loop: each prefix says where
the next one is). Then the fields are decoded in lockstep: `pos` holds one current position per
record, and each field is read for all records at once, advancing `pos`. Rows whose union branch
is null are skipped by working on the index subset of non-null rows. Strings and bytes are cut
out of the content with one Arrow `take`: the content is viewed as a binary array whose even
elements are the payloads and odd elements the bytes between them.
"""

from __future__ import annotations

import struct
from functools import lru_cache

import numpy as np
import pyarrow as pa

from pyhudi.codec.log.avro_columnar_spec import ColumnSpec, natural_type, require_specs
from pyhudi.codec.log.avro_content import avro_record_count
from pyhudi.codec.schema import avro_to_arrow
from pyhudi.exceptions import CorruptFileError

_I32 = struct.Struct(">i")
#: Records decoded together: the per-record arrays of a batch stay in the CPU caches.
BATCH_ROWS = 65536
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_WIDTH = {"float": "<f4", "double": "<f8"}
_NUMPY = {"int": np.int32, "long": np.int64, "float": np.float32, "double": np.float64}


def decode_block_content(
    content: bytes | memoryview, schema_json: str, arrow_schema: pa.Schema | None = None
) -> pa.Table:
    """The records of AVRO_DATA_BLOCK content as a table.

    Columns take the types of `arrow_schema` (default: `avro_to_arrow(schema_json)`), which
    must name Avro fields. A record whose fields do not end exactly where its length prefix
    says raises CorruptFileError.
    """
    specs = require_specs(schema_json)
    count = avro_record_count(content)
    buf = np.frombuffer(content, np.uint8)
    starts, ends = _record_bounds(content, count)
    schema = pa.schema([pa.field(s.name, natural_type(s), s.nullable) for s in specs])
    batches = [
        _decode_batch(specs, schema, buf, starts[i : i + BATCH_ROWS], ends[i : i + BATCH_ROWS], i)
        for i in range(0, count, BATCH_ROWS)
    ]
    table = pa.Table.from_batches(batches, schema=schema)
    return _conform(
        table, arrow_schema if arrow_schema is not None else _default_schema(schema_json)
    )


def decode_block_fields(
    content: bytes | memoryview, schema_json: str, names: list[str]
) -> pa.Table:
    """Only the fields `names` of AVRO_DATA_BLOCK content (natural Arrow types), in schema order.

    Fields after the last wanted one are neither read nor checked (a merge-on-read read needs only
    the record keys of a block to find the base rows it replaces); earlier ones are skipped over.
    """
    specs = require_specs(schema_json)
    wanted = [i for i, spec in enumerate(specs) if spec.name in names]
    missing = set(names) - {specs[i].name for i in wanted}
    if missing:
        raise ValueError(f"Avro fields {sorted(missing)} are not fields of the block schema")
    count = avro_record_count(content)
    buf = np.frombuffer(content, np.uint8)
    starts, ends = _record_bounds(content, count)
    pos = starts + 4
    columns: dict[str, pa.Array] = {}
    try:
        for i, spec in enumerate(specs[: wanted[-1] + 1] if wanted else ()):
            column = _decode_column(spec, buf, pos, ends)
            if i in wanted:
                columns[spec.name] = column
    except (IndexError, pa.ArrowInvalid) as err:
        raise CorruptFileError(f"cannot decode Avro data block records: {err}") from err
    return pa.table(columns) if columns else pa.table({})


@lru_cache(maxsize=128)
def _default_schema(schema_json: str) -> pa.Schema:
    return avro_to_arrow(schema_json)


def _decode_batch(
    specs: tuple[ColumnSpec, ...],
    schema: pa.Schema,
    buf: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    first: int,
) -> pa.RecordBatch:
    """Records `first`.. (their starts and ends given) decoded field by field in lockstep."""
    pos = starts + 4
    try:
        columns = [_decode_column(spec, buf, pos, ends) for spec in specs]
    except (IndexError, pa.ArrowInvalid) as err:
        raise CorruptFileError(f"cannot decode Avro data block records: {err}") from err
    bad = np.flatnonzero(pos != ends)
    if bad.size:
        i = int(bad[0])
        used, length = int(pos[i] - starts[i] - 4), int(ends[i] - starts[i] - 4)
        raise CorruptFileError(
            f"Avro record {first + i} decodes to {used} bytes, its prefix says {length}"
        )
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _record_bounds(content: bytes | memoryview, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Start (at the length prefix) and end of every record."""
    unpack, starts, pos = _I32.unpack_from, [0] * count, 8
    try:
        for i in range(count):
            starts[i] = pos
            pos += 4 + unpack(content, pos)[0]
    except struct.error as err:
        raise CorruptFileError(f"Avro data block record {i} has no length prefix") from err
    begin = np.array(starts, np.int64)
    end = np.append(begin[1:], pos)
    short = np.flatnonzero(end - begin < 4)
    if short.size:
        raise CorruptFileError(f"Avro record {int(short[0])} has a negative length")
    if pos > len(content):
        raise CorruptFileError(f"Avro records run {pos - len(content)} bytes past the block end")
    return begin, end


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            raise ValueError(f"Arrow field {field.name!r} is not a field of the Avro schema")
        column = table.column(field.name)
        columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


# ---- one field across all records ------------------------------------------------------------


def _decode_column(
    spec: ColumnSpec, buf: np.ndarray, pos: np.ndarray, ends: np.ndarray
) -> pa.Array:
    """The field `spec` of every record, read at `pos` (advanced past it)."""
    valid = _read_branch(spec, buf, pos) if spec.union else None
    rows = None if valid is None else np.flatnonzero(valid)
    p, e = (pos, ends) if rows is None else (pos[rows], ends[rows])
    values, after = _read_values(spec, buf, p)
    if len(after) and (after > e).any():
        raise CorruptFileError(f"Avro field {spec.name!r} runs past the end of its record")
    if rows is not None:
        values = _spread(values, rows, pos, spec)
        pos[rows] = after
    else:
        pos[:] = after
    return _build(spec, values, valid, buf)


def _read_branch(spec: ColumnSpec, buf: np.ndarray, pos: np.ndarray) -> np.ndarray | None:
    """The union branch of every record (pos advanced); None when no record is null."""
    if len(pos) and (buf[pos] == 2 * spec.value_index).all():  # the usual: one byte, no nulls
        pos += 1
        return None
    index, pos[:] = _read_long(buf, pos)
    is_value = index == spec.value_index
    if is_value.all():
        return None
    if not spec.nullable or not (is_value | (index == spec.null_index)).all():
        raise CorruptFileError(f"Avro field {spec.name!r} has an invalid union branch index")
    return is_value


def _spread(values: np.ndarray, rows: np.ndarray, pos: np.ndarray, spec: ColumnSpec) -> np.ndarray:
    """Values of the non-null rows placed into a full-length array (nulls: zeros)."""
    if spec.kind in ("string", "bytes") and spec.logical != "decimal":
        full = np.zeros((len(pos), 2), np.int64)
        full[:, 0] = pos  # empty payloads at the null rows' positions keep the offsets sorted
    else:
        full = np.zeros((len(pos), *values.shape[1:]), values.dtype)
    full[rows] = values
    return full


def _unaligned(buffer: np.ndarray, dtype: str) -> np.ndarray:
    """The `dtype` value starting at every byte of `buffer` (unaligned, overlapping)."""
    starts = max(len(buffer) - np.dtype(dtype).itemsize + 1, 0)
    return np.ndarray((starts,), dtype, buffer=buffer, strides=(1,))


def _load(buf: np.ndarray, pos: np.ndarray, dtype: str) -> np.ndarray:
    """The little-endian `dtype` value at every position (bytes past the end read as zero)."""
    tail_start = max(len(buf) - np.dtype(dtype).itemsize, 0)
    if len(pos) and pos[-1] <= tail_start:  # positions ascend: pos[-1] is the largest
        return _unaligned(buf, dtype)[pos]
    padded = np.concatenate((buf[tail_start:], np.zeros(np.dtype(dtype).itemsize, np.uint8)))
    values = np.zeros(len(pos), dtype)
    near = pos >= tail_start
    values[near] = _unaligned(padded, dtype)[pos[near] - tail_start]
    values[~near] = _unaligned(buf, dtype)[pos[~near]]
    return values


_HIGH_BITS = np.uint64(0x8080808080808080)
_LOW_BYTE_BITS = np.uint64(0x0101010101010101)
_BITWISE_COUNT = getattr(np, "bitwise_count", None)  # numpy 2.0+
_LOW_SEVEN = np.uint64(0x7F7F7F7F7F7F7F7F)
#: Gathering the 7-bit groups of 8 bytes: (mask of the low half, mask of the high half, shift).
_SQUEEZE = tuple(
    (np.uint64(low), np.uint64(high), np.uint64(shift))
    for low, high, shift in (
        (0x007F007F007F007F, 0x7F007F007F007F00, 1),
        (0x00003FFF00003FFF, 0x3FFF00003FFF0000, 2),
        (0x000000000FFFFFFF, 0x0FFFFFFF00000000, 4),
    )
)


def _read_varint(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw (still zigzagged) varint at every position, and its byte count."""
    first = buf[pos]
    value, size = first.astype(np.uint64), np.ones(len(pos), np.int64)
    more = np.flatnonzero(first >= 0x80)
    if more.size == len(pos):
        return _read_long_varints(buf, pos)
    if more.size:
        value[more], size[more] = _read_long_varints(buf, pos[more])
    return value, size


def _count_high_bits(masked: np.ndarray) -> np.ndarray:
    """How many byte-high bits are set in each word (all other bits clear)."""
    if _BITWISE_COUNT is not None:
        return _BITWISE_COUNT(masked).astype(np.int64)  # type: ignore[no-any-return]
    # numpy 1.x (pyspark 3.5's extras pin numpy<2) has no bitwise_count: the high bits moved to
    # the low bit of each byte, summed into the top byte by one multiplication (at most 8).
    ones = (masked >> np.uint64(7)) * _LOW_BYTE_BITS
    return (ones >> np.uint64(56)).astype(np.int64)


def _read_long_varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varints of any length: the 8 bytes at each position are loaded as one little-endian
    uint64; the first byte without its high bit ends the varint; the 7-bit groups are squeezed
    together with three shift steps."""
    word = _load(buf, pos, "<u8")
    stops = ~word & _HIGH_BITS
    last = stops & (~stops + np.uint64(1))  # the high bit of the varint's last byte (0: none)
    size = _count_high_bits((last - np.uint64(1)) & _HIGH_BITS) + 1
    value = word & (last | (last - np.uint64(1))) & _LOW_SEVEN
    for low, high, shift in _SQUEEZE:
        value = (value & low) | ((value & high) >> shift)
    long_rows = np.flatnonzero(size > 8)
    if long_rows.size:
        _finish_long_varints(buf, pos, value, size, long_rows)
    return value, size


def _finish_long_varints(
    buf: np.ndarray, pos: np.ndarray, value: np.ndarray, size: np.ndarray, rows: np.ndarray
) -> None:
    """Bytes 9 and 10 of the varints longer than 8 bytes (value and size updated in place)."""
    for index in (8, 9):
        byte = buf[pos[rows] + index]
        value[rows] |= (byte & 0x7F).astype(np.uint64) << np.uint64(7 * index)
        size[rows] = index + 1
        rows = rows[byte >= 0x80]
    if rows.size:
        raise CorruptFileError("an Avro varint is longer than 10 bytes")


def _read_long(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zigzag-decoded varints and the positions after them."""
    raw, size = _read_varint(buf, pos)
    value = (raw >> np.uint64(1)).view(np.int64) ^ -(raw & np.uint64(1)).view(np.int64)
    return value, pos + size


def _gather(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """`width` bytes at every position, as an (n, width) matrix."""
    rows = max(len(buf) - width + 1, 0)
    view = np.lib.stride_tricks.as_strided(buf, shape=(rows, width), strides=(1, 1))
    return view[pos]


def _read_values(spec: ColumnSpec, buf: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values at positions `p` and the positions after them."""
    kind = spec.kind
    if spec.logical == "decimal":
        return _read_decimal(spec, buf, p)
    if kind in ("string", "bytes"):
        length, start = _read_long(buf, p)
        if len(length) and (length < 0).any():
            raise CorruptFileError(f"Avro field {spec.name!r} has a negative length")
        return np.stack((start, length), axis=1), start + length
    if kind == "boolean":
        return buf[p] != 0, p + 1
    if kind in _WIDTH:
        return _load(buf, p, _WIDTH[kind]), p + np.dtype(_WIDTH[kind]).itemsize
    if kind == "fixed":
        return _gather(buf, p, spec.size), p + spec.size
    value, after = _read_long(buf, p)
    limit = (len(spec.symbols) - 1, 0) if kind == "enum" else (_INT32_MAX, _INT32_MIN)
    if kind != "long" and len(value) and ((value > limit[0]) | (value < limit[1])).any():
        raise CorruptFileError(f"Avro field {spec.name!r} has a {kind} value out of range")
    return value, after


def _read_decimal(
    spec: ColumnSpec, buf: np.ndarray, p: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """16-byte big-endian two's complement values of a bytes or fixed decimal."""
    if spec.kind == "fixed":
        size, start = np.full(len(p), spec.size, np.int64), p
    else:
        size, start = _read_long(buf, p)
        if len(size) and ((size < 0) | (size > 16)).any():
            raise CorruptFileError(f"decimal field {spec.name!r} has a length outside 0..16")
    width = max(16, spec.size)
    index = (start + size - width)[:, None] + np.arange(width)
    raw = buf[np.clip(index, 0, max(len(buf) - 1, 0))]
    pad = np.arange(width) < (width - size)[:, None]  # bytes before the value: sign extension
    negative = raw[np.arange(len(p)), np.minimum(width - size, width - 1)] >= 0x80
    negative &= size > 0
    sign = np.where(negative, 0xFF, 0).astype(np.uint8)[:, None]
    value = np.where(pad, sign, raw)
    if width > 16 and len(p):
        low_sign = value[:, width - 16] >= 0x80
        if (value[:, : width - 16] != sign).any() or (low_sign != negative).any():
            raise CorruptFileError(f"decimal field {spec.name!r} does not fit 128 bits")
    return value[:, width - 16 :], start + size


# ---- Arrow arrays ----------------------------------------------------------------------------


def _build(
    spec: ColumnSpec, values: np.ndarray, valid: np.ndarray | None, buf: np.ndarray
) -> pa.Array:
    n = len(values)
    validity = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    arrow_type = natural_type(spec)
    if spec.logical == "decimal":
        data = np.ascontiguousarray(values[:, ::-1])  # little-endian
    elif spec.kind in ("string", "bytes"):
        return _payloads(buf, values, validity, arrow_type)
    elif spec.kind == "boolean":
        data = np.packbits(values, bitorder="little")
    elif spec.kind == "enum":
        indices = pa.Array.from_buffers(
            pa.int32(), n, [validity, pa.py_buffer(values.astype(np.int32))]
        )
        return pa.DictionaryArray.from_arrays(indices, pa.array(spec.symbols, pa.string())).cast(
            arrow_type
        )
    elif spec.kind == "fixed":
        data = np.ascontiguousarray(values)
    else:  # int, long, float, double and their logical types
        data = values.astype(_NUMPY[spec.kind], copy=False)
    return pa.Array.from_buffers(arrow_type, n, [validity, pa.py_buffer(data)])


def _payloads(
    buf: np.ndarray, spans: np.ndarray, validity: pa.Buffer | None, arrow_type: pa.DataType
) -> pa.Array:
    """String/bytes values cut out of the content: spans are (start, length) per row."""
    n = len(spans)
    offsets = np.empty(2 * n + 1, np.int64)
    offsets[0 : 2 * n : 2] = spans[:, 0]
    offsets[1 : 2 * n : 2] = spans[:, 0] + spans[:, 1]
    offsets[2 * n] = offsets[2 * n - 1] if n else 0
    whole = pa.Array.from_buffers(
        pa.large_binary(), 2 * n, [None, pa.py_buffer(offsets), pa.py_buffer(buf)]
    )
    even = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(np.arange(0, 2 * n, 2))])
    taken = whole.take(even)
    out = pa.Array.from_buffers(pa.large_binary(), n, [validity, *taken.buffers()[1:]])
    return out.cast(arrow_type)  # to string: validates the UTF-8
