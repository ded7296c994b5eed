"""DELETE_BLOCK content (reference §5.6): `int32 version (3)`, `int32 length`, then an Avro
`HoodieDeleteRecordList` (record key, partition path and the wrapped ordering value per delete)."""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Any

import fastavro
import pyarrow as pa

from pyhudi.codec.log.block import BLOCK_CONTENT_VERSION
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError

_I32 = struct.Struct(">i")
_TWO_I32 = struct.Struct(">ii")

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
    #: Hudi 1.1+: several ordering fields, a list of wrapped values (one per field, in order).
    ARRAY = "ArrayWrapper"
    #: Only inside an `ArrayWrapper` (Hudi 1.1+'s element union ends with it).
    LOCAL_DATE = "LocalDateWrapper"

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


def ordering_wrapper_for(data_type: pa.DataType) -> OrderingWrapper | None:
    """The wrapper Hudi 0.15 writes an ordering value of a field of this Arrow type with: the Java
    class Avro reads the field as (`int` Integer, `long` Long, `string` String, `date` LocalDate,
    ...), which the log scanner requires of a delete's ordering value to compare it with a stored
    record's (`ReflectionUtils.isSameClass`). None: a type pyhudi keeps deletes of in natural order
    (timestamps, decimals, nested types)."""
    if pa.types.is_boolean(data_type):
        return OrderingWrapper.BOOLEAN
    if pa.types.is_int8(data_type) or pa.types.is_int16(data_type) or pa.types.is_int32(data_type):
        return OrderingWrapper.INT
    if pa.types.is_int64(data_type):
        return OrderingWrapper.LONG
    if pa.types.is_float32(data_type):
        return OrderingWrapper.FLOAT
    if pa.types.is_float64(data_type):
        return OrderingWrapper.DOUBLE
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return OrderingWrapper.STRING
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return OrderingWrapper.BYTES
    if pa.types.is_date32(data_type):
        return OrderingWrapper.DATE
    return None


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

    #: `ArrayWrapper` only: each element's wrapper (the value is the tuple of element values).
    element_wrappers: tuple[OrderingWrapper, ...] = ()

    def __post_init__(self) -> None:
        if self.ordering_wrapper is None and isinstance(self.ordering_value, list | tuple):
            pairs = [infer_ordering_wrapper(v) for v in self.ordering_value]
            object.__setattr__(self, "ordering_value", tuple(v for _, v in pairs))
            object.__setattr__(self, "element_wrappers", tuple(w for w, _ in pairs))
            wrapper = OrderingWrapper.ARRAY
        elif self.ordering_wrapper is None:
            wrapper, value = infer_ordering_wrapper(self.ordering_value)
            object.__setattr__(self, "ordering_value", value)
        else:
            wrapper = OrderingWrapper(self.ordering_wrapper)
        object.__setattr__(self, "ordering_wrapper", wrapper)

    @property
    def is_natural_order(self) -> bool:
        """`IntWrapper(0)`: the delete wins regardless of the stored record's ordering value."""
        return self.ordering_wrapper is OrderingWrapper.INT and self.ordering_value == 0


def _wrap_ordering_value(
    wrapper: OrderingWrapper, value: Any, elements: tuple[OrderingWrapper, ...] = ()
) -> Any:
    if wrapper is OrderingWrapper.NULL:
        return None
    if wrapper is OrderingWrapper.ARRAY:
        wrapped = [_wrap_ordering_value(w, v) for w, v in zip(elements, value, strict=True)]
        return (wrapper.avro_name, {"wrappedValues": wrapped})
    if wrapper in _INT_RANGES and not -_INT_RANGES[wrapper] <= value < _INT_RANGES[wrapper]:
        raise ValueError(f"ordering value {value} does not fit {wrapper.value}")
    if wrapper in (OrderingWrapper.DATE, OrderingWrapper.LOCAL_DATE) and isinstance(value, date):
        value = (value - _EPOCH_DAY).days
    elif wrapper is OrderingWrapper.TIMESTAMP_MICROS and isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        value = (aware - _EPOCH) // _MICROSECOND
    return (wrapper.avro_name, {"value": value})


def _unwrap_ordering_value(wrapped: Any) -> tuple[OrderingWrapper, Any]:
    if wrapped is None:
        return OrderingWrapper.NULL, None
    name, record = wrapped
    wrapper = _WRAPPER_BY_AVRO_NAME[name]
    if wrapper is OrderingWrapper.ARRAY:
        pairs = [_unwrap_ordering_value(item) for item in record["wrappedValues"] or ()]
        return wrapper, (tuple(v for _, v in pairs), tuple(w for w, _ in pairs))
    value = record["value"]
    try:
        if wrapper in (OrderingWrapper.DATE, OrderingWrapper.LOCAL_DATE):
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
                OrderingWrapper(r.ordering_wrapper), r.ordering_value, r.element_wrappers
            ),
        }
        for r in records
    ]
    out = io.BytesIO()
    fastavro.schemaless_writer(out, _delete_list_schema(), {"deleteRecordList": items})
    data = out.getvalue()
    return _TWO_I32.pack(BLOCK_CONTENT_VERSION, len(data)) + data


def _decoded_record(item: Any) -> DeleteRecord:
    wrapper, value = _unwrap_ordering_value(item["orderingVal"])
    key, partition = item["recordKey"], item["partitionPath"]
    if wrapper is OrderingWrapper.ARRAY:
        values, elements = value
        return DeleteRecord(key, partition, values, wrapper, elements)
    return DeleteRecord(key, partition, value, wrapper)


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
        return [_decoded_record(i) for i in decoded["deleteRecordList"]]
    except (EOFError, ValueError, IndexError, KeyError, TypeError, struct.error) as err:
        raise CorruptFileError(f"cannot decode delete block records: {err}") from err
