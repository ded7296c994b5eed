"""Merge-on-read snapshot reads on Spark: base files natively, only the log files in Python.

Parquet tables with stored record keys read by position (`mor_positions`: a delete vector per base
file, no join). Others (virtual keys, Lance base files, `skip_merge`) take the key join below.

The base files of slices with logs are read by Spark's parquet reader like any other base file
(column pruning and filters still apply). Each slice's log files are scanned and resolved per key
in one Arrow task (`slice_winners`), and the result is joined with the base rows:
* commit-time ordering: base rows whose key the logs changed are dropped (broadcast anti-join),
  the logs' live versions are added;
* event-time ordering: where a base row's ordering value is greater, the base row stays and the
  log version is dropped (stale updates lose), by the rule of `pyhudi.merge.ordering`; a log
  delete always wins.
* partial updates (`PartialUpdateAvroPayload`): a base row the logs touch is replaced by the log
  version merged over it field by field (`pyhudi.merge.partial.combine`, here on Columns).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import IS_DELETED_FIELD, PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.log_merge import slice_winners
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.keygen.spark import with_key_columns
from pyhudi.keygen.spark_sql import sql_identifier, sql_name
from pyhudi.keygen.spec import table_keygen_spec
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import base_stays_spark, ordering_columns
from pyhudi.merge.partial import combine, spark_field_ops
from pyhudi.merge.record_merger import DELETED, NATURAL
from pyhudi.reader.base_files import base_files_frame
from pyhudi.reader.mor_positions import read_by_position, reads_by_position
from pyhudi.reader.planner import ReadPlan
from pyhudi.reader.slices import slice_tasks
from pyhudi.spark_compat import to_arrow_schema
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext

#: A record is matched by its key within its partition (keys are unique per partition).
MATCH = [RECORD_KEY, PARTITION_PATH]


def _winners_function(tasks: list[SliceTask], target: pa.Schema):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for index in batch.column(0).to_pylist():
                yield from conform(slice_winners(tasks[index]), target).to_batches()

    return run


def log_winners(spark: SparkSession, tasks: list[SliceTask], schema: T.StructType) -> DataFrame:
    """One row per key the logs changed (with the delete flags), computed once, when the read is planned.

    The result is referenced several times by the merge; an eager local checkpoint runs the log scan a
    single time (a lazy one would run it per reference) and is freed with the DataFrame.
    """
    extended = T.StructType(
        [
            *schema.fields,
            T.StructField(DELETED, T.BooleanType()),
            T.StructField(NATURAL, T.BooleanType()),
        ]
    )
    target = to_arrow_schema(extended)
    slots = max(1, min(len(tasks), default_parallelism(spark)))
    indices = spark.range(0, len(tasks), 1, numPartitions=slots)
    indices = indices.select(F.col("id").cast("int").alias("i"))
    winners = indices.mapInArrow(_winners_function(tasks, target), extended)
    return winners.localCheckpoint(eager=True)


def read_log_slices(
    spark: SparkSession,
    ctx: TableContext,
    plan: ReadPlan,
    schema: T.StructType,
    plain_paths: Sequence[str] = (),
) -> DataFrame:
    """The snapshot of the plan's slices with logs, plus a plain scan of `plain_paths`."""
    tasks = slice_tasks(ctx, plan, plan.with_logs)
    if reads_by_position(ctx, tasks):
        sizes = [log.size_bytes for s in plan.with_logs for log in s.log_files]
        log_bytes = -1 if any(size < 0 for size in sizes) else sum(sizes)
        return read_by_position(spark, ctx, tasks, schema, plain_paths, log_bytes)
    merged = _merge_by_key(spark, ctx, tasks, schema)
    if not plain_paths:
        return merged
    plain = base_files_frame(spark, ctx.storage, plain_paths, schema, ctx.config.base_file_format)
    return plain.unionByName(merged)


def _merge_by_key(
    spark: SparkSession, ctx: TableContext, tasks: list[SliceTask], schema: T.StructType
) -> DataFrame:
    winners = log_winners(spark, tasks, schema)
    live = winners.filter(~F.col(DELETED)).drop(DELETED, NATURAL)
    paths = [ctx.path(t.base_file) for t in tasks if t.base_file]
    if not paths:
        return live
    base = base_files_frame(spark, ctx.storage, paths, schema, ctx.config.base_file_format)
    if not ctx.config.populate_meta_fields:  # keys are not stored: compute them as the writer did
        keygen = table_keygen_spec(ctx.config)
        base = with_key_columns(base, keygen, RECORD_KEY, PARTITION_PATH)
    if tasks[0].skip_merge:
        return base.unionByName(live)
    mode, ordering = MergeMode(tasks[0].merge_mode), ordering_columns(tasks[0].ordering_field)
    if mode is MergeMode.PARTIAL_UPDATE:
        fields = ordering if all(_has(schema, f) for f in ordering) else []
        return merge_partial(base, winners, fields, schema.fieldNames())
    if (
        mode is MergeMode.EVENT_TIME_ORDERING
        and ordering
        and all(_has(schema, f) for f in ordering)
    ):
        ordered = tasks[0].ordered_deletes
        return merge_event_time(base, winners, ordering, ordered).select(*schema.fieldNames())
    kept = base.join(F.broadcast(winners.select(*MATCH)), on=MATCH, how="left_anti")
    return kept.select(*schema.fieldNames()).unionByName(live)


