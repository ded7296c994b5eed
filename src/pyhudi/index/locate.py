"""Which index locates the incoming keys, and how: every choice made from `hoodie.index.type`
(`IndexType`) and the batch is made here.

| lookup   | when                                                       | where the keys' file groups come from |
|----------|------------------------------------------------------------|---------------------------------------|
| `BUCKET` | BUCKET                                                     | none: a key's hash names its bucket (`index.bucket`) |
| `DRIVER` | SIMPLE / BLOOM, a small batch, keys stored in base files   | the driver reads the base files' keys (`index.driver_lookup`) |
| `SPARK`  | otherwise                                                  | a Spark join with the record index (`index.record_index`) or the base files' keys (`index.simple`, `index.bloom`) |
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.file_group.control_columns import LOCATED
from pyhudi.index.driver_lookup import driver_lookup_files
from pyhudi.index.record_index import tag_with_record_index
from pyhudi.index.simple import LOC_FID
from pyhudi.index.simple import tag_locations as tag_by_files
from pyhudi.model.file import BaseFile
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig


class Lookup(Enum):
    """How a write finds the file groups of its records (`choose_lookup`)."""

    BUCKET = "bucket"
    DRIVER = "driver"
    SPARK = "spark"


@dataclass(frozen=True)
class LookupPlan:
    lookup: Lookup
    #: `Lookup.DRIVER`: the base files whose keys the driver reads (`locate_on_driver`).
    files: tuple[BaseFile, ...] = ()


def choose_lookup(
    ctx: TableContext,
    cfg: WriteConfig,
    partitions: list[str] | None = None,
    rows: int | None = None,
) -> LookupPlan:
    """The lookup of a write's records; `partitions` and `rows` (the batch's partitions and record
    count, when known) let a small batch be looked up on the driver."""
    if cfg.index_type.routes_by_bucket:
        return LookupPlan(Lookup.BUCKET)
    if partitions is not None and rows is not None:
        files = driver_lookup_files(ctx, cfg, partitions, rows)
        if files is not None:
            return LookupPlan(Lookup.DRIVER, tuple(files))
    return LookupPlan(Lookup.SPARK)


def tag_locations(
    spark: SparkSession,
    ctx: TableContext,
    incoming: DataFrame,
    cfg: WriteConfig,
    partitions: list[str] | None,
    incoming_rows: int | None = None,
    positions: bool = False,
) -> DataFrame:
    """The `Lookup.SPARK` lookup: `incoming` plus the location columns (`pyhudi.index.simple.LOC_*`;
    null for new keys). `positions`: plus `control_columns.POSITION` where the index reads the base
    files' keys (the file-based indexes; the record index knows no row positions and leaves it out)."""
    if cfg.index_type.reads_record_index:
        return tag_with_record_index(spark, ctx, incoming)
    return tag_by_files(spark, ctx, incoming, cfg, partitions, incoming_rows, positions)


def locates_exactly(cfg: WriteConfig) -> bool:
    """The index knows the merged keys of every file group (the record index, kept with every
    commit): a key it locates is in that group now, one it does not is in no group. File-based
    indexes read base files only (a key deleted in a log is still "found"; one inserted into a
    log of a file group with a base file is not)."""
    return cfg.index_type.reads_record_index


def with_located(tagged: DataFrame, cfg: WriteConfig, wanted: bool) -> DataFrame:
    """`tagged` plus `control_columns.LOCATED` (whether the index found the key in the file group
    it is routed to), when the write's log appends should return their key changes (`wanted`)
    and the index can say so exactly; `tagged` unchanged otherwise."""
    if not wanted or not cfg.is_merge_on_read or not locates_exactly(cfg):
        return tagged
    return tagged.withColumn(LOCATED, F.col(LOC_FID).isNotNull())
