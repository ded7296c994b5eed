"""`hoodie.index.type=RECORD_INDEX`: incoming keys located through the metadata table's
`record_index` partition (Hudi's `SparkMetadataTableRecordIndex`), no scan of the data files.

A batch of up to `DRIVER_LOOKUP_MAX_KEYS` records is looked up on the driver: its keys are
collected (one stage over the already materialized batch, no shuffle), hashed to their
record-index file group (`file_group_indexes`: Java's `String.hashCode`, vectorised), each file
group read once for its keys (`RecordIndexFileGroups.read`: only the HFile blocks that may hold
them, rows matched as Arrow arrays, values decoded once per distinct value), a few groups at a time
in threads (gunzip and Arrow release the GIL); the (small) located table is broadcast into the
join. A bigger batch goes through Spark: the distinct keys hashed, shuffled by file group, each
task reading only the file groups its keys hash to.
The index is global, as Hudi's: a key is matched whatever its incoming partition; with
`hoodie.record.index.update.partition.path=false` (Hudi's default) an update keeps the key's
partition. A table without a `record_index` partition is a `ConfigError` (no silent fallback).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec.metadata_keys import file_group_indexes
from pyhudi.codec.schema import RECORD_KEY
from pyhudi.index.simple import LOC_BASE, LOC_FID, LOC_PARTITION, LOCATION_SCHEMA
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.spark_compat import arrow_to_frame, to_arrow
from pyhudi.spark_env import default_parallelism
from pyhudi.table.context import TableContext

#: Incoming batches up to this many records are tagged on the driver (no Spark lookup job).
DRIVER_LOOKUP_MAX_KEYS = 200_000
_THREADS = 4
_GROUP = "__pyhudi_ri_group"
_KEYED_DDL = f"`{RECORD_KEY}` string, `{_GROUP}` int"


def record_index_locations(
    spark: SparkSession, ctx: TableContext, keys: DataFrame, groups: RecordIndexFileGroups
) -> DataFrame:
    """(record key, partition, file id, latest base file name) of the `keys` in the table."""
    count = groups.count
    bases = _base_file_names(ctx)

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
    keys = to_arrow(incoming.select(RECORD_KEY).limit(DRIVER_LOOKUP_MAX_KEYS + 1))
    if keys.num_rows <= DRIVER_LOOKUP_MAX_KEYS:
        located = locate_on_driver(ctx, groups, keys.column(0))
        matches = arrow_to_frame(spark, located, LOCATION_SCHEMA)
        return incoming.join(F.broadcast(matches), on=RECORD_KEY, how="left")
    matches = record_index_locations(spark, ctx, incoming, groups)
    return incoming.join(matches, on=RECORD_KEY, how="left")


def locate_on_driver(
    ctx: TableContext, groups: RecordIndexFileGroups, keys: pa.Array | pa.ChunkedArray
) -> pa.Table:
    """(record key, partition, file id, latest base file name) of the `keys` the index holds,
    as an Arrow table in `LOCATION_SCHEMA` order; each file group read once, in threads."""
    distinct = pc.unique(pc.drop_null(keys)).cast(pa.string())
    indexes = file_group_indexes(distinct, groups.count).to_numpy(zero_copy_only=False)
    by_group: dict[int, list[str]] = {}
    for key, index in zip(distinct.to_pylist(), indexes.tolist(), strict=True):
        by_group.setdefault(index, []).append(key)
    with ThreadPoolExecutor(max_workers=max(1, min(_THREADS, len(by_group)))) as pool:
        parts = list(pool.map(lambda item: groups.read(*item), sorted(by_group.items())))
    located = [(key, loc) for part in parts for key, loc in part.items()]
    bases = _base_file_names(ctx) if located else {}
    return pa.table(
        [
            pa.array([k for k, _ in located], pa.string()),
            pa.array([loc.partition_path for _, loc in located], pa.string()),
            pa.array([loc.file_id for _, loc in located], pa.string()),
            pa.array([bases.get(loc.file_id) for _, loc in located], pa.string()),
        ],
        names=[RECORD_KEY, LOC_PARTITION, LOC_FID, LOC_BASE],
    )


def _base_file_names(ctx: TableContext) -> dict[str, str]:
    """File id -> the name of its latest base file (a file group with only logs has none)."""
    return {
        s.file_id: s.base_file.file_name
        for s in ctx.view().latest_merged_file_slices()
        if s.base_file is not None
    }
