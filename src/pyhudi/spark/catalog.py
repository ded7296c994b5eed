"""Spark SQL catalog tables over the `hudi` format (`CREATE TABLE ... USING hudi LOCATION ...`).

Spark's Python Data Source API gives a source the table's properties (`location`, `path`,
TBLPROPERTIES, OPTIONS) only once, when `CREATE TABLE` asks it for the schema; later reads and
`INSERT`s of the catalog table reach the source with no options at all, but with the schema the
catalog stored. So the source stores the table's binding (its location and Hudi options) in the
metadata of the first column of the schema it returns at `CREATE TABLE`, and reads it back from
the schema it is given. Table properties use Hudi's Spark SQL names (`primaryKey`,
`preCombineField`, `type`) or `hoodie.*` keys; Spark lower-cases property names, so they are
matched case-insensitively against the declared options.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark.sql.types import StructField, StructType

from pyhudi.config import sql as sqlkeys
from pyhudi.config.options import REGISTRY
from pyhudi.exceptions import ConfigError

#: Column metadata key holding the binding of a catalog table.
BINDING_METADATA_KEY = "pyhudi.catalog.binding"
_SQL_KEYS = {name.lower(): key for name, key in sqlkeys.SQL_PROPERTY_KEYS.items()}
_HOODIE_KEYS = {key.lower(): key for key in REGISTRY}


@dataclass(frozen=True)
class CatalogBinding:
    """Where a catalog table lives and the Hudi options its properties carry."""

    path: str
    options: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"path": self.path, "options": self.options}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CatalogBinding:
        data = json.loads(text)
        return cls(str(data["path"]), {str(k): str(v) for k, v in data["options"].items()})


def is_catalog_create(options: Mapping[str, str]) -> bool:
    """Spark passes `location` (with `path`) only when `CREATE TABLE` infers the schema."""
    return "location" in {str(k).lower() for k in options}


def binding_from_properties(path: str, options: Mapping[str, str]) -> CatalogBinding:
    """The Hudi options among a catalog table's properties, under their canonical keys."""
    hudi: dict[str, str] = {}
    for raw_key, raw_value in options.items():
        key, value = str(raw_key), str(raw_value)
        lower = key.lower()
        if lower in sqlkeys.CATALOG_KEYS or lower == "path" or lower.startswith("option."):
            continue
        if lower in _SQL_KEYS:
            hudi[_SQL_KEYS[lower]] = _sql_value(lower, value)
        elif lower.startswith(sqlkeys.HOODIE_PREFIX):
            hudi[_HOODIE_KEYS.get(lower, key)] = value
    return CatalogBinding(path, hudi)


def _sql_value(lower_key: str, value: str) -> str:
    if lower_key != sqlkeys.TABLE_TYPE.lower():
        return value
    table_type = sqlkeys.TABLE_TYPE_VALUES.get(value.strip().lower())
    if table_type is None:
        raise ConfigError(
            f"invalid value {value!r} for table property {sqlkeys.TABLE_TYPE}: expected "
            + " or ".join(sqlkeys.TABLE_TYPE_VALUES)
        )
    return table_type


def attach_binding(schema: StructType, binding: CatalogBinding) -> StructType:
    """The schema with the binding in the metadata of its first column."""
    first, *rest = schema.fields
    metadata = {**(first.metadata or {}), BINDING_METADATA_KEY: binding.to_json()}
    return StructType([StructField(first.name, first.dataType, first.nullable, metadata), *rest])


def binding_of(schema: StructType | None) -> CatalogBinding | None:
    """The binding a catalog table's stored schema carries, if any."""
    if schema is None or not schema.fields:
        return None
    text = (schema.fields[0].metadata or {}).get(BINDING_METADATA_KEY)
    return CatalogBinding.from_json(text) if text else None
