"""Hudi's Spark SQL DDL run by pyhudi: `CREATE TABLE ... USING hudi` with a column list or
`AS SELECT` (creating the Hudi table as Hudi's catalog does), `ALTER TABLE ... ADD COLUMNS` and
`DROP TABLE [PURGE]`.

`CREATE TABLE name (cols) USING hudi [PARTITIONED BY (cols)] [OPTIONS (...)] [TBLPROPERTIES
(...)] [LOCATION '...']` writes the table's `.hoodie/` at its location (the database's folder /
name when none is given) with the properties Hudi 0.15 writes for it: Hudi's SQL names
(`primaryKey`, `preCombineField`, `type`) and `hoodie.*` keys, hive-style partition paths, the
partition columns last in the schema. `CREATE TABLE ... AS SELECT` writes the query's rows with
`bulk_insert`, as Hudi's CTAS does. Either way the catalog entry is then Spark's own `CREATE TABLE
name USING hudi LOCATION ...` over the new table (`pyhudi.spark.catalog`). A table created without
`LOCATION` is the catalog's (managed, in Hudi's words): `DROP TABLE` of a table at its database's
folder / name removes its files too, as Hudi's does; `DROP TABLE ... PURGE` removes any Hudi
table's files.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from sqlglot import expressions as exp

from pyhudi.client.write_client import write
from pyhudi.codec.schema import arrow_to_avro_json
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.dml.names import PATH_DATABASE, hudi_table_path
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.spark.catalog import binding_from_properties, binding_of
from pyhudi.spark_compat import to_arrow_schema
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.transaction import WriteTransaction

#: The data source names that make a `CREATE TABLE` Hudi's.
HUDI_PROVIDERS = ("hudi", "org.apache.hudi")
#: Hudi's SQL tables are written with hive-style partition paths.
SQL_TABLE_DEFAULTS = {
    write_keys.HIVE_STYLE_PARTITIONING.key: "true",
    write_keys.URL_ENCODE_PARTITIONING.key: "false",
}


def creates_hudi_table(parsed: exp.Expression) -> bool:
    """A `CREATE TABLE ... USING hudi`, in any form."""
    if not isinstance(parsed, exp.Create) or str(parsed.args.get("kind", "")).upper() != "TABLE":
        return False
    properties = parsed.args.get("properties")
    formats = properties.find_all(exp.FileFormatProperty) if properties is not None else ()
    return any(f.name.lower() in HUDI_PROVIDERS for f in formats)


def is_hudi_create(parsed: exp.Expression) -> bool:
    """A `CREATE TABLE ... USING hudi` with a column list or a query."""
    if not creates_hudi_table(parsed):
        return False
    return isinstance(parsed.this, exp.Schema) or parsed.args.get("expression") is not None


def create_table(spark: SparkSession, statement: str, parsed: exp.Create) -> DataFrame:
    target = parsed.this
    table = target.this if isinstance(target, exp.Schema) else target
    name = ".".join(f"`{part.name}`" for part in table.parts)
    if spark.catalog.tableExists(name.replace("`", "")):
        return spark.sql(statement)  # IF NOT EXISTS, or Spark's "already exists" error
    properties, options, location, partitioned = _properties(parsed)
    location = location or _default_location(spark, table)
    query = parsed.args.get("expression")
    database = table.db or spark.catalog.currentDatabase()
    write_options = _write_options(table, database, {**options, **properties}, partitioned)
    if query is not None:
        _create_as_select(spark, location, query, write_options)
    elif not TableContext.exists(location):
        _create_empty(spark, location, target, partitioned, write_options)
    listed = ", ".join(f"'{_quoted(k)}' = '{_quoted(v)}'" for k, v in properties.items())
    spark.sql(
        f"CREATE TABLE {name} USING hudi LOCATION '{_quoted(location)}'"
        + (f" TBLPROPERTIES ({listed})" if listed else "")
    )
    return spark.createDataFrame([], "result string")


def drop_table(spark: SparkSession, statement: str, parsed: exp.Drop) -> DataFrame | None:
    """`DROP TABLE [IF EXISTS] name [PURGE]` of a Hudi catalog table: the catalog entry, and the
    table's files when purged or managed; None when it names no Hudi catalog table."""
    tables = parsed.args.get("tables") or [parsed.this]
    if str(parsed.args.get("kind", "")).upper() != "TABLE" or len(tables) != 1:
        return None
    table = tables[0]
    if not isinstance(table, exp.Table):
        return None
    path = hudi_table_path(spark, table)
    if path is None:
        return None
    name = ".".join(f"`{part.name}`" for part in table.parts)
    managed = _local(path) == _local(_default_location(spark, table))
    spark.sql(f"DROP TABLE {name}")
    if parsed.args.get("purge") or managed:
        storage, base_path = Storage.for_uri(path)
        if TableContext.exists(path):
            storage.delete_dir(base_path)
    return spark.createDataFrame([], "result string")


