"""Which index locates the incoming keys: `hoodie.index.type` -> the index module's tagging."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from pyhudi.index.record_index import tag_with_record_index
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
) -> DataFrame:
    """`incoming` plus the location columns (`pyhudi.index.simple.LOC_*`; null for new keys)."""
    if cfg.index_type == "RECORD_INDEX":
        return tag_with_record_index(spark, ctx, incoming)
    return tag_by_files(spark, ctx, incoming, cfg, partitions, incoming_rows)
