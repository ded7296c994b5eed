"""Spark SQL options: the table properties of `CREATE TABLE ... USING hudi` as Hudi's Spark SQL
names them, and how `INSERT INTO` picks its write operation.

Hudi's SQL layer accepts short property names (`primaryKey`, `preCombineField`, `type`) next to
the `hoodie.*` keys; each short name maps to one write option here.
"""

from __future__ import annotations

from pyhudi.config import write as _write
from pyhudi.config.options import choice

#: Hudi's Spark SQL table property -> the write option it sets.
PRIMARY_KEY = "primaryKey"
PRECOMBINE_FIELD = "preCombineField"
TABLE_TYPE = "type"
SQL_PROPERTY_KEYS: dict[str, str] = {
    PRIMARY_KEY: _write.RECORD_KEY_FIELD.key,
    PRECOMBINE_FIELD: _write.PRECOMBINE_FIELD.key,
    TABLE_TYPE: _write.TABLE_TYPE.key,
}
#: Values of the `type` property (Hudi: `cow` / `mor`).
TABLE_TYPE_VALUES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}

INSERT_INTO_OPERATION = choice(
    "hoodie.spark.sql.insert.into.operation",
    "insert",
    ("bulk_insert", "insert", "upsert"),
    "Write operation of Spark SQL `INSERT INTO` (Hudi's default since 0.14: insert).",
    upper=False,
)
#: Options Spark adds for a catalog table (besides `path`), never Hudi options.
CATALOG_KEYS = ("location", "provider", "owner", "external", "comment", "is_managed_location")
#: Prefix of the keys that carry Hudi options (table properties, data source options).
HOODIE_PREFIX = "hoodie."
