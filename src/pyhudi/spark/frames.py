"""What `pyhudi.write` accepts, as a Spark DataFrame: a Spark DataFrame as it is; a pandas
DataFrame, a `pyarrow.Table` or any object exporting the Arrow C stream interface (a
`pyarrow.RecordBatchReader`, a polars DataFrame, ...) through the active SparkSession.

Arrow types are kept, as `pyhudi.read` maps them back: a timestamp with a time zone is Spark's
`timestamp` (stored as UTC), one without is `timestamp_ntz`; decimals keep precision and scale.
Spark holds microseconds: finer timestamps are cast to them, and refused when that would lose a
value (pandas' nanosecond columns of whole microseconds convert as they are).
"""

from __future__ import annotations

import sys
from typing import Any

import pyarrow as pa
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession

from pyhudi.exceptions import SchemaMismatchError, UnsupportedInputError
from pyhudi.spark.session import local_session
from pyhudi.spark_compat import arrow_to_frame, from_arrow_schema, to_arrow_schema

#: What `spark_frame` accepts, as its error messages name it.
ACCEPTED = (
    "a Spark DataFrame, a pandas DataFrame, a pyarrow.Table or an object with the Arrow C "
    "stream interface (__arrow_c_stream__)"
)


def spark_frame(data: Any, what: str = "pyhudi.write") -> DataFrame:
    """`data` as a Spark DataFrame (see the module doc); anything else is `UnsupportedInputError`."""
    if isinstance(data, DataFrame):
        return data
    table = arrow_table(data)
    if table is None:
        raise UnsupportedInputError(
            f"{what} takes {ACCEPTED}; got {type(data).__module__}.{type(data).__qualname__}"
        )
    return arrow_frame(active_session(), table)


def arrow_table(data: Any) -> pa.Table | None:
    """A pandas DataFrame (its index left out, as `spark.createDataFrame` does) or an Arrow
    stream as a `pyarrow.Table`; None for anything else."""
    pandas = sys.modules.get("pandas")  # no pandas imported: `data` is no pandas frame
    if pandas is not None and isinstance(data, pandas.DataFrame):
        return pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch) or hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    return None


def active_session() -> SparkSession:
    """The active (or default) SparkSession of this thread, a Spark Connect one included; pyhudi's
    local session when there is none."""
    try:
        return SparkSession.active()
    except PySparkException:
        return local_session()


def arrow_frame(spark: SparkSession, table: pa.Table) -> DataFrame:
    """`table` as a DataFrame of `spark`, its types kept (see the module doc)."""
    try:
        schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
    except (TypeError, PySparkException) as err:
        raise SchemaMismatchError(f"a column type Spark cannot hold: {err}") from err
    target = to_arrow_schema(schema)
    try:
        table = table.cast(target)  # safe: refuses to drop sub-microsecond parts
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as err:
        raise SchemaMismatchError(f"the table does not convert to Spark's types: {err}") from err
    return arrow_to_frame(spark, table, schema)