def alter_table(
    spark: SparkSession, parsed: exp.Alter, options: Mapping[str, str]
) -> DataFrame | None:
    """`ALTER TABLE t ADD COLUMNS (cols)` of a Hudi table, as Hudi's: an `ALTER_SCHEMA` commit
    (deltacommit on merge-on-read) with no files and the new schema (the columns added after
    the data columns, before the partition columns); the catalog entry is made again over it.
    None when `t` is no Hudi table."""
    if str(parsed.args.get("kind", "")).upper() != "TABLE":
        return None
    table = parsed.this
    path = hudi_table_path(spark, table)
    if path is None:
        return None
    actions = parsed.args.get("actions") or []
    added = [c for a in actions if isinstance(a, exp.Schema) for c in a.expressions]
    if len(actions) != 1 or not isinstance(actions[0], exp.Schema) or not added:
        raise UnsupportedOperationError(
            f"{parsed.sql(dialect='spark')}: pyhudi runs ALTER TABLE ... ADD COLUMNS of a Hudi "
            "table only"
        )
    ctx = TableContext.open(path)
    current = table_arrow_schema(ctx)
    if current is None:
        raise ConfigError(f"ALTER TABLE: the table at {path} has no schema yet")
    ddl = ", ".join(c.sql(dialect="spark") for c in added)
    new = to_arrow_schema(spark.createDataFrame([], ddl).schema)
    taken = [f.name for f in new if f.name.lower() in {n.lower() for n in current.names}]
    if taken:
        raise ConfigError(f"ALTER TABLE ... ADD COLUMNS: the table has {', '.join(taken)} already")
    partition = [p for p in ctx.config.partition_fields if p in current.names]
    fields = [f for f in current if f.name not in partition] + list(new)
    fields += [current.field(p) for p in partition]
    schema = arrow_to_avro_json(pa.schema(fields), ctx.config.name)
    action = Action.DELTA_COMMIT if ctx.config.is_merge_on_read else Action.COMMIT
    transaction = WriteTransaction(
        ctx, action, WriteOperationType.ALTER_SCHEMA, options=dict(options)
    )
    transaction.begin()
    transaction.commit(
        CommitMetadata(
            operation_type=WriteOperationType.ALTER_SCHEMA, extra_metadata={"schema": schema}
        )
    )
    if not (table.db.lower() == PATH_DATABASE and table.this.args.get("quoted")):
        _register_again(spark, table, path)
    return spark.createDataFrame([], "result string")


def _register_again(spark: SparkSession, table: exp.Table, path: str) -> None:
    """The catalog entry over the table made again, so that it has the table's new schema."""
    name = ".".join(f"`{part.name}`" for part in table.parts)
    binding = binding_of(spark.table(name).schema)
    kept = binding.options if binding is not None else {}
    spark.sql(f"DROP TABLE {name}")  # Spark's: the catalog entry of a table with a location
    listed = ", ".join(f"'{_quoted(k)}' = '{_quoted(v)}'" for k, v in kept.items())
    spark.sql(
        f"CREATE TABLE {name} USING hudi LOCATION '{_quoted(path)}'"
        + (f" TBLPROPERTIES ({listed})" if listed else "")
    )


# ---- parts of the statement -------------------------------------------------------------------


def _properties(
    parsed: exp.Create,
) -> tuple[dict[str, str], dict[str, str], str | None, list[str]]:
    """(TBLPROPERTIES, OPTIONS, LOCATION, PARTITIONED BY columns)."""
    properties: dict[str, str] = {}
    options: dict[str, str] = {}
    location: str | None = None
    partitioned: list[str] = []
    given = parsed.args.get("properties")
    for prop in given.expressions if given is not None else ():
        if isinstance(prop, exp.FileFormatProperty):
            continue
        if isinstance(prop, exp.LocationProperty):
            location = prop.this.name
        elif isinstance(prop, exp.PartitionedByProperty):
            partitioned = [_column_name(c) for c in prop.this.expressions]
        elif isinstance(prop, exp.OptionsProperty):
            options.update(_pair(p) for p in prop.expressions)
        elif type(prop) is exp.Property:
            properties.update([_pair(prop)])
        else:
            raise ConfigError(
                f"CREATE TABLE ... USING hudi: {prop.sql(dialect='spark')} is not supported"
            )
    path = next((v for k, v in options.items() if k.lower() == "path"), None)
    return properties, options, location or path, partitioned


