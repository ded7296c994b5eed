"""The PySpark APIs that differ between 3.5 and 4.x, asked in one place.

| need                          | pyspark 4.x                        | pyspark 3.5                                       |
|-------------------------------|------------------------------------|---------------------------------------------------|
| a small result as Arrow       | `DataFrame.toArrow()`              | `_collect_as_arrow()` (classic), `_to_table()` (Connect) |
| one Arrow call per group      | `groupBy(c).applyInArrow(f, s)`    | hash-partition by `c`, sort, `mapInArrow` that cuts each task's batches into groups |
| a DataFrame of a `pyarrow.Table` | `createDataFrame(table[, schema])` | the same Arrow stream handed to the JVM as 4.x does (3.5 would go through pandas) |
| the Python Data Source API    | `pyspark.sql.datasource`           | absent: `format("hudi")` only through `pyhudi.register(spark)`'s routing |

On 4.x every function here is the 4.x call itself, unchanged. On 3.5 the grouped call hands the
same body the same rows per group (a group's rows in one task, in one `pyarrow.Table`), so the
files written are the same bytes; Spark 3.5's `applyInPandas` would go through pandas and lose
Arrow types (nested, timestamps, decimals) and costs more.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas import types as arrow_types
from pyspark.sql.types import StructType

#: The first pyspark with the Python Data Source API (pyhudi runs on 3.5.1+).
DATA_SOURCE_PYSPARK = "4.0"

GroupBody = Callable[[pa.Table], pa.Table]


def pyspark_version() -> tuple[int, int]:
    """(major, minor) of the installed pyspark."""
    major, minor = pyspark.__version__.split(".")[:2]
    return int(major), int(minor)


def has_python_data_sources() -> bool:
    """Spark's Python Data Source API (`pyspark.sql.datasource`, pyspark 4.0+) is importable."""
    return importlib.util.find_spec("pyspark.sql.datasource") is not None


def has_grouped_arrow() -> bool:
    """`GroupedData.applyInArrow` exists (pyspark 4.0+)."""
    return pyspark_version() >= (4, 0)


def needs_pyspark_4(what: str) -> str:
    """The message of an error for something pyspark 3.5 cannot do."""
    return (
        f"{what} needs Spark's Python Data Source API, which is in pyspark>={DATA_SOURCE_PYSPARK} "
        f"(installed: pyspark {pyspark.__version__})"
    )


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """Spark's Arrow schema of `schema`, timestamps with time zone in UTC (pyspark 3.5 always
    converts them so and takes no `timezone`)."""
    if pyspark_version() >= (4, 0):
        return arrow_types.to_arrow_schema(schema, timezone="UTC")  # type: ignore[call-arg]
    return arrow_types.to_arrow_schema(schema)


def from_arrow_schema(schema: pa.Schema, prefer_timestamp_ntz: bool = True) -> StructType:
    """Spark's schema of an Arrow schema; zone-less timestamps become TIMESTAMP_NTZ (pyspark 4's
    default; 3.5's default is the other way, so it is always passed)."""
    return arrow_types.from_arrow_schema(schema, prefer_timestamp_ntz=prefer_timestamp_ntz)


def to_arrow(df: DataFrame) -> pa.Table:
    """`df` collected to the driver as a `pyarrow.Table` (for small results only)."""
    if pyspark_version() >= (4, 0):
        return df.toArrow()  # type: ignore[no-any-return]
    schema = to_arrow_schema(df.schema)
    if hasattr(df, "_to_table"):  # a Spark Connect 3.5 frame
        table, _ = df._to_table()  # type: ignore[operator]
        return table.cast(schema)
    batches = df._collect_as_arrow()  # type: ignore[operator]
    return pa.Table.from_batches(batches, schema=schema if not batches else None).cast(schema)


def arrow_to_frame(
    spark: SparkSession, table: pa.Table, schema: StructType | str | None = None
) -> DataFrame:
    """`spark.createDataFrame(table[, schema])` of a `pyarrow.Table`, its Arrow types kept."""
    if pyspark_version() >= (4, 0) or type(spark).__module__.startswith("pyspark.sql.connect"):
        if schema is None:
            return spark.createDataFrame(table)
        return spark.createDataFrame(table, schema)
    return _classic_arrow_frame(spark, table, schema)


