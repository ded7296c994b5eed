"""CDC_DATA_BLOCK records of the DATA_BEFORE_AFTER layout (`{op, ts_ms, before, after}`, images
nullable records of the table schema, §5.10) decoded column by column, as the flat-record codec of
`avro_columnar_decode` decodes data blocks: every record's field at once, positions advanced in
lockstep. The images decode as struct columns (null where the record has none).

Schemas the flat codec does not handle (nested or unsupported field types in the images) give
None: the caller decodes those records one by one.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from pyhudi.codec.log.avro_columnar_decode import _decode_column, _read_long, _record_bounds
from pyhudi.codec.log.avro_columnar_spec import ColumnSpec, column_specs
from pyhudi.codec.log.avro_content import avro_record_count
from pyhudi.exceptions import CorruptFileError

_CDC_FIELDS = ("op", "ts_ms", "before", "after")


def decode_cdc_block(content: bytes | memoryview, schema_json: str) -> pa.Table | None:
    """The records of a DATA_BEFORE_AFTER CDC block as `op`, `ts_ms` (strings), `before`,
    `after` (structs of the image fields), or None when the schema is not one this handles."""
    layout = _layout(schema_json)
    if layout is None:
        return None
    heads, image_specs = layout
    count = avro_record_count(content)
    buf = np.frombuffer(content, np.uint8)
    starts, ends = _record_bounds(content, count)
    pos = starts + 4
    try:
        op, ts = (_decode_column(spec, buf, pos, ends) for spec in heads)
        before = _image(image_specs, buf, pos, ends)
        after = _image(image_specs, buf, pos, ends)
    except (IndexError, pa.ArrowInvalid) as err:
        raise CorruptFileError(f"cannot decode CDC block records: {err}") from err
    if (pos != ends).any():
        raise CorruptFileError("CDC records do not end where their length prefixes say")
    return pa.table({"op": op, "ts_ms": ts, "before": before, "after": after})


def _image(
    specs: tuple[ColumnSpec, ...], buf: np.ndarray, pos: np.ndarray, ends: np.ndarray
) -> pa.StructArray:
    """One nullable image (`["null", record]`) of every record, `pos` advanced past it."""
    branch, pos[:] = _read_long(buf, pos)
    if not np.isin(branch, (0, 1)).all():
        raise CorruptFileError("a CDC image has an invalid union branch index")
    present = branch == 1
    rows = np.flatnonzero(present)
    sub_pos, sub_ends = pos[rows], ends[rows]
    fields = [_decode_column(spec, buf, sub_pos, sub_ends) for spec in specs]
    if len(sub_pos) and (sub_pos > sub_ends).any():
        raise CorruptFileError("a CDC image runs past the end of its record")
    pos[rows] = sub_pos
    names = [spec.name for spec in specs]
    values = pa.StructArray.from_arrays(fields, names=names) if names else None
    full = _spread_rows(values, rows, len(pos), specs)
    mask = pa.array(~present)
    return pa.StructArray.from_arrays(
        [full.field(i) for i in range(len(names))], names=names, mask=mask
    )


def _spread_rows(
    values: pa.StructArray | None, rows: np.ndarray, length: int, specs: tuple[ColumnSpec, ...]
) -> pa.StructArray:
    """The present rows' image values placed at their rows (nulls elsewhere)."""
    if values is None:
        raise CorruptFileError("a CDC image record has no fields")
    if len(rows) == length:
        return values
    slots = np.full(length, -1, np.int64)
    slots[rows] = np.arange(len(rows))
    take = pa.array(slots, pa.int64(), mask=slots < 0)
    return values.take(take)


def _layout(schema_json: str) -> tuple[tuple[ColumnSpec, ...], tuple[ColumnSpec, ...]] | None:
    try:
        doc = json.loads(schema_json)
    except (TypeError, ValueError):
        return None
    fields = doc.get("fields") if isinstance(doc, dict) else None
    if not fields or tuple(f.get("name") for f in fields) != _CDC_FIELDS:
        return None
    heads = column_specs(json.dumps({"type": "record", "name": "h", "fields": fields[:2]}))
    image = _record_of(fields[2].get("type"), doc.get("namespace"))
    if heads is None or image is None or not _is_image_of(fields[3].get("type"), image):
        return None
    specs = column_specs(json.dumps(image))
    if specs is None or not all(spec.kind == "string" for spec in heads):
        return None
    return heads, specs


def _record_of(avro_type: Any, namespace: str | None) -> dict[str, Any] | None:
    """The record schema of a `["null", {record}]` union (namespace made explicit)."""
    if not isinstance(avro_type, list) or len(avro_type) != 2 or avro_type[0] != "null":
        return None
    record = avro_type[1]
    if not isinstance(record, dict) or record.get("type") != "record":
        return None
    if namespace and "namespace" not in record and "." not in str(record.get("name")):
        record = {**record, "namespace": namespace}
    return record


def _is_image_of(avro_type: Any, record: dict[str, Any]) -> bool:
    """`["null", "<record name>"]`: the after image names the before image's record."""
    if not isinstance(avro_type, list) or len(avro_type) != 2 or avro_type[0] != "null":
        return False
    named = avro_type[1]
    full = f"{record.get('namespace')}.{record.get('name')}"
    return named in (record.get("name"), full) or named == record


__all__ = ["decode_cdc_block"]
