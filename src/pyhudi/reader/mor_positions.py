"""Merge-on-read snapshot reads by position: base files scanned natively, minus a delete vector.

Two passes over each file slice's logs (`file_group.slice_overlay`), no checkpoint in between:

1. Before the query is planned, one small job (`mapInArrow` over the slices with a base file,
   collected with `toArrow`) returns per base file the row positions its logs replace or delete:
   under commit-time ordering they are the blocks' RECORD_POSITIONS headers when every block has
   one, else only the record keys of the log blocks are decoded and found in the base file's key
   column (read with pyarrow).
2. The query: base files without deletes are one plain native scan; base files with deletes are a
   native scan that keeps a row unless its bit is set in a bitmap literal keyed by file name,
   `getbit(bitmaps[_metadata.file_name][row_index >> 6], row_index & 63) = 0` (no join, no
   shuffle, and no base column other than the query's own is read); the surviving log rows come
   from a `mapInArrow` that decodes and resolves the logs in the query's own tasks, beside the scan.

Beyond `LITERAL_MAX_WORDS` bitmap words (a very large read) the positions are a broadcast anti-join
on (`_metadata.file_name`, `_metadata.row_index`) against pass 1 run again in the query, so that no
position list is shipped from the driver. Base file names are unique in a table
(`<fileId>_<writeToken>_<instant>.parquet`), so the name alone identifies a file. Used for parquet
base files with stored record keys; other tables take the key-join path of `mor_spark`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.file_group.base_file import conform
from pyhudi.file_group.slice_overlay import delete_vector_words, slice_deletes, slice_live_rows
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.keygen.spark_sql import sql_json_constant
from pyhudi.model.enums import BaseFileFormat
from pyhudi.reader.base_files import base_files_frame
from pyhudi.spark_compat import to_arrow, to_arrow_schema
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext

BASE, POSITIONS, LOST = "__pyhudi_base_file", "__pyhudi_positions", "__pyhudi_lost_keys"
_ROW = "__pyhudi_row"
#: Bitmap words (64 base rows each) a query plan may carry as a literal (8 MiB of bits).
LITERAL_MAX_WORDS = 1 << 20
#: Pass 1 runs on the driver (threads) up to this many slices with logs and log bytes.
DRIVER_MAX_SLICES = 32
DRIVER_MAX_LOG_BYTES = 256 << 20
DRIVER_THREADS = 4
#: Log bytes pass 2 decodes per task: a read with fewer decodes its logs in one task (each Python
#: task costs ~30-40 ms of JVM-side set-up, more than decoding a few MB of logs).
LIVE_TASK_LOG_BYTES = 64 << 20
_DELETES = T.StructType(
    [
        T.StructField(BASE, T.StringType()),
        T.StructField(POSITIONS, T.ArrayType(T.LongType(), False)),
        T.StructField(LOST, T.ArrayType(T.StringType(), False)),
    ]
)


def reads_by_position(ctx: TableContext, tasks: list[SliceTask]) -> bool:
    """Parquet base files with stored record keys, merged (not `skip_merge`)."""
    return (
        bool(tasks)
        and ctx.config.base_file_format is BaseFileFormat.PARQUET
        and ctx.config.populate_meta_fields
        and not tasks[0].skip_merge
    )


def read_by_position(
    spark: SparkSession,
    ctx: TableContext,
    tasks: list[SliceTask],
    schema: T.StructType,
    plain_paths: Sequence[str] = (),
    log_bytes: int = -1,
) -> DataFrame:
    """The snapshot of `tasks`' slices, plus a plain scan of `plain_paths` (base-only slices).

    `log_bytes`: the size of the slices' log files (-1: unknown), for choosing where pass 1 runs.
    """
    with_base = [t for t in tasks if t.base_file]
    collected = _deletes(spark, with_base, log_bytes) if with_base else None
    positions, lost = _collected(collected)
    words = {name: delete_vector_words(p) for name, p in positions.items() if len(p)}
    deleted = [t for t in with_base if _name(t) in words]
    plain = [*plain_paths, *(ctx.path(t.base_file) for t in with_base if _name(t) not in words)]  # type: ignore[arg-type]
    parts = []
    if plain:
        parts.append(_scan(spark, ctx, plain, schema))
    if deleted:
        base = _scan(spark, ctx, [ctx.path(t.base_file) for t in deleted], schema)  # type: ignore[arg-type]
        if sum(len(w) for w in words.values()) > LITERAL_MAX_WORDS:
            kept = _anti_join(base, deletes_frame(spark, deleted))
        else:
            kept = base.filter(_not_dropped(words))
        parts.append(kept)
    # The log decoding first: a union's tasks start in partition order, and its tasks are the
    # query's longest (each the logs of many slices), so they run beside the base scans instead
    # of after them.
    frame = _live_frame(spark, tasks, lost, schema, log_bytes)
    for part in parts:
        frame = frame.unionByName(part)
    return frame


def _scan(
    spark: SparkSession, ctx: TableContext, paths: Sequence[str], schema: T.StructType
) -> DataFrame:
    return base_files_frame(spark, ctx.storage, paths, schema, ctx.config.base_file_format)


def _name(task: SliceTask) -> str:
    return posixpath.basename(task.base_file or "")


def _collected(table: pa.Table | None) -> tuple[dict[str, np.ndarray], dict[str, tuple[str, ...]]]:
    """({base file name: dropped positions}, {base file name: lost log keys}) from pass 1's rows."""
    if table is None or table.num_rows == 0:
        return {}, {}
    names = table.column(BASE).to_pylist()
    lists = table.column(POSITIONS).combine_chunks()
    positions = {n: lists[i].values.to_numpy(zero_copy_only=False) for i, n in enumerate(names)}
    lost = {n: tuple(k) for n, k in zip(names, table.column(LOST).to_pylist()) if k}
    return positions, lost


