"""Avro schemas <-> Arrow schemas, with Hudi's naming and nullability conventions (§2.7, §4.3).

| Arrow                       | Avro (as Hudi's Spark writer records it)                         |
|-----------------------------|------------------------------------------------------------------|
| nullable field `f: T`       | `{"name": "f", "type": ["null", T], "default": null}`            |
| int8 / int16 / int32        | `int`                                                            |
| int64, float32, float64     | `long`, `float`, `double`                                        |
| bool, string, binary        | `boolean`, `string`, `bytes`                                     |
| decimal128(p, s)            | `fixed` named `fixed` (namespace `<record>.<field>`), logicalType decimal |
| date32                      | `int` + `date`                                                   |
| timestamp[us, tz=UTC]       | `long` + `timestamp-micros`                                      |
| timestamp[us] (no zone)     | `long` + `local-timestamp-micros`                                |
| struct                      | record named after the field, namespace = parent's full name     |
| list<T>, map<string, T>     | `array` / `map` with nullable items / values                     |

Records: `<table>_record` in namespace `hoodie.<table>`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa

from pyhudi.codec.avro_names import sanitize_name

META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME = META_FIELDS
OPERATION_FIELD = "_hoodie_operation"
IS_DELETED_FIELD = "_hoodie_is_deleted"
META_ARROW_FIELDS = tuple(pa.field(name, pa.string()) for name in META_FIELDS)


def record_name(table_name: str) -> tuple[str, str]:
    """(record name, namespace) of a table's Avro schema; the name sanitized as Hudi does."""
    name = sanitize_name(table_name)
    return f"{name}_record", f"hoodie.{name}"


def decimal_fixed_size(precision: int) -> int:
    """Bytes of a fixed holding `precision` decimal digits (Spark's `minBytesForPrecision`)."""
    size = 1
    while math.pow(2.0, 8 * size - 1) < math.pow(10.0, precision):
        size += 1
    return size


# ---- Arrow -> Avro ---------------------------------------------------------------------------


def arrow_to_avro(
    schema: pa.Schema, table_name: str, *, with_meta_fields: bool = False
) -> dict[str, Any]:
    name, namespace = record_name(table_name)
    fields = [f for f in schema if f.name not in META_FIELDS]
    if with_meta_fields:
        fields = [*META_ARROW_FIELDS, *fields]
    return _record(name, namespace, fields)


def arrow_to_avro_json(
    schema: pa.Schema, table_name: str, *, with_meta_fields: bool = False
) -> str:
    return json.dumps(
        arrow_to_avro(schema, table_name, with_meta_fields=with_meta_fields), separators=(",", ":")
    )


def _record(name: str, namespace: str, fields: list[pa.Field]) -> dict[str, Any]:
    child_namespace = f"{namespace}.{name}"
    return {
        "type": "record",
        "name": name,
        "namespace": namespace,
        "fields": [_field(f, child_namespace) for f in fields],
    }


def _field(field: pa.Field, namespace: str) -> dict[str, Any]:
    avro_type = _type(field.type, field.name, namespace)
    if field.nullable:
        return {"name": field.name, "type": ["null", avro_type], "default": None}
    return {"name": field.name, "type": avro_type}


def _type(arrow_type: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_struct(arrow_type):
        return _record(name, namespace, list(arrow_type))
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        item = arrow_type.value_field
        item_type = _type(item.type, name, namespace)
        return {"type": "array", "items": ["null", item_type] if item.nullable else item_type}
    if pa.types.is_map(arrow_type):
        value = arrow_type.item_field
        value_type = _type(value.type, name, namespace)
        return {"type": "map", "values": ["null", value_type] if value.nullable else value_type}
    if pa.types.is_decimal(arrow_type):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": decimal_fixed_size(arrow_type.precision),
            "logicalType": "decimal",
            "precision": arrow_type.precision,
            "scale": arrow_type.scale,
        }
    return _primitive(arrow_type)


