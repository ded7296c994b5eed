"""Records as JSON text, column by column in Arrow (the images of a CDC query).

Each column becomes the JSON text of its values (strings escaped and quoted, numbers as they
print, dates as days since 1970-01-01, timestamps as microseconds, decimals as quoted text, nulls as
`null`), and a row's text joins `"name": value` pieces. Columns Arrow cannot print alone (bytes,
nested values, strings holding control characters, non-finite floats) are printed value by value
by Python's `json`, so the text is the same either way.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_EPOCH_DAY = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_CONTROL = r"[\x00-\x1f]"


def json_value(value: Any) -> Any:
    """Values JSON has no type for, as Spark holds them: dates as days since the epoch,
    timestamps as microseconds, decimals as their exact text, bytes as base64."""
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        delta = moment - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, dt.date):
        return (value - _EPOCH_DAY).days
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.time):
        return value.isoformat()
    raise TypeError(f"no JSON form for {type(value).__name__}")


_SPACED = json.JSONEncoder(default=json_value, ensure_ascii=False).encode
_COMPACT = json.JSONEncoder(default=json_value, separators=(",", ":"), ensure_ascii=False).encode


def json_record(value: Any) -> str:
    """One value (a decoded record) as spaced JSON text, as `json_rows(spaced=True)` prints."""
    return _SPACED(value)


def json_rows(
    columns: pa.Table | pa.StructArray, *, spaced: bool, skip_nulls: bool = False
) -> pa.Array:
    """The JSON object text of each row (`{"a": 1, "b": "x"}` spaced, `{"a":1,"b":"x"}` not);
    a null struct row gives a null. `skip_nulls` leaves a row's null fields out (`{"a":1}` where
    `b` is null)."""
    if isinstance(columns, pa.StructArray):
        names = [columns.type.field(i).name for i in range(columns.type.num_fields)]
        arrays = [columns.field(i) for i in range(len(names))]
        validity = columns.is_valid() if columns.null_count else None
        length = len(columns)
    else:
        names = columns.column_names
        arrays = [c.combine_chunks() for c in columns.columns]
        validity = None
        length = columns.num_rows
    if length == 0:
        return pa.array([], pa.string())
    colon, comma = (": ", ", ") if spaced else (":", ",")
    # Each field as `,"name":value` (`""` for a null one with `skip_nulls`), joined, the first
    # comma cut off.
    fields = []
    for name, array in zip(names, arrays, strict=True):
        field = pc.binary_join_element_wise(
            comma + _COMPACT(name) + colon, _values(array, spaced), ""
        )
        fields.append(pc.if_else(pc.is_null(array), "", field) if skip_nulls else field)
    joined = pc.binary_join_element_wise(*fields, "") if fields else pa.array([""] * length)
    body = pc.utf8_slice_codeunits(joined, len(comma))
    text = pc.binary_join_element_wise("{", body, "}", "")
    if validity is not None:
        text = pc.if_else(validity, text, pa.scalar(None, pa.string()))
    return text


def _values(array: pa.Array, spaced: bool) -> pa.Array:
    """The JSON text of each value of one column (`null` for nulls)."""
    kind = array.type
    text: pa.Array | None = None
    if pa.types.is_null(kind):
        return pa.array(["null"] * len(array), pa.string())
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        array = array.cast(pa.string())
        if not pc.any(pc.match_substring_regex(array, _CONTROL)).as_py():
            escaped = pc.replace_substring(array, "\\", "\\\\")
            escaped = pc.replace_substring(escaped, '"', '\\"')
            text = pc.binary_join_element_wise('"', escaped, '"', "")
    elif pa.types.is_boolean(kind):
        text = pc.if_else(array, "true", "false")
    elif pa.types.is_integer(kind):
        text = array.cast(pa.string())
    elif pa.types.is_floating(kind):
        if pc.all(pc.is_finite(array)).as_py() is not False:
            text = _floats(array)
    elif pa.types.is_date32(kind):
        text = array.cast(pa.int32()).cast(pa.string())
    elif pa.types.is_timestamp(kind):
        micros = array.cast(pa.timestamp("us", tz=kind.tz))
        text = micros.view(pa.int64()).cast(pa.string())
    elif pa.types.is_decimal(kind):
        text = pc.binary_join_element_wise('"', array.cast(pa.string()), '"', "")
    if text is None:  # printed value by value
        encode = _SPACED if spaced else _COMPACT
        return pa.array([encode(v) for v in array.to_pylist()], pa.string())
    return pc.fill_null(text, "null")


def _floats(array: pa.Array) -> pa.Array:
    """Finite floats as the shortest text that reads back (`0.1`, `1e+20`; integral values print
    without a fraction, `1`, which JSON reads as the same number)."""
    return array.cast(pa.string())