def _has(schema: T.StructType, name: str) -> bool:
    """`schema` has the field `name` (`a.b`: field b of struct a)."""
    data_type: T.DataType = schema
    for part in name.split("."):
        if not isinstance(data_type, T.StructType) or part not in data_type.fieldNames():
            return False
        data_type = data_type[part].dataType
    return True


def merge_event_time(
    base: DataFrame, winners: DataFrame, ordering: list[str], ordered_deletes: bool = False
) -> DataFrame:
    """Base rows and log winners under event-time ordering (`record_merger.overlay`'s rule:
    with `ordered_deletes`, only a natural-order delete beats a base record whatever its
    ordering values)."""
    forced = F.col(DELETED) & F.col(NATURAL) if ordered_deletes else F.col(DELETED)
    mine = [F.col(f"__b_ord{i}") for i in range(len(ordering))]
    theirs_cols = [F.col(f"__w_ord{i}") for i in range(len(ordering))]
    theirs = winners.select(
        *MATCH,
        *(F.col(sql_name(f)).alias(f"__w_ord{i}") for i, f in enumerate(ordering)),
        forced.alias("__w_del"),
    )
    pairs = base.select(
        *MATCH, *(F.col(sql_name(f)).alias(f"__b_ord{i}") for i, f in enumerate(ordering))
    )
    pairs = pairs.join(F.broadcast(theirs), on=MATCH)
    base_wins = base_stays_spark(mine, theirs_cols, F.col("__w_del"))
    base_kept_keys = pairs.filter(base_wins).select(*MATCH)
    log_kept_keys = pairs.filter(~base_wins).select(*MATCH)
    kept_base = base.join(F.broadcast(log_kept_keys), on=MATCH, how="left_anti")
    live = winners.filter(~F.col(DELETED)).join(
        F.broadcast(base_kept_keys), on=MATCH, how="left_anti"
    )
    columns = list(base.columns)
    return kept_base.select(*columns).unionByName(live.select(*columns))


def merge_partial(
    base: DataFrame, winners: DataFrame, ordering: list[str], columns: list[str]
) -> DataFrame:
    """Partial updates: each base row a log winner matches is replaced by the winner merged over
    it (or dropped when the result is deleted); unmatched winners are added, untouched base rows
    stay."""
    others = [c for c in columns if c not in MATCH]
    renamed = base.select(
        *MATCH,
        *(F.col(sql_identifier(c)).alias(f"__b{i}") for i, c in enumerate(others)),
        *(F.col(sql_name(f)).alias(f"__b_ord{i}") for i, f in enumerate(ordering)),
    )
    pairs = renamed.join(F.broadcast(winners), on=MATCH)
    earlier = {
        **{c: F.col(c) for c in MATCH},
        **{c: F.col(f"__b{i}") for i, c in enumerate(others)},
    }
    later = {c: F.col(sql_identifier(c)) for c in columns}
    base_deleted = (
        F.coalesce(earlier[IS_DELETED_FIELD].cast("boolean"), F.lit(False))
        if IS_DELETED_FIELD in earlier
        else F.lit(False)
    )
    merged, gone = combine(
        spark_field_ops(F),
        columns,
        earlier,
        later,
        (
            [F.col(f"__b_ord{i}") for i in range(len(ordering))],
            [F.col(sql_name(f)) for f in ordering],
        ),
        (base_deleted, F.col(DELETED)),
    )
    updated = pairs.filter(~gone).select(*(merged[c].alias(c) for c in columns))
    matched_keys = pairs.select(*MATCH)
    added = (
        winners.filter(~F.col(DELETED))
        .join(F.broadcast(matched_keys), on=MATCH, how="left_anti")
        .select(*(sql_identifier(c) for c in columns))
    )
    kept = base.join(F.broadcast(winners.select(*MATCH)), on=MATCH, how="left_anti")
    return (
        kept.select(*(sql_identifier(c) for c in columns)).unionByName(updated).unionByName(added)
    )