def _classic_arrow_frame(
    spark: SparkSession, table: pa.Table, schema: StructType | str | None
) -> DataFrame:
    """pyspark 3.5's classic session: what pyspark 4's `_create_from_arrow_table` does (3.5 takes
    pandas frames only, whose conversion loses Arrow types)."""
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.types import _parse_datatype_string

    if isinstance(schema, str):
        parsed = _parse_datatype_string(schema)
        schema = parsed if isinstance(parsed, StructType) else StructType().add("value", parsed)
    if schema is None:
        ntz = str(spark.conf.get("spark.sql.timestampType")).upper() == "TIMESTAMP_NTZ"
        schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=ntz)
    target = to_arrow_schema(schema)
    if len(schema.fields) > 0:
        table = _localized(table, target, str(spark.conf.get("spark.sql.session.timeZone")))
        table = table.rename_columns(target.names).cast(target)
    jvm, context = spark._jvm, spark.sparkContext
    size = int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", "10000") or 10000)
    jiter = context._serialize_to_jvm(  # type: ignore[attr-defined]
        table.to_batches(max_chunksize=max(size, 1)),
        ArrowStreamSerializer(),
        lambda name: jvm.PythonSQLUtils.readArrowStreamFromFile(name),  # type: ignore[union-attr]
        lambda: jvm.ArrowIteratorServer(),  # type: ignore[union-attr]
    )
    jdf = jvm.PythonSQLUtils.toDataFrame(jiter, schema.json(), spark._jsparkSession)  # type: ignore[union-attr]
    return DataFrame(jdf, spark)


def _localized(table: pa.Table, target: pa.Schema, zone: str) -> pa.Table:
    """Zone-less timestamps bound for a TIMESTAMP (with zone) column are wall times of the
    session's zone, as pyspark 4 reads them."""
    for i, field in enumerate(target):
        have = table.schema.field(i).type
        zoned = pa.types.is_timestamp(field.type) and field.type.tz
        if zoned and pa.types.is_timestamp(have) and have.tz is None:
            table = table.set_column(i, table.field(i), pc.assume_timezone(table.column(i), zone))
    return table


def apply_in_arrow(
    df: DataFrame, column: str, body: GroupBody, schema: str, *, tasks: int | None = None
) -> DataFrame:
    """`body` once per distinct value of `column`, with all of that group's rows as one table;
    the rows it returns (`schema`). `tasks`: hash-partition by `column` into that many tasks first."""
    if has_grouped_arrow():
        frame = df.repartition(tasks, column) if tasks is not None else df
        return frame.groupBy(column).applyInArrow(body, schema)  # type: ignore[attr-defined]
    frame = df.repartition(tasks, column) if tasks is not None else df.repartition(column)
    return frame.sortWithinPartitions(column).mapInArrow(_per_group(body, column), schema)


def _per_group(
    body: GroupBody, column: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for group in split_sorted_groups(batches, column):
            yield from body(group).to_batches()

    return run


def split_sorted_groups(batches: Iterator[pa.RecordBatch], column: str) -> Iterator[pa.Table]:
    """The groups of equal `column` values in batches sorted by `column`, one table each."""
    pending: list[pa.RecordBatch] = []
    current: object = None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        keys = batch.column(column)
        starts = run_starts(keys)
        ends = [*starts[1:], batch.num_rows]
        for start, end in zip(starts, ends):
            key = keys[start].as_py()
            if pending and key != current:
                yield pa.Table.from_batches(pending)
                pending = []
            current = key
            pending.append(batch.slice(start, end - start))
    if pending:
        yield pa.Table.from_batches(pending)


def run_starts(keys: pa.Array) -> list[int]:
    """The first index of each run of equal values (nulls equal to each other)."""
    n = len(keys)
    if n <= 1:
        return [0] if n else []
    before, after = keys.slice(0, n - 1), keys.slice(1)
    same = pc.fill_null(pc.equal(before, after), False)
    both_null = pc.and_(pc.is_null(before), pc.is_null(after))
    changed = pc.invert(pc.or_(same, both_null)).to_numpy(zero_copy_only=False)
    return [0, *(np.flatnonzero(changed) + 1).tolist()]
