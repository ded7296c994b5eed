"""Index lookup: which file group holds each incoming key (Spark joins, no per-record Python).

* SIMPLE / GLOBAL_SIMPLE: keys are read natively (column projection) from the latest base files
  of the affected partitions and joined with the incoming keys.
* BLOOM / GLOBAL_BLOOM: candidate files are first pruned by footer min/max keys and the bloom
  filter (in tasks), and only the surviving files' keys are read and checked.
Non-global indexes match on (record key, partition path); global ones on the record key alone.
With `positions`, the lookup also returns each match's row position in its base file
(`control_columns.POSITION`, read as `_metadata.row_index` with the keys, or found where the bloom
index checks the candidate file's keys): the MOR log append's RECORD_POSITIONS header, as Hudi
takes it from the record's current location.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.control_columns import POSITION
from pyhudi.file_group.log_scan import InstantFilter, log_records, queued_blocks
from pyhudi.index.bloom import bloom_candidate_locations
from pyhudi.keygen.spark import with_key_columns
from pyhudi.model.file import BaseFile
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig

LOC_FID, LOC_BASE, LOC_PARTITION = "__pyhudi_loc_fid", "__pyhudi_loc_base", "__pyhudi_loc_partition"
LOCATION_SCHEMA = T.StructType(
    [
        T.StructField(RECORD_KEY, T.StringType()),
        T.StructField(LOC_PARTITION, T.StringType()),
        T.StructField(LOC_FID, T.StringType()),
        T.StructField(LOC_BASE, T.StringType()),
    ]
)
POSITION_FIELD = T.StructField(POSITION, T.LongType())
_KEY_COLUMNS_DDL = f"`{RECORD_KEY}` string, `{PARTITION_PATH}` string"
#: Incoming batches up to this many records get the table's matching keys broadcast to them (no
#: shuffle of the incoming records for the location join); larger ones use a shuffled join.
BROADCAST_MATCHES_MAX_ROWS = 500_000


def base_files_for_index(ctx: TableContext, partitions: Iterable[str] | None) -> list[BaseFile]:
    """Latest base files (of the latest slice of each group) in the given partitions."""
    view = ctx.view()
    files = []
    for file_slice in view.latest_merged_file_slices(partitions=partitions):
        if file_slice.base_file is not None:
            files.append(file_slice.base_file)
    return files


def location_schema(positions: bool) -> T.StructType:
    """`LOCATION_SCHEMA`, plus the row position column when the lookup returns positions."""
    return T.StructType([*LOCATION_SCHEMA.fields, POSITION_FIELD]) if positions else LOCATION_SCHEMA


def existing_locations(
    spark: SparkSession,
    ctx: TableContext,
    files: list[BaseFile],
    cfg: WriteConfig,
    positions: bool = False,
) -> DataFrame:
    """(record key, partition, file id, base file name[, row position]) of every record in `files`."""
    if not files:
        return spark.createDataFrame([], location_schema(positions))
    uris = [ctx.storage.uri(ctx.path(f.relative_path)) for f in files]
    if ctx.config.populate_meta_fields:
        # The two key columns only, by name: no schema inference job over the files' footers.
        data = spark.read.schema(_KEY_COLUMNS_DDL).parquet(*uris)
    else:
        data = with_key_columns(
            spark.read.parquet(*uris).drop(RECORD_KEY, PARTITION_PATH),
            cfg.keygen,
            RECORD_KEY,
            PARTITION_PATH,
        )
    file_name = F.col("_metadata.file_name")
    columns = [
        F.col(RECORD_KEY),
        F.col(PARTITION_PATH).alias(LOC_PARTITION),
        F.substring_index(file_name, "_", 1).alias(LOC_FID),
        file_name.alias(LOC_BASE),
    ]
    if positions:
        columns.append(F.col("_metadata.row_index").alias(POSITION))
    return data.select(*columns)


def log_only_locations(
    spark: SparkSession, ctx: TableContext, partitions: Iterable[str] | None
) -> DataFrame | None:
    """Keys of file groups that have log files but no base file (written by log-indexing writers)."""

    slices = [
        s
        for s in ctx.view().latest_merged_file_slices(partitions=partitions)
        if s.base_file is None and s.log_files
    ]
    if not slices:
        return None
    committed = frozenset(ctx.active.timeline.commits().times())
    start = ctx.active.timeline.first.time if ctx.active.timeline.first else None
    storage = ctx.storage
    jobs = [
        (s.partition_path, s.file_id, [ctx.path(log.relative_path) for log in s.log_files])
        for s in slices
    ]
    key_schema = pa.schema([pa.field(RECORD_KEY, pa.string())])

    def run(batches):  # type: ignore[no-untyped-def]
        for batch in batches:
            for index in batch.column(0).to_pylist():
                partition, file_id, paths = jobs[index]
                blocks = queued_blocks(storage, paths, InstantFilter(committed, None, start))
                keys = pa.compute.unique(log_records(blocks, key_schema, None).column(RECORD_KEY))
                n = len(keys)
                yield pa.record_batch(
                    [
                        keys,
                        pa.repeat(partition, n).cast(pa.string()),
                        pa.repeat(file_id, n).cast(pa.string()),
                        pa.nulls(n, pa.string()),
                    ],
                    names=[RECORD_KEY, LOC_PARTITION, LOC_FID, LOC_BASE],
                )

    indices = spark.createDataFrame([(i,) for i in range(len(jobs))], "i int")
    return indices.repartition(max(1, min(len(jobs), 8))).mapInArrow(run, LOCATION_SCHEMA)


def tag_locations(
    spark: SparkSession,
    ctx: TableContext,
    incoming: DataFrame,
    cfg: WriteConfig,
    partitions: list[str] | None,
    incoming_rows: int | None = None,
    positions: bool = False,
) -> DataFrame:
    """`incoming` plus the location columns (null for keys not in the table). `incoming_rows`, when
    known and small enough, lets the matches be broadcast to the incoming records. `positions`:
    plus `control_columns.POSITION` (the row in the located base file; null without one)."""
    files = base_files_for_index(ctx, None if cfg.is_global_index else partitions)
    if cfg.index_type.prunes_by_bloom_filters and files:
        locations = bloom_candidate_locations(spark, ctx, files, incoming, cfg, positions)
    else:
        locations = existing_locations(spark, ctx, files, cfg, positions)
    if ctx.config.is_merge_on_read:
        in_logs = log_only_locations(spark, ctx, None if cfg.is_global_index else partitions)
        if in_logs is not None:
            if positions:  # keys in logs only: no base file row
                in_logs = in_logs.withColumn(POSITION, F.lit(None).cast(T.LongType()))
            locations = locations.unionByName(in_logs)
    # First narrow the table's keys to the incoming ones with a broadcast semi-join (no shuffle of
    # the whole index), then attach the few matches to the incoming records. The semi-join is on
    # a 64-bit hash of the key (and partition): a long hash table, ~30% less than probing string
    # pairs over every key of the table; a colliding key it lets through matches no incoming
    # record in the exact join after.
    if cfg.is_global_index:
        wanted = incoming.select(_key_hash(RECORD_KEY))
        matches = _narrowed(locations, wanted, RECORD_KEY)
        return incoming.join(matches, on=RECORD_KEY, how="left")
    wanted = incoming.select(_key_hash(RECORD_KEY, PARTITION_PATH))
    matches = _narrowed(locations, wanted, RECORD_KEY, LOC_PARTITION)
    if incoming_rows is not None and incoming_rows <= BROADCAST_MATCHES_MAX_ROWS:
        matches = F.broadcast(
            matches
        )  # the incoming keys found in the table: a few per record at most
    condition = (incoming[RECORD_KEY] == matches[RECORD_KEY]) & (
        incoming[PARTITION_PATH] == matches[LOC_PARTITION]
    )
    return incoming.join(matches, on=condition, how="left").drop(matches[RECORD_KEY])


_HASH = "__pyhudi_key_hash"


def _key_hash(*columns: str) -> Column:
    return F.xxhash64(*columns).alias(_HASH)


def _narrowed(locations: DataFrame, wanted: DataFrame, *columns: str) -> DataFrame:
    """The rows of `locations` whose hash of `columns` is among `wanted`'s (`_key_hash`)."""
    hashed = locations.withColumn(_HASH, _key_hash(*columns))
    return hashed.join(F.broadcast(wanted), on=_HASH, how="left_semi").drop(_HASH)


def empty_locations(spark: SparkSession) -> DataFrame:
    return spark.createDataFrame([], LOCATION_SCHEMA)


__all__ = [
    "LOCATION_SCHEMA",
    "LOC_BASE",
    "LOC_FID",
    "LOC_PARTITION",
    "existing_locations",
    "location_schema",
    "tag_locations",
]
