"""The `hudi` format for Spark's Python Data Source API.

`spark.read.format("hudi").load(path)` plans like `pyhudi.read` and reads each file slice in a
task with pyarrow; `spark.readStream.format("hudi")` reads each commit once (`stream_source`).
`df.write.format("hudi").options(...).mode("append"|"overwrite").save(path)` writes new file
groups from each task and commits once on the driver; the Data Source API cannot run Spark jobs
during a write, so operations that need an index lookup (a join) or a shuffle are refused with an
error that names `pyhudi.write`. `mode("overwrite")` is `insert_overwrite_table`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)
from pyspark.sql.types import StructField, StructType

from pyhudi.exceptions import ConfigError, TableNotFoundError
from pyhudi.file_group.slice_reader import read_slice_batches
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.reader.cdc import CdcTask, is_cdc_query, plan_cdc, read_cdc_task
from pyhudi.reader.planner import plan_read
from pyhudi.reader.pruning import PartitionFilter
from pyhudi.reader.slices import slice_tasks
from pyhudi.spark.catalog import (
    CatalogBinding,
    attach_binding,
    binding_from_properties,
    binding_of,
    is_catalog_create,
)
from pyhudi.spark.errors import short_errors, short_errors_iter
from pyhudi.spark.source_operations import sql_insert_options
from pyhudi.spark.stream_source import HudiStreamReader, cdc_spark_schema, check_stream_options
from pyhudi.spark_compat import to_arrow_schema
from pyhudi.table.context import TableContext


def _path(options: Any, binding: CatalogBinding | None = None) -> str:
    path = options.get("path") or (binding.path if binding else None)
    if not path:
        raise ConfigError(
            "the hudi format needs a path: .load(path) / .save(path), or a catalog table created "
            "with CREATE TABLE ... USING hudi LOCATION '<path>' (no column list)"
        )
    return str(path)


def _plain(options: Any, binding: CatalogBinding | None = None) -> dict[str, str]:
    given = {str(k): str(v) for k, v in dict(options).items() if k != "path"}
    return {**binding.options, **given} if binding else given


class HudiDataSource(DataSource):
    """The `hudi` format. Found by Spark on its own (module `pyspark_hudi`); its reader does no
    filter pushdown, which needs a session conf that `pyhudi.register(spark)` sets."""

    @classmethod
    def name(cls) -> str:
        return "hudi"

    @short_errors
    def schema(self) -> StructType:
        from pyhudi.reader.dataframe import spark_schema

        path = _path(self.options)
        if not TableContext.exists(path):
            raise TableNotFoundError(
                f"no Hudi table at {path}: write it first (pyhudi.write or "
                "df.write.format('hudi')), then CREATE TABLE ... USING hudi LOCATION over it"
            )
        check_stream_options(_plain(self.options))
        if is_cdc_query(_plain(self.options)):
            return cdc_spark_schema()
        ctx = TableContext.open(path)
        if not is_catalog_create(self.options):
            return spark_schema(plan_read(ctx, _plain(self.options)), output=True)
        binding = binding_from_properties(path, dict(self.options))
        schema = spark_schema(plan_read(ctx, binding.options), output=True)
        return attach_binding(schema, binding)

    @short_errors
    def reader(self, schema: StructType) -> DataSourceReader:
        binding = binding_of(schema)
        options = _plain(self.options, binding)
        if is_cdc_query(options):
            return CdcDataSourceReader(_path(self.options, binding), options)
        return self.reader_class(_path(self.options, binding), options, schema)

    @short_errors
    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """`spark.readStream.format("hudi")`: each commit once, as incremental rows."""
        return HudiStreamReader(_path(self.options), _plain(self.options), schema)

    @short_errors
    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        from pyhudi.spark.source_writer import HudiDataSourceWriter

        binding = binding_of(schema)
        options = _plain(self.options, binding)
        if binding is not None:  # Spark SQL INSERT INTO / INSERT OVERWRITE a catalog table
            options = sql_insert_options(options)
        return HudiDataSourceWriter(_path(self.options, binding), options, schema, overwrite)

    @property
    def reader_class(self) -> type[HudiDataSourceReader]:
        return HudiDataSourceReader


class PruningHudiDataSource(HudiDataSource):
    """The `hudi` format registered by `pyhudi.register(spark)`, which also enables Spark's Python
    filter pushdown: equality/IN filters on partition columns prune partitions."""

    @property
    def reader_class(self) -> type[HudiDataSourceReader]:
        return PruningHudiDataSourceReader


class ApacheHudiDataSource(PruningHudiDataSource):
    """The same format under the name older Hudi docs use: `format("org.apache.hudi")`."""

    @classmethod
    def name(cls) -> str:
        return "org.apache.hudi"


@dataclass
class SlicePartition(InputPartition):
    tasks: list[SliceTask] = field(default_factory=list)

    def __init__(self, tasks: list[SliceTask]) -> None:
        super().__init__(len(tasks))
        self.tasks = tasks


class HudiDataSourceReader(DataSourceReader):
    def __init__(self, path: str, options: dict[str, str], schema: StructType) -> None:
        self.path, self.options, self.schema = path, options, schema
        self.filters: list[PartitionFilter] = []

    @short_errors
    def partitions(self) -> Sequence[InputPartition]:
        ctx = TableContext.open(self.path)
        partition_fields = set(ctx.config.partition_fields)
        # partition columns prune by equality; data columns feed column-stats data skipping
        usable = [f for f in self.filters if f[0] not in partition_fields or f[1] in ("=", "in")]
        plan = plan_read(ctx, self.options, usable)
        tasks = slice_tasks(ctx, plan)
        if not tasks:
            return [SlicePartition([])]
        return [SlicePartition([task]) for task in tasks]

    @short_errors_iter
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        target = to_arrow_schema(_without_metadata(self.schema))
        for task in partition.tasks:  # type: ignore[attr-defined]
            yield from read_slice_batches(task, target)


class CdcPartition(InputPartition):
    """One file group's changes (`pyhudi.reader.cdc.CdcTask`), or none."""

    def __init__(self, task: CdcTask | None) -> None:
        super().__init__(0)
        self.task = task


