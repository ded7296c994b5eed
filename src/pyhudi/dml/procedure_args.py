"""The arguments of a `CALL`: what every procedure module reads from them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from pyhudi.dml.names import procedure_table_path
from pyhudi.table.context import TableContext

#: A procedure's arguments, bound to its parameter names.
Args = Mapping[str, Any]


def flag(args: Args, name: str) -> bool:
    """A boolean argument: `true` (the SQL literal or the string, any case); absent is false."""
    value = args.get(name)
    return value is True or str(value).lower() == "true"


def text(args: Args, name: str, default: str = "") -> str:
    value = args.get(name)
    return default if value is None else str(value)


def limit(args: Args, default: int = 10) -> int:
    """The `limit` argument (Hudi's default 10); 0 or less lists nothing, as in Hudi."""
    value = args.get("limit")
    return max(default if value is None else int(value), 0)


def table_context(spark: SparkSession, args: Args) -> TableContext:
    """The table a procedure names (`table => 'db.t'` or `path => '/data/t'`)."""
    return TableContext.open(procedure_table_path(spark, args.get("table"), args.get("path")))


def result_frame(spark: SparkSession, schema: str, rows: Iterable[Any]) -> DataFrame:
    """A procedure's result rows as a DataFrame of `schema`, each value of a `str` or `int`
    subclass (an instant time, an enum) given as the plain type: pyspark 3.5's JVM cannot unpickle
    subclasses."""
    return spark.createDataFrame([tuple(_plain(v) for v in row) for row in rows], schema)


def _plain(value: Any) -> Any:
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    if isinstance(value, int) and type(value) not in (int, bool):
        return int(value)
    return value
