"""Base files as a Spark DataFrame, by format: Parquet through Spark's native reader, Lance (table
version 9) in Arrow tasks.

| `hoodie.table.base.file.format` | extension  | Spark path                         | Arrow path (tasks, data source) |
|---------------------------------|------------|------------------------------------|---------------------------------|
| PARQUET                         | `.parquet` | `spark.read.parquet(files)`        | `pyarrow.parquet.read_table`    |
| LANCE (Hudi 1.1)                | `.lance`   | `mapInArrow` over the file list    | `lance.file.LanceFileReader`    |

The Arrow side (one file, Spark-free) is `file_group/base_formats.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.file_group.base_file import conform
from pyhudi.file_group.base_formats import lance_file_reader, read_lance_file
from pyhudi.model.enums import BaseFileFormat
from pyhudi.spark_compat import to_arrow_schema
from pyhudi.spark_env import default_parallelism
from pyhudi.storage import Storage


def base_files_frame(
    spark: SparkSession,
    storage: Storage,
    paths: Sequence[str],
    schema: T.StructType,
    file_format: BaseFileFormat,
) -> DataFrame:
    """A DataFrame over base files (storage paths) with exactly `schema`."""
    if file_format is not BaseFileFormat.LANCE:
        return spark.read.schema(schema).parquet(*[storage.uri(p) for p in paths])
    lance_file_reader()  # fail on the driver, before any task starts
    return _lance_frame(spark, storage, list(paths), schema)


def _lance_frame(
    spark: SparkSession, storage: Storage, paths: list[str], schema: T.StructType
) -> DataFrame:
    target = to_arrow_schema(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                table = conform(read_lance_file(storage, paths[index]), target)
                yield from table.to_batches()

    indices = spark.range(len(paths)).select(F.col("id").cast("int").alias("i"))
    slots = max(1, min(len(paths), default_parallelism(spark) * 4))
    return indices.repartition(slots).mapInArrow(run, schema)