class CdcDataSourceReader(DataSourceReader):
    """A CDC query (`incremental.format=cdc`): a partition per changed file group."""

    def __init__(self, path: str, options: dict[str, str]) -> None:
        self.path, self.options = path, options

    @short_errors
    def partitions(self) -> Sequence[InputPartition]:
        tasks = plan_cdc(TableContext.open(self.path), self.options).tasks
        return [CdcPartition(task) for task in tasks] or [CdcPartition(None)]

    @short_errors_iter
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        task = partition.task  # type: ignore[attr-defined]
        if task is not None:
            yield from read_cdc_task(task)


class PruningHudiDataSourceReader(HudiDataSourceReader):
    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Equality and IN filters on partition columns prune partitions; those and range filters
        on data columns skip file slices by column stats (`hoodie.enable.data.skipping`, as
        `pyhudi.read(filters=...)`). Spark still applies every filter to the rows."""
        for item in filters:
            attribute: tuple[str, ...] = tuple(getattr(item, "attribute", ()))
            op = _PUSHED_OPS.get(type(item))
            if op is not None and len(attribute) == 1:
                value = list(item.value) if op == "in" else item.value  # type: ignore[attr-defined]
                if value is not None:
                    self.filters.append((attribute[0], op, value))
            yield item


_PUSHED_OPS: dict[type, str] = {
    EqualTo: "=",
    In: "in",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}


def _without_metadata(schema: StructType) -> StructType:
    return StructType([StructField(f.name, f.dataType, f.nullable) for f in schema.fields])


__all__ = ["HudiDataSource", "HudiDataSourceReader", "PruningHudiDataSource"]