def _primitive(arrow_type: pa.DataType) -> Any:
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_integer(arrow_type):
        return "long" if arrow_type.bit_width == 64 else "int"
    if pa.types.is_float32(arrow_type):
        return "float"
    if pa.types.is_floating(arrow_type):
        return "double"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "bytes"
    if pa.types.is_fixed_size_binary(arrow_type):
        return "bytes"
    if pa.types.is_date32(arrow_type):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(arrow_type):
        logical = "timestamp-micros" if arrow_type.tz else "local-timestamp-micros"
        if arrow_type.unit == "ms":
            logical = logical.replace("micros", "millis")
        return {"type": "long", "logicalType": logical}
    raise TypeError(f"no Avro type for Arrow type {arrow_type}")


# ---- Avro -> Arrow ---------------------------------------------------------------------------


def avro_to_arrow(schema: str | dict[str, Any]) -> pa.Schema:
    """The Arrow schema of an Avro record schema (JSON text or parsed)."""
    doc = json.loads(schema) if isinstance(schema, str) else schema
    named: dict[str, Any] = {}
    fields = [
        _arrow_field(f["name"], f["type"], named, doc.get("namespace", "")) for f in doc["fields"]
    ]
    return pa.schema(fields)


def _arrow_field(name: str, avro_type: Any, named: dict[str, Any], namespace: str) -> pa.Field:
    nullable = False
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        nullable = len(branches) < len(avro_type)
        if len(branches) != 1:
            raise TypeError(f"field {name}: unions other than [null, T] are not supported")
        avro_type = branches[0]
    return pa.field(name, _arrow_type(avro_type, named, namespace), nullable=nullable)


def _arrow_type(avro_type: Any, named: dict[str, Any], namespace: str) -> pa.DataType:
    if isinstance(avro_type, str):
        return _named_or_primitive(avro_type, named, namespace)
    if isinstance(avro_type, list):
        return _arrow_field("item", avro_type, named, namespace).type
    kind = avro_type["type"]
    logical = avro_type.get("logicalType")
    if kind in ("record", "enum", "fixed"):
        _register(avro_type, named, namespace)
    if kind == "record":
        ns = avro_type.get("namespace", namespace)
        return pa.struct(
            [_arrow_field(f["name"], f["type"], named, ns) for f in avro_type["fields"]]
        )
    if kind == "array":
        item = _arrow_field("element", avro_type["items"], named, namespace)
        return pa.list_(item)
    if kind == "map":
        value = _arrow_field("value", avro_type["values"], named, namespace)
        return pa.map_(pa.string(), value)
    if logical == "decimal":
        return pa.decimal128(int(avro_type["precision"]), int(avro_type.get("scale", 0)))
    if kind == "fixed":
        return pa.binary()
    if kind == "enum":
        return pa.string()
    return _logical_primitive(kind, logical)


def _register(avro_type: dict[str, Any], named: dict[str, Any], namespace: str) -> None:
    """Remember a named type under its short and full names, for later references."""
    name = avro_type["name"]
    if "." in name:
        named[name] = avro_type
        name = name.rsplit(".", 1)[1]
    else:
        named[f"{avro_type.get('namespace', namespace)}.{name}"] = avro_type
    named[name] = avro_type


def _named_or_primitive(name: str, named: dict[str, Any], namespace: str) -> pa.DataType:
    for candidate in (name, f"{namespace}.{name}"):
        if candidate in named:
            return _arrow_type(named[candidate], named, namespace)
    return _logical_primitive(name, None)


def _logical_primitive(kind: str, logical: str | None) -> pa.DataType:
    if logical == "date":
        return pa.date32()
    if logical in ("timestamp-micros", "timestamp-millis"):
        return pa.timestamp("us", tz="UTC")
    if logical in ("local-timestamp-micros", "local-timestamp-millis"):
        return pa.timestamp("us")
    primitives = {
        "null": pa.null(),
        "boolean": pa.bool_(),
        "int": pa.int32(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "string": pa.string(),
        "bytes": pa.binary(),
    }
    if kind not in primitives:
        raise TypeError(f"unsupported Avro type {kind!r}")
    return primitives[kind]


def with_meta_fields(schema: pa.Schema) -> pa.Schema:
    data = [f for f in schema if f.name not in META_FIELDS]
    return pa.schema([*META_ARROW_FIELDS, *data])


def without_meta_fields(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f for f in schema if f.name not in META_FIELDS])
