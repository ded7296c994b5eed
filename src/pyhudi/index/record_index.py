"""`hoodie.index.type=RECORD_INDEX`: incoming keys located through the metadata table's
`record_index` partition (Hudi's `SparkMetadataTableRecordIndex`), no scan of the data files.

The distinct incoming keys are hashed to their record-index file group (`file_group_indexes`:
Java's `String.hashCode`, vectorised over Arrow batches), shuffled by it, and each task reads only the file groups its
keys hash to, only those keys (base HFile seek + merged log blocks, `RecordIndexFileGroups`).
The index is global, as Hudi's: a key is matched whatever its incoming partition; with
`hoodie.record.index.update.partition.path=false` (Hudi's default) an update keeps the key's
partition. A table without a `record_index` partition is a `ConfigError` (no silent fallback).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from pyhudi.codec.metadata_keys import file_group_indexes
from pyhudi.codec.schema import RECORD_KEY
from pyhudi.index.simple import LOC_BASE, LOC_FID, LOC_PARTITION, LOCATION_SCHEMA
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext

_GROUP = "__pyhudi_ri_group"
_KEYED_DDL = f"`{RECORD_KEY}` string, `{_GROUP}` int"


def record_index_locations(
    spark: SparkSession, ctx: TableContext, keys: DataFrame, groups: RecordIndexFileGroups
) -> DataFrame:
    """(record key, partition, file id, latest base file name) of the `keys` in the table."""
    count = groups.count
    bases = {
        s.file_id: s.base_file.file_name
        for s in ctx.view().latest_merged_file_slices()
        if s.base_file is not None
    }

    def hash_keys(batches):  # type: ignore[no-untyped-def]
        for batch in batches:
            indexes = file_group_indexes(batch.column(0), count)
            yield pa.record_batch([batch.column(0), indexes], names=[RECORD_KEY, _GROUP])

    def look_up(batches):  # type: ignore[no-untyped-def]
        by_group: dict[int, list[str]] = {}
        for batch in batches:
            for key, index in zip(*(c.to_pylist() for c in batch.columns), strict=True):
                by_group.setdefault(index, []).append(key)
        for index, wanted in sorted(by_group.items()):
            found = groups.read(index, wanted)
            if not found:
                continue
            located = list(found.items())
            yield pa.record_batch(
                [
                    pa.array([k for k, _ in located], pa.string()),
                    pa.array([loc.partition_path for _, loc in located], pa.string()),
                    pa.array([loc.file_id for _, loc in located], pa.string()),
                    pa.array([bases.get(loc.file_id) for _, loc in located], pa.string()),
                ],
                names=[RECORD_KEY, LOC_PARTITION, LOC_FID, LOC_BASE],
            )

    hashed = keys.select(RECORD_KEY).distinct().mapInArrow(hash_keys, _KEYED_DDL)
    tasks = max(1, min(count, default_parallelism(spark)))
    return hashed.repartition(tasks, _GROUP).mapInArrow(look_up, LOCATION_SCHEMA)


def tag_with_record_index(spark: SparkSession, ctx: TableContext, incoming: DataFrame) -> DataFrame:
    """`incoming` plus the location columns (null for keys not in the table)."""
    groups = RecordIndexFileGroups.open(ctx, "hoodie.index.type=RECORD_INDEX")
    matches = record_index_locations(spark, ctx, incoming, groups)
    return incoming.join(matches, on=RECORD_KEY, how="left")
