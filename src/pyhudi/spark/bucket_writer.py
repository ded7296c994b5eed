"""Merge-on-read upserts and deletes through `df.write.format("hudi")` with the bucket index.

No index lookup and no shuffle are needed: each task computes its records' buckets and writes
* to an existing bucket's file group: a new log file of its latest slice (tasks never share a log
  file: each uses its own write token);
* to a new bucket: the file id is derived from the instant and partition, so every task agrees on
  it; the first task to claim the bucket (an atomic create) writes its base file, the others add
  their records as log files of the same slice.
"""

from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.control_columns import DELETE
from pyhudi.file_group.log_append import LogSpec, SliceState, append_log
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.index.bucket import bucket_ids
from pyhudi.merge.record_merger import keep_latest_per_key
from pyhudi.model.enums import IOType

CLAIMS_FOLDER = ".hoodie/.aux/.pyhudi-claims"


@dataclass(frozen=True)
class BucketPlan:
    num_buckets: int
    #: (partition, bucket) -> file id of existing bucket file groups
    file_ids: dict[tuple[str, int], str]
    #: file id -> the slice new log files go to
    states: dict[str, SliceState]
    log_spec: LogSpec
    ordering_field: str | None


def new_bucket_file_id(instant_time: str, partition: str, bucket: int) -> str:
    """The same id in every task of one write: bucket number, then a name-based UUID."""
    derived = str(uuid.uuid5(uuid.NAMESPACE_URL, f"pyhudi:{instant_time}:{partition}:{bucket}"))
    return f"{bucket:08d}{derived[8:]}-0"


def claims_folder(spec: WriteTaskSpec) -> str:
    return posixpath.join(spec.base_path, CLAIMS_FOLDER, spec.instant_time)


def write_buckets(
    spec: WriteTaskSpec, plan: BucketPlan, table: pa.Table, pid: int, token: str
) -> list[dict]:
    """Write one task's records (keys, partition paths and delete flags computed) by bucket."""
    if table.num_rows == 0:
        return []
    table = keep_latest_per_key(table, plan.ordering_field)
    buckets = bucket_ids(table.column(RECORD_KEY).combine_chunks(), plan.num_buckets)
    groups = (
        pa.table({"p": table.column(PARTITION_PATH), "b": pa.array(buckets)})
        .group_by(["p", "b"])
        .aggregate([])
    )
    stats = []
    for partition, bucket in zip(groups.column("p").to_pylist(), groups.column("b").to_pylist()):
        mask = pc.and_(
            pc.equal(table.column(PARTITION_PATH), partition), pa.array(buckets == bucket)
        )
        stats.extend(
            _write_bucket(spec, plan, table.filter(mask), partition or "", int(bucket), pid, token)
        )
    return stats


def _write_bucket(
    spec: WriteTaskSpec,
    plan: BucketPlan,
    rows: pa.Table,
    partition: str,
    bucket: int,
    pid: int,
    token: str,
) -> list[dict]:
    deletes = pc.fill_null(rows.column(DELETE), False)
    records = rows.drop_columns([DELETE])
    file_id = plan.file_ids.get((partition, bucket))
    if file_id is not None:
        state = plan.states[file_id]
        return [
            append_log(
                spec,
                plan.log_spec,
                state,
                partition,
                file_id,
                token,
                pid,
                records.filter(pc.invert(deletes)),
                records.filter(deletes),
                num_updates=int(np.count_nonzero(~deletes.to_numpy(zero_copy_only=False))),
            )
        ]
    inserts = records.filter(pc.invert(deletes))
    if inserts.num_rows == 0:
        return []
    file_id = new_bucket_file_id(spec.instant_time, partition, bucket)
    if _claim(spec, partition, bucket):
        writer = BaseFileWriter(
            spec, partition, file_id, token, IOType.CREATE, task_partition_id=pid
        )
        writer.write_new(inserts)
        writer.counts["num_inserts"] = inserts.num_rows
        return [writer.close()]
    state = SliceState(spec.instant_time, None, (), 1)
    row = append_log(
        spec,
        plan.log_spec,
        state,
        partition,
        file_id,
        token,
        pid,
        inserts,
        inserts.slice(0, 0),
        num_updates=0,
    )
    return [row]


def _claim(spec: WriteTaskSpec, partition: str, bucket: int) -> bool:
    name = f"{partition.replace('/', '%2F')}__{bucket:08d}"
    try:
        spec.storage.create_new(posixpath.join(claims_folder(spec), name), b"")
    except FileExistsError:
        return False
    return True
