"""Which index locates the incoming keys: `hoodie.index.type` -> the index module's tagging."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.file_group.control_columns import LOCATED
from pyhudi.index.record_index import tag_with_record_index
from pyhudi.index.simple import LOC_FID
from pyhudi.index.simple import tag_locations as tag_by_files
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig


def tag_locations(
    spark: SparkSession,
    ctx: TableContext,
    incoming: DataFrame,
    cfg: WriteConfig,
    partitions: list[str] | None,
    incoming_rows: int | None = None,
    positions: bool = False,
) -> DataFrame:
    """`incoming` plus the location columns (`pyhudi.index.simple.LOC_*`; null for new keys).
    `positions`: plus `control_columns.POSITION` where the index reads the base files' keys (the
    file-based indexes; the record index knows no row positions and leaves it out)."""
    if cfg.index_type == "RECORD_INDEX":
        return tag_with_record_index(spark, ctx, incoming)
    return tag_by_files(spark, ctx, incoming, cfg, partitions, incoming_rows, positions)


def locates_exactly(cfg: WriteConfig) -> bool:
    """The index knows the merged keys of every file group (the record index, kept with every
    commit): a key it locates is in that group now, one it does not is in no group. File-based
    indexes read base files only (a key deleted in a log is still "found"; one inserted into a
    log of a file group with a base file is not)."""
    return cfg.index_type == "RECORD_INDEX"


def with_located(tagged: DataFrame, cfg: WriteConfig, wanted: bool) -> DataFrame:
    """`tagged` plus `control_columns.LOCATED` (whether the index found the key in the file group
    it is routed to), when the write's log appends should return their key changes (`wanted`)
    and the index can say so exactly; `tagged` unchanged otherwise."""
    if not wanted or not cfg.is_merge_on_read or not locates_exactly(cfg):
        return tagged
    return tagged.withColumn(LOCATED, F.col(LOC_FID).isNotNull())