def _deletes(spark: SparkSession, tasks: list[SliceTask], log_bytes: int) -> pa.Table:
    """Pass 1's rows: computed on the driver for a small read (a Spark job costs more than the
    work: ~15 ms of CPU per slice), else by a Spark job collected with `toArrow`."""
    if len(tasks) > DRIVER_MAX_SLICES or not 0 <= log_bytes <= DRIVER_MAX_LOG_BYTES:
        return to_arrow(deletes_frame(spark, tasks))
    # pyarrow's parquet reads and compute release the GIL: a few threads overlap them.
    with ThreadPoolExecutor(max_workers=min(len(tasks), DRIVER_THREADS)) as pool:
        found = list(pool.map(slice_deletes, tasks))
    rows = [(t, f) for t, f in zip(tasks, found) if len(f.dropped_positions) or f.lost_keys]
    return pa.table(
        {
            BASE: pa.array([_name(t) for t, _ in rows], pa.string()),
            POSITIONS: pa.array([f.dropped_positions for _, f in rows], pa.list_(pa.int64())),
            LOST: pa.array([list(f.lost_keys) for _, f in rows], pa.list_(pa.string())),
        }
    )


def deletes_frame(spark: SparkSession, tasks: list[SliceTask]) -> DataFrame:
    """Pass 1: one row per base file whose logs drop rows or lose to it (`BASE`, `POSITIONS`, `LOST`)."""
    target = to_arrow_schema(_DELETES)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                task = tasks[index]
                found = slice_deletes(task)
                if len(found.dropped_positions) or found.lost_keys:
                    row = {
                        BASE: [_name(task)],
                        POSITIONS: [found.dropped_positions],
                        LOST: [list(found.lost_keys)],
                    }
                    yield pa.RecordBatch.from_pydict(row, schema=target)

    return _indices(spark, len(tasks)).mapInArrow(run, _DELETES)


def _live_frame(
    spark: SparkSession,
    tasks: list[SliceTask],
    lost: dict[str, tuple[str, ...]],
    schema: T.StructType,
    log_bytes: int = -1,
) -> DataFrame:
    """Pass 2: the surviving log rows of every slice, decoded in the query's tasks (one per
    `LIVE_TASK_LOG_BYTES` of logs, up to one per core; one per core when the size is unknown)."""
    target = to_arrow_schema(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                task = tasks[index]
                rows = slice_live_rows(task, lost.get(_name(task), ()))
                yield from conform(rows, target).to_batches()

    slots = len(tasks) if log_bytes < 0 else -(-log_bytes // LIVE_TASK_LOG_BYTES)
    return _indices(spark, len(tasks), slots).mapInArrow(run, schema)


def _indices(spark: SparkSession, count: int, slots: int | None = None) -> DataFrame:
    """Task indices 0..count-1 (column `id`) in contiguous ranges, in `slots` partitions (at most
    one per core and per index)."""
    slots = max(1, min(count, default_parallelism(spark), count if slots is None else slots))
    return spark.range(0, count, 1, numPartitions=slots)


def _not_dropped(words: dict[str, np.ndarray]) -> Column:
    """Keep a row unless its bit is set; one SQL expression (one call into the JVM to build, where
    the same tree of Column calls takes ~150 and each is a round trip under load)."""
    bitmaps = {name: w.tolist() for name, w in words.items()}
    # A literal map: constant-folded once by the optimizer, then an O(files) lookup per row.
    # try_element_at: NULL (keep the row) for rows past a bitmap's last word, under ANSI mode too.
    literal = sql_json_constant(bitmaps, "map<string,array<bigint>>")
    bits = f"try_element_at({literal}, _metadata.file_name)"
    word = f"try_element_at({bits}, cast(shiftright(_metadata.row_index, 6) + 1 as int))"
    return F.expr(f"coalesce(getbit({word}, cast(_metadata.row_index & 63 as int)) = 0, true)")


def _anti_join(base: DataFrame, deletes: DataFrame) -> DataFrame:
    positions = deletes.select(BASE, F.explode(POSITIONS).alias(_ROW))
    staged = base.select(
        "*", F.col("_metadata.file_name").alias(BASE), F.col("_metadata.row_index").alias(_ROW)
    )
    return staged.join(F.broadcast(positions), on=[BASE, _ROW], how="left_anti").drop(BASE, _ROW)
