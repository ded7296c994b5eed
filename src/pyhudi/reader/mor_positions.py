"""Merge-on-read snapshot reads by position: base files scanned natively, minus a delete vector.

One Arrow task per file slice decodes the slice's log files once and resolves them against the base
file's record keys (`file_group.slice_overlay`): it returns the surviving log rows and the base row
positions the logs replace or delete. Those are computed once (an eager local checkpoint), then:

* the positions of every base file become one bitmap literal keyed by file name, and the native
  base scan keeps a row unless its bit is set:
  `getbit(bitmaps[_metadata.file_name][row_index >> 6], row_index & 63) = 0` (no join, no shuffle,
  and no base column other than the query's own is read);
* beyond `LITERAL_MAX_WORDS` bitmap words (a very large read) the positions are a broadcast anti-join
  on (`_metadata.file_name`, `_metadata.row_index`) instead;
* the surviving log rows are added by a union.

Base file names are unique in a table (`<fileId>_<writeToken>_<instant>.parquet`), so the name alone
identifies a file. Used for parquet base files with stored record keys; other tables take the
key-join path of `mor_spark`.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from pyhudi.file_group.base_file import conform
from pyhudi.file_group.slice_overlay import delete_vector_words, slice_overlay
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.model.enums import BaseFileFormat
from pyhudi.reader.base_files import base_files_frame
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext

BASE, POSITIONS = "__pyhudi_base_file", "__pyhudi_positions"
_ROW = "__pyhudi_row"
#: Bitmap words (64 base rows each) a query plan may carry as a literal (8 MiB of bits).
LITERAL_MAX_WORDS = 1 << 20


def reads_by_position(ctx: TableContext, tasks: list[SliceTask]) -> bool:
    """Parquet base files with stored record keys, merged (not `skip_merge`)."""
    return (
        bool(tasks)
        and ctx.config.base_file_format is BaseFileFormat.PARQUET
        and ctx.config.populate_meta_fields
        and not tasks[0].skip_merge
    )


def read_by_position(
    spark: SparkSession, ctx: TableContext, tasks: list[SliceTask], schema: T.StructType
) -> DataFrame:
    overlays = slice_overlays(spark, tasks, schema)
    live = overlays.filter(F.col(BASE).isNull()).select(*schema.fieldNames())
    with_base = [t for t in tasks if t.base_file]
    if not with_base:
        return live
    paths = [ctx.path(t.base_file) for t in with_base]  # type: ignore[arg-type]
    base = base_files_frame(spark, ctx.storage, paths, schema, ctx.config.base_file_format)
    vectors = overlays.filter(F.col(BASE).isNotNull()).select(BASE, POSITIONS).toArrow()
    words = _delete_vectors(vectors)
    if sum(len(w) for w in words.values()) > LITERAL_MAX_WORDS:
        kept = _anti_join(base, overlays)
    elif words:
        kept = base.filter(_not_dropped(words))
    else:
        kept = base
    return kept.select(*schema.fieldNames()).unionByName(live)


def _delete_vectors(vectors: pa.Table) -> dict[str, np.ndarray]:
    """{base file name: bitmap words} from the collected delete-vector rows."""
    lists = vectors.column(POSITIONS).combine_chunks()
    return {
        name: delete_vector_words(lists[i].values.to_numpy(zero_copy_only=False))
        for i, name in enumerate(vectors.column(BASE).to_pylist())
    }


def slice_overlays(spark: SparkSession, tasks: list[SliceTask], schema: T.StructType) -> DataFrame:
    """Every slice's surviving log rows (`BASE` null) and one delete-vector row per base file."""
    extended = T.StructType(
        [
            *(T.StructField(f.name, f.dataType, True) for f in schema.fields),
            T.StructField(BASE, T.StringType()),
            T.StructField(POSITIONS, T.ArrayType(T.LongType(), False)),
        ]
    )
    target = to_arrow_schema(extended, timezone="UTC")
    slots = max(1, min(len(tasks), default_parallelism(spark)))
    # Contiguous index ranges, no shuffle; computed once (the result is referenced three times).
    indices = spark.range(0, len(tasks), 1, numPartitions=slots)
    frame = indices.select(F.col("id").cast("int").alias("i"))
    return frame.mapInArrow(_overlay_function(tasks, target), extended).localCheckpoint(eager=True)


def _overlay_function(tasks: list[SliceTask], target: pa.Schema):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                task = tasks[index]
                result = slice_overlay(task)
                yield from conform(result.live, target).to_batches()
                if len(result.dropped_positions) and task.base_file:
                    positions = pa.ListArray.from_arrays(
                        pa.array([0, len(result.dropped_positions)], pa.int32()),
                        pa.array(result.dropped_positions, pa.int64()),
                    )
                    row = pa.table(
                        {BASE: [posixpath.basename(task.base_file)], POSITIONS: positions}
                    )
                    yield from conform(row, target).to_batches()

    return run


def _not_dropped(words: dict[str, np.ndarray]) -> Column:
    literal = json.dumps({name: w.tolist() for name, w in words.items()})
    # A literal map: constant-folded once by the optimizer, then an O(files) lookup per row.
    bitmaps = F.from_json(F.lit(literal), T.MapType(T.StringType(), T.ArrayType(T.LongType())))
    # try_element_at: NULL (keep the row) for files without deletes and for rows past a bitmap's
    # last word, under ANSI mode too.
    bits = F.try_element_at(bitmaps, F.col("_metadata.file_name"))
    row = F.col("_metadata.row_index")
    word = F.try_element_at(bits, (F.shiftright(row, 6) + 1).cast("int"))
    return bits.isNull() | word.isNull() | (F.getbit(word, row.bitwiseAND(63).cast("int")) == 0)


def _anti_join(base: DataFrame, overlays: DataFrame) -> DataFrame:
    positions = overlays.filter(F.col(BASE).isNotNull()).select(
        BASE, F.explode(POSITIONS).alias(_ROW)
    )
    staged = base.select(
        "*", F.col("_metadata.file_name").alias(BASE), F.col("_metadata.row_index").alias(_ROW)
    )
    return staged.join(F.broadcast(positions), on=[BASE, _ROW], how="left_anti").drop(BASE, _ROW)