def _pair(prop: exp.Expression) -> tuple[str, str]:
    key, value = prop.this, prop.args.get("value")
    if isinstance(value, exp.Literal):
        return key.name, value.name
    if value is None:
        raise ConfigError(f"{prop.sql(dialect='spark')}: a property needs a value")
    return key.name, value.sql(dialect="spark")


def _column_name(node: exp.Expression) -> str:
    if isinstance(node, exp.ColumnDef | exp.Identifier | exp.Column):
        return node.name
    raise ConfigError(f"PARTITIONED BY {node.sql(dialect='spark')}: name partition columns")


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _default_location(spark: SparkSession, table: exp.Table) -> str:
    """Where the catalog puts a table created without `LOCATION`: its database's folder / name."""
    database = table.db or spark.catalog.currentDatabase()
    root = spark.catalog.getDatabase(database).locationUri
    parsed = urlparse(root)
    folder = parsed.path if parsed.scheme == "file" else root
    return posixpath.join(folder, table.name)


def _write_options(
    table: exp.Table, database: str, given: Mapping[str, str], partitioned: list[str]
) -> dict[str, str]:
    """The Hudi options of the new table: Hudi's SQL defaults, then the statement's."""
    binding = binding_from_properties("", dict(given))
    options = {
        **SQL_TABLE_DEFAULTS,
        table_keys.NAME.key: table.name,
        **binding.options,
    }
    if not options.get(write_keys.RECORD_KEY_FIELD.key):
        raise UnsupportedOperationError(
            f"CREATE TABLE {table.name} ... USING hudi without primaryKey: Hudi makes a table with "
            "generated record keys, which pyhudi does not write; name the key columns in "
            "TBLPROPERTIES (primaryKey = 'col')"
        )
    options.setdefault(table_keys.DATABASE.key, database)
    if partitioned:
        options.setdefault(write_keys.PARTITION_PATH_FIELD.key, ",".join(partitioned))
    return options


def _create_empty(
    spark: SparkSession,
    location: str,
    target: exp.Schema,
    partitioned: list[str],
    options: dict[str, str],
) -> None:
    columns = [c for c in target.expressions if isinstance(c, exp.ColumnDef)]
    if not columns:
        raise ConfigError("CREATE TABLE ... USING hudi needs a column list, or AS SELECT")
    ddl = ", ".join(c.sql(dialect="spark") for c in columns)
    schema = to_arrow_schema(spark.createDataFrame([], ddl).schema)
    missing = [p for p in partitioned if p not in schema.names]
    if missing:
        raise ConfigError(f"PARTITIONED BY names no column: {', '.join(missing)}")
    # Spark's convention, which Hudi's catalog keeps: the partition columns come last.
    ordered = [f for f in schema if f.name not in partitioned]
    ordered += [schema.field(p) for p in partitioned]
    cfg = resolve_write_config(options, None)
    props = {
        **cfg.table_properties(),
        table_keys.CREATE_SCHEMA.key: _sql_avro_schema(pa.schema(ordered), cfg.table_name),
    }
    database = options.get(table_keys.DATABASE.key)
    if database:
        props[table_keys.DATABASE.key] = database
    TableContext.create(location, props)


def _create_as_select(
    spark: SparkSession, location: str, query: exp.Expression, options: dict[str, str]
) -> None:
    if TableContext.exists(location):
        raise ConfigError(f"CREATE TABLE ... AS SELECT: a Hudi table already exists at {location}")
    frame = spark.sql(query.sql(dialect="spark"))
    write(frame, location, {**options, write_keys.OPERATION.key: "bulk_insert"})


def _local(path: str) -> str:
    """A path without a `file:` scheme, for comparing local locations."""
    parsed = urlparse(path)
    return posixpath.normpath(parsed.path) if parsed.scheme in ("", "file") else path


def _sql_avro_schema(schema: pa.Schema, table_name: str) -> str:
    """The Avro schema Hudi's catalog writes for a table created from SQL: Spark's converter's
    unions (the type, then null) and no defaults, where a data source write has `["null", type]`
    with `default: null`."""
    converted = json.loads(arrow_to_avro_json(schema, table_name))

    def sql_style(node: Any) -> Any:
        if isinstance(node, list):
            if len(node) == 2 and node[0] == "null":
                return [sql_style(node[1]), "null"]
            return [sql_style(n) for n in node]
        if isinstance(node, dict):
            fields = node.get("fields")
            if isinstance(fields, list):
                node["fields"] = [
                    {k: sql_style(v) for k, v in f.items() if not (k == "default" and v is None)}
                    for f in fields
                ]
            for key in ("items", "values"):
                if key in node:
                    node[key] = sql_style(node[key])
        return node

    return json.dumps(sql_style(converted), separators=(",", ":"))
