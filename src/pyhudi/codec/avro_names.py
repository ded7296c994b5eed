"""Avro's name rules for column and table names, and Hudi's sanitizing of names that break them.

Avro names (record and field names, each dot-separated namespace part) match
`[A-Za-z_][A-Za-z0-9_]*` (ASCII only). A table whose schema holds any other name cannot be read by
Avro-based readers (hudi-rs: `Invalid field name`), so a write with such a column is rejected
before anything is written, unless the user turns on Hudi's sanitizing
(`hoodie.streamer.source.sanitize.invalid.schema.field.names`). Sanitizing is
`HoodieAvroUtils.sanitizeName(name, mask)`: an invalid first character is replaced by the mask,
then every remaining character outside `[A-Za-z0-9_]` by the mask (default `__`), one mask per
character: `fare amount` -> `fare__amount`, `1st` -> `__st`.

Table names: Hudi names the record `<sanitizeName(table)>_record` in namespace
`hoodie.<sanitizeName(table)>` (`AvroConversionUtils.getAvroRecordNameAndNamespace`), always, so
`my-table` works. pyhudi additionally rejects table names that look like paths or hold control
characters (`../evil`): they end up in catalogs, CLIs and folder names of other tools.
"""

from __future__ import annotations

import re
import unicodedata

import pyarrow as pa

from pyhudi.exceptions import ConfigError, SchemaMismatchError

_VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INVALID_FIRST = re.compile(r"[^A-Za-z_]")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_]")
DEFAULT_MASK = "__"


def is_valid_name(name: str) -> bool:
    return _VALID_NAME.fullmatch(name) is not None


def sanitize_name(name: str, mask: str = DEFAULT_MASK) -> str:
    """Hudi's `sanitizeName`: invalid first character, then every invalid character -> `mask`."""
    if not name:
        return mask
    if _INVALID_FIRST.match(name[0]):
        name = mask + name[1:]
    return _INVALID_CHARS.sub(mask, name)


def _children(data_type: pa.DataType) -> list[tuple[str, pa.DataType]]:
    """(path suffix, type) of the nested types whose field names Avro records carry."""
    if pa.types.is_struct(data_type):
        return [(f".{f.name}", f.type) for f in data_type]
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return [("[]", data_type.value_type)]
    if pa.types.is_map(data_type):
        return [("{}", data_type.item_type)]
    return []


def invalid_field_names(schema: pa.Schema) -> list[str]:
    """Paths (`a`, `s.inner`, `l[].x`) of every field whose name is not a valid Avro name."""
    found: list[str] = []

    def visit(prefix: str, name: str, data_type: pa.DataType) -> None:
        path = f"{prefix}{name}"
        if not is_valid_name(name):
            found.append(path)
        for suffix, child in _children(data_type):
            if suffix.startswith("."):
                visit(f"{path}.", suffix[1:], child)
            else:
                for inner_suffix, inner in _children(child):
                    if inner_suffix.startswith("."):
                        visit(f"{path}{suffix}.", inner_suffix[1:], inner)

    for field in schema:
        visit("", field.name, field.type)
    return found


def check_field_names(schema: pa.Schema) -> None:
    """`SchemaMismatchError` naming the columns that are not valid Avro names."""
    bad = invalid_field_names(schema)
    if bad:
        raise invalid_names_error(bad)


def invalid_names_error(paths: list[str]) -> SchemaMismatchError:
    return SchemaMismatchError(
        f"column name(s) {', '.join(repr(p) for p in paths)} are not valid Avro names "
        "([A-Za-z_][A-Za-z0-9_]*), so other readers could not read the table; rename them, "
        "or set hoodie.streamer.source.sanitize.invalid.schema.field.names=true to replace "
        "invalid characters with hoodie.streamer.source.sanitize.invalid.char.mask (default __)"
    )


def check_unique(names: list[str], originals: list[str], where: str) -> None:
    """`SchemaMismatchError` when two names of one record are equal, ignoring case.

    Sanitizing can make two names equal; names that differ only in case are ambiguous to Spark
    (case-insensitive by default) and to hudi-rs, so they are refused as Spark's own writers do.
    """
    seen: dict[str, tuple[str, str]] = {}
    for new, old in zip(names, originals, strict=True):
        if new.lower() in seen:
            first_new, first_old = seen[new.lower()]
            if first_new != new or first_old == old:
                raise SchemaMismatchError(
                    f"columns {first_old!r} and {old!r}{where} differ only in case; Spark and "
                    "Hudi readers resolve column names case-insensitively, rename one"
                )
            raise SchemaMismatchError(
                f"columns {first_old!r} and {old!r}{where} both sanitize to {new!r}; rename one"
            )
        seen[new.lower()] = (new, old)


def check_table_name(name: str) -> None:
    """`ConfigError` for a table name that is empty, path-like or holds control characters."""
    bad_char = next((c for c in name if unicodedata.category(c) == "Cc"), None)
    if not name.strip() or "/" in name or "\\" in name or name in (".", "..") or bad_char:
        raise ConfigError(
            f"hoodie.table.name {name!r} is not a usable table name: it must be non-empty, "
            "without '/', '\\' or control characters (its Avro record name is "
            f"{sanitize_name(name) if name else '?'}_record)"
        )


def sanitized_type(data_type: pa.DataType, mask: str) -> pa.DataType:
    """`data_type` with every nested field name sanitized (same layout)."""
    if pa.types.is_struct(data_type):
        return pa.struct([_sanitized_field(f, mask) for f in data_type])
    if pa.types.is_large_list(data_type):
        return pa.large_list(_sanitized_field(data_type.value_field, mask, keep_name=True))
    if pa.types.is_list(data_type):
        return pa.list_(_sanitized_field(data_type.value_field, mask, keep_name=True))
    if pa.types.is_map(data_type):
        item = _sanitized_field(data_type.item_field, mask, keep_name=True)
        return pa.map_(data_type.key_field, item, keys_sorted=data_type.keys_sorted)
    return data_type


def _sanitized_field(field: pa.Field, mask: str, *, keep_name: bool = False) -> pa.Field:
    name = field.name if keep_name else sanitize_name(field.name, mask)
    return pa.field(name, sanitized_type(field.type, mask), field.nullable, field.metadata)


def sanitized_schema(schema: pa.Schema, mask: str) -> pa.Schema:
    """`schema` with every (nested) field name sanitized, as Hudi's streamer sanitizing does."""
    return pa.schema([_sanitized_field(f, mask) for f in schema], metadata=schema.metadata)
