"""Bloom index: prune candidate files by footer key ranges and bloom filters, then check exactly.

1. footers of the latest base files are read in tasks: (file, min key, max key);
2. incoming keys join the ranges (same partition unless global, key within [min, max]);
3. per candidate file, a task tests its keys against the file's bloom filter and then against
   the file's actual `_hoodie_record_key` column; only true matches come back.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.codec.bloom import FOOTER_MAX_KEY, FOOTER_MIN_KEY, read_footer_bloom
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.config import index as index_keys
from pyhudi.file_group.control_columns import POSITION
from pyhudi.model.file import BaseFile
from pyhudi.spark_compat import apply_in_arrow
from pyhudi.spark_env import default_parallelism
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig

_RANGE_DDL = "partition string, file_id string, file_name string, path string, min_key string, max_key string"
_MATCH_DDL = f"{RECORD_KEY} string, __pyhudi_loc_partition string, __pyhudi_loc_fid string, __pyhudi_loc_base string"
_POSITION_DDL = f", {POSITION} bigint"


def _read_ranges(storage: Storage):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            mins, maxs = [], []
            for path in batch.column("path").to_pylist():
                with storage.open_input(path) as handle:
                    metadata = pq.read_metadata(handle).metadata or {}
                low, high = (
                    metadata.get(FOOTER_MIN_KEY.encode()),
                    metadata.get(FOOTER_MAX_KEY.encode()),
                )
                mins.append(low.decode() if low else None)
                maxs.append(high.decode() if high else None)
            yield batch.append_column("min_key", pa.array(mins, pa.string())).append_column(
                "max_key", pa.array(maxs, pa.string())
            )

    return run


def _check_file(storage: Storage, positions: bool):  # type: ignore[no-untyped-def]
    def run(group: pa.Table) -> pa.Table:
        path = group.column("path")[0].as_py()
        keys = group.column(RECORD_KEY).combine_chunks()
        rows = pa.nulls(0, pa.int64())
        with storage.open_input(path) as handle:
            parquet = pq.ParquetFile(handle)
            bloom = read_footer_bloom(parquet.metadata.metadata)
            if bloom is not None:
                keys = keys.filter(pa.array(bloom.might_contain_keys(keys)))
            if len(keys):
                stored = parquet.read(columns=[RECORD_KEY]).column(RECORD_KEY)
                found = pc.index_in(keys, value_set=stored.combine_chunks())
                keys, rows = keys.filter(found.is_valid()), found.drop_null().cast(pa.int64())
        n = len(keys)
        located = pa.table(
            {
                RECORD_KEY: keys,
                "__pyhudi_loc_partition": pa.repeat(group.column("partition")[0].as_py(), n).cast(
                    pa.string()
                ),
                "__pyhudi_loc_fid": pa.repeat(group.column("file_id")[0].as_py(), n).cast(
                    pa.string()
                ),
                "__pyhudi_loc_base": pa.repeat(group.column("file_name")[0].as_py(), n).cast(
                    pa.string()
                ),
            }
        )
        return located.append_column(POSITION, rows) if positions else located

    return run


def bloom_candidate_locations(
    spark: SparkSession,
    ctx: TableContext,
    files: list[BaseFile],
    incoming: DataFrame,
    cfg: WriteConfig,
    positions: bool = False,
) -> DataFrame:
    """The (key, partition, file id, base file name[, row position]) of the incoming keys found
    in the candidate files."""
    rows = [(f.partition_path, f.file_id, f.file_name, ctx.path(f.relative_path)) for f in files]
    listing = spark.createDataFrame(
        rows, "partition string, file_id string, file_name string, path string"
    )
    slices = max(1, min(len(rows), default_parallelism(spark) * 2))
    ranges = listing.repartition(slices).mapInArrow(_read_ranges(ctx.storage), _RANGE_DDL)
    keys = incoming.select(RECORD_KEY, PARTITION_PATH).distinct()
    condition = F.lit(True)
    if not cfg.is_global_index:
        condition = keys[PARTITION_PATH] == ranges["partition"]

    if index_keys.BLOOM_PRUNE_BY_RANGES.get(cfg.options):
        in_range = (ranges["min_key"].isNull() | (keys[RECORD_KEY] >= ranges["min_key"])) & (
            ranges["max_key"].isNull() | (keys[RECORD_KEY] <= ranges["max_key"])
        )
        condition = condition & in_range
    candidates = keys.join(F.broadcast(ranges), on=condition, how="inner").select(
        RECORD_KEY, "partition", "file_id", "file_name", "path"
    )
    schema = _MATCH_DDL + (_POSITION_DDL if positions else "")
    return apply_in_arrow(candidates, "path", _check_file(ctx.storage, positions), schema)
