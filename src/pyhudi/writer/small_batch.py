"""Upserts of a small batch: index lookup and insert assignment on the driver, one Spark job to write.

A few thousand records into a big table should cost the files they touch, not full-table Spark
jobs: the batch's (key, partition) pairs come to the driver, the index lookup reads the key column
of the partitions' latest base files there (`pyhudi.index.driver_lookup`), new keys are assigned to
insert buckets by the partitioner's rules (small files first, then new file groups; a key's hash
against the buckets' planned counts picks its bucket), and the records get their file group
from a broadcast of that (small) table in the write job itself.
"""

from __future__ import annotations

import bisect
import hashlib

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.control_columns import BASE, DELETE, FID, POSITION
from pyhudi.index.driver_lookup import locate_on_driver
from pyhudi.model.file import BaseFile
from pyhudi.spark_compat import arrow_to_frame, to_arrow
from pyhudi.writer import partitioner
from pyhudi.writer.job import WriteJob, in_task_combine

#: True on the rows of keys new to the table (inserts); dropped before the write.
NEW = "__pyhudi_new"
_ROUTE_SCHEMA = pa.schema(
    [
        pa.field(RECORD_KEY, pa.string()),
        pa.field(PARTITION_PATH, pa.string()),
        pa.field(FID, pa.string()),
        pa.field(BASE, pa.string()),
        pa.field(POSITION, pa.int64()),
        pa.field(NEW, pa.bool_()),
    ]
)


def tagged_on_driver(
    job: WriteJob, records: DataFrame, files: list[BaseFile], *, keep_new: bool = True
) -> DataFrame:
    """`records` with their file group (`FID`, `BASE`): updates where the index found the key
    (with its row in that base file, `POSITION`), inserts where the partitioner put them (none
    unless `keep_new`: a delete's keys new to the table go nowhere)."""
    incoming = to_arrow(records.select(RECORD_KEY, PARTITION_PATH))
    pairs = incoming.group_by([RECORD_KEY, PARTITION_PATH]).aggregate([])
    located = locate_on_driver(job.ctx, files, pairs)
    new_keys = pairs.join(located, keys=[RECORD_KEY, PARTITION_PATH], join_type="left anti")
    updates = pa.table(
        [
            located.column(RECORD_KEY),
            located.column(PARTITION_PATH),
            located.column("file_id"),
            located.column("base_file_name"),
            located.column("position"),
            pa.repeat(False, located.num_rows),
        ],
        schema=_ROUTE_SCHEMA,
    )
    # A delete's keys new to the table are dropped before any insert is planned (Hudi's delete
    # keeps only the keys its index found): planning them would make the small files of their
    # partitions take the delete's other keys into a new base file, not a log.
    inserts = _inserts_routed(job, new_keys) if keep_new else _ROUTE_SCHEMA.empty_table()
    # One chunk per column: pyspark 4.3 takes only the first rows of a table whose columns are
    # chunked differently.
    routes = pa.concat_tables([updates, inserts]).combine_chunks()
    routed = records.join(
        F.broadcast(arrow_to_frame(job.spark, routes)), on=[RECORD_KEY, PARTITION_PATH]
    )
    if keep_new and not in_task_combine(job.cfg):  # else deletes compete with inserts in the task
        # Planned as inserts (Hudi counts them too, so their partitions' small files are rewritten),
        # written nowhere.
        routed = routed.filter(~(F.col(NEW) & F.col(DELETE)))
    return routed.drop(NEW)


def _inserts_routed(job: WriteJob, new_keys: pa.Table) -> pa.Table:
    """Routes of the keys new to the table: a hash of each key against its partition's insert
    buckets' weights (as the Spark path, and Hudi's `UpsertPartitioner`, spread inserts)."""
    if new_keys.num_rows == 0:
        return _ROUTE_SCHEMA.empty_table()
    counts = {
        row["values"]: row["counts"]
        for row in pc.value_counts(new_keys.column(PARTITION_PATH)).to_pylist()
    }
    ranges: dict[str, list[tuple[int, str, str | None]]] = {}
    for partition, _, high, file_id, base in partitioner.bucket_ranges(
        partitioner.plan_for_job(job, counts, small_files=True)
    ):
        ranges.setdefault(partition, []).append((high, file_id, base))
    fids: list[str] = []
    bases: list[str | None] = []
    for key, partition in zip(
        new_keys.column(RECORD_KEY).to_pylist(),
        new_keys.column(PARTITION_PATH).to_pylist(),
        strict=True,
    ):
        options = ranges[partition]
        spot = bisect.bisect_right([high for high, _, _ in options], _key_hash(key))
        _, file_id, base = options[min(spot, len(options) - 1)]
        fids.append(file_id)
        bases.append(base)
    return pa.table(
        [
            new_keys.column(RECORD_KEY),
            new_keys.column(PARTITION_PATH),
            pa.array(fids, pa.string()),
            pa.array(bases, pa.string()),
            pa.nulls(new_keys.num_rows, pa.int64()),
            pa.repeat(True, new_keys.num_rows),
        ],
        schema=_ROUTE_SCHEMA,
    )


def _key_hash(key: str) -> int:
    digest = hashlib.md5(key.encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], "big") % partitioner.HASH_RANGE
