"""Which Hudi table a SQL name means: ``hudi.`/data/trips` `` (a path), or a catalog table created
over a Hudi table (`CREATE TABLE ... USING hudi LOCATION ...`: its stored schema carries the
location, `pyhudi.spark.catalog`)."""

from __future__ import annotations

from typing import Any

import sqlglot
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from sqlglot import expressions as exp

from pyhudi.exceptions import ConfigError, TableNotFoundError
from pyhudi.spark.catalog import binding_of

#: The database name that makes a quoted path a table: hudi.`/data/trips`.
PATH_DATABASE = "hudi"


def hudi_table_path(spark: SparkSession, table: Any) -> str | None:
    """The path of the Hudi table `table` (a sqlglot Table) names, or None when it names none."""
    if not isinstance(table, exp.Table):
        return None
    parts = [p.name for p in table.parts]
    if len(parts) == 2 and parts[0].lower() == PATH_DATABASE and table.this.args.get("quoted"):
        return parts[1]
    try:
        schema = spark.table(".".join(f"`{p}`" for p in parts)).schema
    except AnalysisException:
        return None
    binding = binding_of(schema)
    return binding.path if binding is not None else None


def procedure_table_path(spark: SparkSession, table: str | None, path: str | None) -> str:
    """The table a procedure's `table` (a name) or `path` argument names."""
    if path:
        return path
    if not table:
        raise ConfigError("the procedure needs a table (table => 'name') or a path (path => '...')")
    try:
        parsed = sqlglot.exp.to_table(table, dialect="spark")
    except sqlglot.errors.SqlglotError as err:
        raise ConfigError(f"{table!r} is not a table name: {err}") from None
    found = hudi_table_path(spark, parsed)
    if found is None:
        raise TableNotFoundError(f"{table!r} is not a Hudi table of the catalog")
    return found
