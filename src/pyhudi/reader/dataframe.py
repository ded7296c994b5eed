"""`pyhudi.read`: a Spark DataFrame over a Hudi table.

Slices without log files are read by Spark's native parquet reader over the planned file list (the
fast path); only merge-on-read slices with log files go through the merging Arrow reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import COMMIT_TIME, META_FIELDS
from pyhudi.config import read as read_keys
from pyhudi.exceptions import ConfigError
from pyhudi.file_group.slice_reader import read_slice_batches
from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.reader.base_files import base_files_frame
from pyhudi.reader.bootstrap_scan import native_stitched_frame
from pyhudi.reader.cdc import CDC_SCHEMA, is_cdc_query, plan_cdc, read_cdc_task
from pyhudi.reader.mor_spark import read_log_slices
from pyhudi.reader.partition_values import string_partition_fields
from pyhudi.reader.planner import ReadPlan, plan_read
from pyhudi.reader.pruning import PartitionFilter, validate_filters
from pyhudi.reader.read_paths import is_glob, split_load_path
from pyhudi.reader.row_filters import rows_condition
from pyhudi.reader.slices import slice_tasks
from pyhudi.spark_compat import from_arrow_schema, to_arrow_schema
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext


def spark_schema(plan: ReadPlan, *, output: bool = False) -> T.StructType:
    """The Spark schema of the files (meta fields first); `output=True`: of the rows a read returns."""
    schema = plan.data_schema if output and plan.drop_meta_fields else plan.file_schema
    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


def read(
    spark: SparkSession,
    path: str,
    options: Mapping[str, str] | None = None,
    *,
    filters: Sequence[PartitionFilter] = (),
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """Read the table at `path` (snapshot by default) with Hudi's read option keys; `columns`:
    only these columns, in this order (all when None)."""
    checked = validate_filters(filters)
    if is_glob(path) or read_keys.READ_PATHS.is_set(options or {}):
        path, options = split_load_path(path, options or {})
    ctx = TableContext.open(path)
    if is_cdc_query(options or {}):
        frame = cdc_frame(spark, ctx, options or {}, checked)
        return frame.select(*columns) if columns else frame
    plan = plan_read(ctx, options, checked)
    return dataframe_for_plan(spark, ctx, plan, columns=columns)


def cdc_frame(
    spark: SparkSession,
    ctx: TableContext,
    options: Mapping[str, str],
    filters: Sequence[PartitionFilter] = (),
) -> DataFrame:
    """A CDC query (`incremental.format=cdc`): one Arrow task per changed file group."""
    if filters:
        raise ConfigError("a CDC query takes no filters: filter its rows (op, ts_ms, ...) instead")
    tasks = plan_cdc(ctx, options).tasks
    schema = from_arrow_schema(CDC_SCHEMA)
    if not tasks:
        return spark.createDataFrame([], schema)

    def run(batches):  # type: ignore[no-untyped-def]
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from read_cdc_task(tasks[index])

    indices = spark.range(len(tasks)).select(F.col("id").cast("int").alias("i"))
    slots = max(1, min(len(tasks), default_parallelism(spark) * 4))
    return indices.repartition(slots).mapInArrow(run, schema)


def dataframe_for_plan(
    spark: SparkSession,
    ctx: TableContext,
    plan: ReadPlan,
    *,
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """The plan's rows as a DataFrame; with `columns`, projected to them, and a METADATA_ONLY
    bootstrap scan references Spark's `_metadata` only when they (or the filters) use a column it
    derives (Spark 4 keeps a referenced `_metadata` in the scan even when a later projection drops
    it: the row index and every file column would be read for nothing)."""
    schema = spark_schema(plan)
    used = _used_columns(plan, columns, spark_schema(plan, output=True))
    parts = []
    paths = [ctx.path(s.base_file.relative_path) for s in plan.base_only]  # type: ignore[union-attr]
    if plan.with_logs:  # base files without deletes join the base-only files' scan
        parts.append(read_log_slices(spark, ctx, plan, schema, paths))
    elif paths:
        parts.append(
            base_files_frame(spark, ctx.storage, paths, schema, ctx.config.base_file_format)
        )
    if plan.stitched:
        plain = [s for s in plan.stitched if not s.log_files]
        native = native_stitched_frame(spark, ctx, plain, schema, used=used, filters=plan.filters)
        rest = [s for s in plan.stitched if s.log_files] if native is not None else plan.stitched
        if native is not None:
            parts.append(native)
        if rest:
            parts.append(arrow_slices_frame(spark, ctx, plan, rest, schema))

    df = parts[0] if parts else spark.createDataFrame([], schema)
    for other in parts[1:]:
        df = df.unionByName(other)
    if plan.commit_times is not None:
        df = df.filter(F.col(COMMIT_TIME).isin(sorted(plan.commit_times)))
    condition = rows_condition(plan.filters)
    if condition is not None:
        df = df.filter(condition)
    if plan.drop_meta_fields:
        df = df.drop(*META_FIELDS)
    for name in string_partition_fields(ctx.config):
        if name in df.columns:
            df = df.withColumn(name, F.col(sql_identifier(name)).cast("string"))
    if columns is not None:
        df = df.select(*(F.col(sql_identifier(name)) for name in columns))
    return df


def _used_columns(
    plan: ReadPlan, columns: Sequence[str] | None, output: T.StructType
) -> frozenset[str] | None:
    """The columns the read's rows need before the projection (None: all of them)."""
    if columns is None:
        return None
    if isinstance(columns, str):
        raise ConfigError(f"columns is a list of column names, not the string {columns!r}")
    unknown = [name for name in columns if name not in output.names]
    if unknown:
        raise ConfigError(
            f"columns {unknown} are not in the table (columns: {', '.join(output.names)})"
        )
    used = {*columns, *(column for column, _, _ in plan.filters)}
    if plan.commit_times is not None:
        used.add(COMMIT_TIME)
    return frozenset(used)


def arrow_slices_frame(
    spark: SparkSession, ctx: TableContext, plan: ReadPlan, slices, schema: T.StructType
) -> DataFrame:  # type: ignore[no-untyped-def]
    """Slices read whole in Arrow tasks (bootstrap skeletons stitched to their source files)."""
    tasks = slice_tasks(ctx, plan, slices)
    target = to_arrow_schema(schema)

    def run(batches):  # type: ignore[no-untyped-def]
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from read_slice_batches(tasks[index], target)

    indices = spark.range(len(tasks)).select(F.col("id").cast("int").alias("i"))
    slots = max(1, min(len(tasks), default_parallelism(spark) * 4))
    return indices.repartition(slots).mapInArrow(run, schema)
