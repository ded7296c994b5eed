"""The `hudi` format for Spark's Python Data Source API.

`spark.read.format("hudi").load(path)` plans like `pyhudi.read` and reads each file slice in a
task with pyarrow. `df.write.format("hudi").options(...).mode("append"|"overwrite").save(path)`
writes new file groups from each task and commits once on the driver; the Data Source API cannot
run Spark jobs during a write, so operations that need an index lookup (a join) or a shuffle are
refused with an error that names `pyhudi.write`. `mode("overwrite")` is `insert_overwrite_table`.
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
    EqualTo,
    Filter,
    In,
    InputPartition,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from pyhudi.file_group.slice_reader import read_slice_batches
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.reader.planner import plan_read
from pyhudi.reader.pruning import PartitionFilter
from pyhudi.reader.slices import slice_tasks
from pyhudi.table.context import TableContext


def _path(options: Any) -> str:
    path = options.get("path")
    if not path:
        raise ValueError("the hudi format needs a path: .load(path) / .save(path)")
    return str(path)


def _plain(options: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(options).items() if k != "path"}


class HudiDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "hudi"

    def schema(self) -> StructType:
        from pyhudi.reader.dataframe import spark_schema

        ctx = TableContext.open(_path(self.options))
        return spark_schema(plan_read(ctx, _plain(self.options)), output=True)

    def reader(self, schema: StructType) -> DataSourceReader:
        return HudiDataSourceReader(_path(self.options), _plain(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        from pyhudi.spark.source_writer import HudiDataSourceWriter

        return HudiDataSourceWriter(_path(self.options), _plain(self.options), schema, overwrite)


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

    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Equality and IN filters on partition columns prune partitions; Spark still applies all."""
        for item in filters:
            if isinstance(item, EqualTo) and len(item.attribute) == 1:
                self.filters.append((item.attribute[0], "=", item.value))
            elif isinstance(item, In) and len(item.attribute) == 1:
                self.filters.append((item.attribute[0], "in", list(item.value)))
            yield item

    def partitions(self) -> Sequence[InputPartition]:
        ctx = TableContext.open(self.path)
        partition_fields = set(ctx.config.partition_fields)
        usable = [f for f in self.filters if f[0] in partition_fields]
        plan = plan_read(ctx, self.options, usable)
        tasks = slice_tasks(ctx, plan)
        if not tasks:
            return [SlicePartition([])]
        return [SlicePartition([task]) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        target = to_arrow_schema(self.schema, timezone="UTC")
        for task in partition.tasks:  # type: ignore[attr-defined]
            yield from read_slice_batches(task, target)


__all__ = ["HudiDataSource", "HudiDataSourceReader"]
