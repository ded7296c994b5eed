"""The index lookup of a small batch on the driver: no Spark job for it.

A batch of a few thousand records needs the keys of the latest base files of its partitions
(SIMPLE / BLOOM index: which file group holds each key), exactly what the Spark lookup reads, but
a Spark job per lookup costs more than reading the key column with pyarrow: the driver reads the
record-key column of those files (threads, one per file) and keeps the incoming keys. Used only
when the lookup reads at most `DRIVER_LOOKUP_MAX_BYTES` of base files, the index is not global,
the table stores its keys (`hoodie.populate.meta.fields`) and no file group of the partitions has
log files without a base file (their keys are in logs: the Spark lookup decodes those).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.model.file import BaseFile
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig

#: Incoming batches up to this many records are looked up on the driver.
DRIVER_LOOKUP_MAX_ROWS = 20_000
#: ... when the base files to read are at most this many bytes in all (a Spark job reads more
#: in parallel on a cluster).
DRIVER_LOOKUP_MAX_BYTES = 1 << 30
_THREADS = 8
LOCATED_SCHEMA = pa.schema(
    [
        pa.field(RECORD_KEY, pa.string()),
        pa.field(PARTITION_PATH, pa.string()),
        pa.field("file_id", pa.string()),
        pa.field("base_file_name", pa.string()),
        pa.field("position", pa.int64()),
    ]
)


def driver_lookup_files(
    ctx: TableContext, cfg: WriteConfig, partitions: list[str], rows: int
) -> list[BaseFile] | None:
    """The base files a driver lookup reads, or None when the batch goes to the Spark lookup."""
    if rows > DRIVER_LOOKUP_MAX_ROWS or cfg.is_global_index:
        return None
    if not cfg.index_type.reads_base_file_keys or not ctx.config.populate_meta_fields:
        return None
    files: list[BaseFile] = []
    for file_slice in ctx.view().latest_merged_file_slices(partitions=partitions):
        if file_slice.base_file is None:
            if file_slice.log_files:
                return None
            continue
        files.append(file_slice.base_file)
    if sum(max(f.size_bytes, 0) for f in files) > DRIVER_LOOKUP_MAX_BYTES:
        return None
    return files


def locate_on_driver(ctx: TableContext, files: list[BaseFile], incoming: pa.Table) -> pa.Table:
    """(record key, partition, file id, base file name, row position in it) of the `incoming`
    (key, partition) pairs found in `files` (`LOCATED_SCHEMA`)."""
    wanted: dict[str, pa.Array] = {}
    for partition in pc.unique(incoming.column(PARTITION_PATH)).to_pylist():
        keys = incoming.filter(pc.equal(incoming.column(PARTITION_PATH), partition))
        wanted[partition] = pc.unique(keys.column(RECORD_KEY))
    jobs = [f for f in files if f.partition_path in wanted]

    def located(base: BaseFile) -> pa.Table:
        path = ctx.path(base.relative_path)
        keys = read_base_file(ctx.storage, path, [RECORD_KEY]).column(RECORD_KEY)
        found_at = pc.is_in(keys, value_set=wanted[base.partition_path])
        rows = np.flatnonzero(found_at.to_numpy(zero_copy_only=False))
        found = keys.take(rows)  # a base file holds each key once
        n = len(found)
        return pa.table(
            [
                found.cast(pa.string()),
                pa.repeat(base.partition_path, n).cast(pa.string()),
                pa.repeat(base.file_id, n).cast(pa.string()),
                pa.repeat(base.file_name, n).cast(pa.string()),
                pa.array(rows, pa.int64()),
            ],
            schema=LOCATED_SCHEMA,
        )

    if not jobs:
        return LOCATED_SCHEMA.empty_table()
    with ThreadPoolExecutor(max_workers=min(_THREADS, len(jobs))) as pool:
        return pa.concat_tables(list(pool.map(located, jobs)))
