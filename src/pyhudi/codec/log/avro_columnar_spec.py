"""Which Avro record schemas the columnar codec handles, as one `ColumnSpec` per field.

The byte layouts and the codec itself are documented in `pyhudi.codec.log.avro_columnar`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow as pa

_PRIMITIVES = frozenset(("boolean", "int", "long", "float", "double", "string", "bytes"))
#: The logical types handled, with the one base type each applies to.
_LOGICAL_BASE = {
    "date": ("int",),
    "time-millis": ("int",),
    "time-micros": ("long",),
    "timestamp-millis": ("long",),
    "timestamp-micros": ("long",),
    "local-timestamp-millis": ("long",),
    "local-timestamp-micros": ("long",),
    "decimal": ("bytes", "fixed"),
    "uuid": ("string",),
}
_MAX_DECIMAL128_PRECISION = 38


@dataclass(frozen=True)
class ColumnSpec:
    """One top-level field of a flat record schema, as the codec needs it."""

    name: str
    kind: str  # boolean, int, long, float, double, string, bytes, fixed or enum
    logical: str | None = None
    union: bool = False  # written with a union branch index
    value_index: int = 0  # the branch index of T
    nullable: bool = False
    size: int = 0  # fixed
    precision: int = 0  # decimal
    scale: int = 0
    symbols: tuple[str, ...] = ()  # enum

    @property
    def null_index(self) -> int:
        return 1 - self.value_index


def supports(schema_json: str) -> bool:
    """Can the columnar codec handle records of this Avro schema (else use fastavro)?"""
    return column_specs(schema_json) is not None


@lru_cache(maxsize=128)
def column_specs(schema_json: str) -> tuple[ColumnSpec, ...] | None:
    """The fields of a flat record schema, or None when some field is not supported."""
    try:
        doc = json.loads(schema_json)
    except (TypeError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("type") != "record":
        return None
    named: dict[str, dict[str, Any]] = {}
    namespace = _namespace(doc, "")
    specs = []
    for field in doc.get("fields", ()):
        spec = _field_spec(field, named, namespace)
        if spec is None:
            return None
        specs.append(spec)
    return tuple(specs)


def _namespace(doc: dict[str, Any], enclosing: str) -> str:
    name = str(doc.get("name", ""))
    if "." in name:
        return name.rsplit(".", 1)[0]
    return str(doc.get("namespace", enclosing))


def _field_spec(field: Any, named: dict[str, dict[str, Any]], ns: str) -> ColumnSpec | None:
    if not isinstance(field, dict) or not isinstance(field.get("name"), str):
        return None
    avro_type, union, value_index, nullable = field.get("type"), False, 0, False
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        if len(branches) != 1 or len(avro_type) > 2:
            return None
        union, nullable = True, len(avro_type) == 2
        value_index = avro_type.index(branches[0])
        avro_type = branches[0]
    base = _base_spec(avro_type, named, ns)
    if base is None:
        return None
    extra: dict[str, Any] = {"union": union, "value_index": value_index, "nullable": nullable}
    return ColumnSpec(name=field["name"], **base, **extra)


def _base_spec(avro_type: Any, named: dict[str, dict[str, Any]], ns: str) -> dict[str, Any] | None:
    if isinstance(avro_type, str):
        if avro_type in _PRIMITIVES:
            return {"kind": avro_type}
        avro_type = named.get(avro_type) or named.get(f"{ns}.{avro_type}")
        return None if avro_type is None else _base_spec(avro_type, named, ns)
    if not isinstance(avro_type, dict) or not isinstance(avro_type.get("type"), str):
        return None
    kind, logical = avro_type["type"], avro_type.get("logicalType")
    if kind in ("enum", "fixed"):
        _register(avro_type, named, ns)
    if kind == "enum":
        symbols = avro_type.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(x, str) for x in symbols):
            return None
        return {"kind": kind, "symbols": tuple(symbols)}
    if kind not in _PRIMITIVES and kind != "fixed":
        return None
    spec: dict[str, Any] = {"kind": kind, "size": int(avro_type.get("size", 0))}
    if logical not in _LOGICAL_BASE:
        return spec  # unknown logical types are ignored, as the Avro spec asks
    if kind not in _LOGICAL_BASE[logical]:
        return None
    if logical == "decimal":
        precision, scale = int(avro_type.get("precision", 0)), int(avro_type.get("scale", 0))
        if not 0 < precision <= _MAX_DECIMAL128_PRECISION or not 0 <= scale <= precision:
            return None
        spec.update(precision=precision, scale=scale)
    return {**spec, "logical": logical if logical != "uuid" else None}


def _register(avro_type: dict[str, Any], named: dict[str, dict[str, Any]], ns: str) -> None:
    name = str(avro_type.get("name", ""))
    full = name if "." in name else f"{avro_type.get('namespace', ns)}.{name}"
    named[full] = named[name.rsplit(".", 1)[-1]] = avro_type


_LOGICAL_ARROW = {
    "date": pa.date32(),
    "time-millis": pa.time32("ms"),
    "time-micros": pa.time64("us"),
    "timestamp-millis": pa.timestamp("ms", tz="UTC"),
    "timestamp-micros": pa.timestamp("us", tz="UTC"),
    "local-timestamp-millis": pa.timestamp("ms"),
    "local-timestamp-micros": pa.timestamp("us"),
}
_KIND_ARROW = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
    "enum": pa.string(),
}


def natural_type(spec: ColumnSpec) -> pa.DataType:
    """The Arrow type the codec decodes a field into before any cast to the requested schema."""
    if spec.logical == "decimal":
        return pa.decimal128(spec.precision, spec.scale)
    if spec.logical is not None:
        return _LOGICAL_ARROW[spec.logical]
    if spec.kind == "fixed":
        return pa.binary(spec.size)
    return _KIND_ARROW[spec.kind]


def require_specs(schema_json: str) -> tuple[ColumnSpec, ...]:
    specs = column_specs(schema_json)
    if specs is None:
        raise ValueError("the columnar Avro codec does not support this schema (use fastavro)")
    return specs
