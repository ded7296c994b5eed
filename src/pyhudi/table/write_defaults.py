"""Write options completed from an existing table's `hoodie.properties` (what a write inherits)."""

from __future__ import annotations

from typing import Any

from pyhudi.config import keygen as keygen_keys
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.config.options import ConfigOption
from pyhudi.table.config import TableConfig


def _bool(value: bool) -> str:
    return "true" if value else "false"


def with_table_defaults(o: dict[str, str], table: TableConfig) -> dict[str, str]:
    fill: dict[ConfigOption[Any], str | None] = {
        write_keys.RECORD_KEY_FIELD: table.props.get(table_keys.RECORD_KEY_FIELDS.key),
        write_keys.KEY_GENERATOR_CLASS: table.key_generator_class,
        write_keys.HIVE_STYLE_PARTITIONING: _bool(table.hive_style_partitioning),
        write_keys.URL_ENCODE_PARTITIONING: _bool(table.url_encode_partitioning),
        write_keys.TABLE_TYPE: table.table_type.value,
        write_keys.POPULATE_META_FIELDS: _bool(table.populate_meta_fields),
        write_keys.TABLE_NAME: table.name,
    }
    out = dict(o)
    for option, value in fill.items():
        if value is not None and not option.is_set(out):
            out[option.key] = value
    if not write_keys.PARTITION_PATH_FIELD.is_set(out) and table.partition_fields:
        out[write_keys.PARTITION_PATH_FIELD.key] = partition_spec_from_table(table)
    if not write_keys.PRECOMBINE_FIELD.is_set(out) and table.precombine_field:
        out[write_keys.PRECOMBINE_FIELD.key] = table.precombine_field
    if not write_keys.PAYLOAD_CLASS.is_set(out) and table_keys.PAYLOAD_CLASS.is_set(table.props):
        out[write_keys.PAYLOAD_CLASS.key] = table.payload_class
    for option in keygen_keys.PERSISTED:
        if not option.is_set(out) and option.is_set(table.props):
            out[option.key] = str(option.raw(table.props))
    return out


def partition_spec_from_table(table: TableConfig) -> str:
    fields = table.partition_fields
    kind = table.key_generator_class
    if kind and "Custom" in kind and not any(":" in f for f in fields):
        # hoodie.properties of a Custom table records bare names; TIMESTAMP types come from keygen options.
        timestamp = keygen_keys.TIMESTAMP_TYPE.is_set(table.props)
        return ",".join(f"{f}:{'TIMESTAMP' if timestamp else 'SIMPLE'}" for f in fields)
    return ",".join(fields)
