"""Hudi's Avro schemas (the `.avsc` files of release-0.14.0) and single-record Avro containers.

Timeline plans and metadata (`.compaction.requested`, `.clean`, `.rollback`, ...) are Avro Object
Container Files holding exactly one record, null codec (reference §2.3):

| bytes            | content                                                        |
|------------------|----------------------------------------------------------------|
| `Obj\\x01`        | magic                                                          |
| map              | file metadata: `avro.schema` (Hudi writes no `avro.codec`)     |
| 16 bytes         | sync marker                                                    |
| long, long, ...  | one block: record count (1), byte size, the record, the sync   |

The `.avsc` files carry Java-style comments and refer to each other's named types, so they are
loaded together: comments stripped, then parsed in dependency order into one named-type space.
"""

from __future__ import annotations

import io
import json
import os
import re
from functools import cache
from importlib import resources
from typing import Any, cast

import fastavro

from pyhudi.exceptions import CorruptFileError

NAMESPACE = "org.apache.hudi.avro.model"
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.M)
# Files that are not 0.14 schemas (later versions, or generated helpers).
_SKIP_SUFFIXES = (".master-1.2.avsc", ".v8.avsc", ".resolved.avsc")


def _strip_comments(text: str) -> str:
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))


def _raw_schemas() -> dict[str, Any]:
    folder = resources.files("pyhudi.codec").joinpath("avsc")
    raw: dict[str, Any] = {}
    for entry in folder.iterdir():
        name = entry.name
        if not name.endswith(".avsc") or name.endswith(_SKIP_SUFFIXES):
            continue
        raw[name] = json.loads(_strip_comments(entry.read_text(encoding="utf-8")))
    return raw


@cache
def _named_schemas() -> dict[str, Any]:
    pending = _raw_schemas()
    named: dict[str, Any] = {}
    while pending:
        progressed = False
        for file_name, schema in list(pending.items()):
            try:
                fastavro.parse_schema(schema, named_schemas=named)
            except fastavro.schema.UnknownType:
                continue
            del pending[file_name]
            progressed = True
        if not progressed:
            raise RuntimeError(f"unresolvable Hudi Avro schemas: {sorted(pending)}")
    return named


def raw_schema(file_name: str) -> Any:
    """The JSON of one `.avsc` file as Hudi ships it, comments stripped (e.g. `HoodieMetadata.avsc`,
    which defines every type it uses), for schema text written into files."""
    return _raw_schemas()[file_name]


@cache
def schema(name: str) -> Any:
    """The self-contained parsed schema of a Hudi Avro record, e.g. `schema("HoodieCleanerPlan")`.

    Named types defined in other files are inlined at their first use, so fastavro can write and
    read it without a shared name registry.
    """
    named = _named_schemas()
    full = name if "." in name else f"{NAMESPACE}.{name}"
    if full not in named:
        raise KeyError(f"no Hudi Avro schema named {name!r}")
    return fastavro.parse_schema(_inline(named[full], named, set()))


def _inline(node: Any, named: dict[str, Any], seen: set[str]) -> Any:
    if isinstance(node, str):
        full = node if node in named else f"{NAMESPACE}.{node}"
        if full in named and full not in seen:
            return _inline(named[full], named, seen)
        return node
    if isinstance(node, list):
        return [_inline(item, named, seen) for item in node]
    if not isinstance(node, dict):
        return node
    out = dict(node)
    if out.get("type") in ("record", "error", "enum", "fixed") and "name" in out:
        seen.add(
            out["name"]
            if "." in out["name"]
            else f"{out.get('namespace', NAMESPACE)}.{out['name']}"
        )
    if "fields" in out:
        out["fields"] = [{**f, "type": _inline(f["type"], named, seen)} for f in out["fields"]]
    for key in ("items", "values"):
        if key in out:
            out[key] = _inline(out[key], named, seen)
    if isinstance(out.get("type"), list | dict) or (
        isinstance(out.get("type"), str) and out["type"] not in _PRIMITIVE_OR_COMPLEX
    ):
        out["type"] = _inline(out["type"], named, seen)
    return out


_PRIMITIVE_OR_COMPLEX = {
    "null",
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "bytes",
    "string",
    "record",
    "error",
    "enum",
    "array",
    "map",
    "fixed",
}


def encode_container(record_name: str, record: dict[str, Any]) -> bytes:
    """One record in an Avro container file, the way Hudi serializes timeline metadata."""
    out = io.BytesIO()
    fastavro.writer(out, schema(record_name), [record], codec="null", validator=True)
    return out.getvalue()


#: Hudi 1.x's timeline records, with the schema text exactly as Hudi 1.2 writes it into each file
#: (`Schema.toString()` of its generated classes); table versions 8 and 9 use these.
WRITTEN_1X_FOLDER = "written-1.2"


@cache
def written_schema(name: str) -> tuple[str, Any]:
    """(schema text, parsed schema) of a record as Hudi 1.2 writes it, e.g. `HoodieCommitMetadata`."""
    entry = resources.files("pyhudi.codec").joinpath("avsc", WRITTEN_1X_FOLDER, f"{name}.json")
    text = entry.read_text(encoding="utf-8")
    return text, fastavro.parse_schema(json.loads(text))


def encode_container_1x(name: str, record: dict[str, Any]) -> bytes:
    """One record in an Avro container file as Hudi 1.2 writes timeline metadata: its schema text
    verbatim as the only file metadata (no `avro.codec`), a random sync marker, one block."""
    text, parsed = written_schema(name)
    body = io.BytesIO()
    fastavro.schemaless_writer(body, parsed, record)
    payload = body.getvalue()
    sync = os.urandom(16)
    out = io.BytesIO()
    out.write(b"Obj\x01")
    out.write(_long(1))
    _bytes(out, b"avro.schema")
    _bytes(out, text.encode("utf-8"))
    out.write(_long(0))
    out.write(sync)
    out.write(_long(1))
    out.write(_long(len(payload)))
    out.write(payload)
    out.write(sync)
    return out.getvalue()


def encode_timeline_record(name: str, record: dict[str, Any], table_version: int) -> bytes:
    """A timeline plan or metadata record as the table's version stores it: Hudi 0.14's schema
    (version 6), or Hudi 1.2's schema text (versions 8 and 9; fields it adds take their defaults)."""
    if table_version >= 8:
        return encode_container_1x(name, record)
    return encode_container(name, record)


def _long(value: int) -> bytes:
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zigzag & ~0x7F:
        out.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    out.append(zigzag)
    return bytes(out)


def _bytes(out: io.BytesIO, value: bytes) -> None:
    out.write(_long(len(value)))
    out.write(value)


def decode_container(data: bytes, *, what: str = "Avro metadata") -> dict[str, Any]:
    """The first record of an Avro container file (Hudi reads only the first)."""
    try:
        for record in fastavro.reader(io.BytesIO(data)):
            return dict(cast("dict[str, Any]", record))
    except (ValueError, EOFError, StopIteration, fastavro.read.SchemaResolutionError) as err:
        raise CorruptFileError(f"cannot decode {what}: {err}") from err
    raise CorruptFileError(f"{what} holds no record")


def encode_record(record_name: str, record: dict[str, Any]) -> bytes:
    """Schemaless Avro binary of one record (no container), e.g. delete-block payloads."""
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema(record_name), record)
    return out.getvalue()


def decode_record(record_name: str, data: bytes) -> dict[str, Any]:
    record = fastavro.schemaless_reader(io.BytesIO(data), schema(record_name), None)
    return dict(cast("dict[str, Any]", record))
