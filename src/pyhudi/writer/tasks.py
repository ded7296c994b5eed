"""Task functions that write base files (`mapInArrow` / `applyInArrow` bodies). Arrow only.

Rows reach these functions with their record key and partition path already computed (Spark
expressions) and, for writes into existing file groups, with control columns naming the target:

| column            | meaning                                                         |
|-------------------|-----------------------------------------------------------------|
| `__pyhudi_fid`    | target file id                                                  |
| `__pyhudi_base`   | file name of the base file to merge into (null: a new file group) |
| `__pyhudi_delete` | true for a delete (delete operation or `_hoodie_is_deleted`)     |
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.arrow_compute import last_per_key
from pyhudi.codec.file_names import (
    make_write_token,
    new_file_id,
    new_file_id_prefix,
    parse_base_file,
)
from pyhudi.codec.schema import COMMIT_SEQNO, COMMIT_TIME, PARTITION_PATH, RECORD_KEY
from pyhudi.model.enums import IOType
from pyhudi.table.payload import MergeMode
from pyhudi.writer.base_file import BaseFileWriter, WriteTaskSpec, conform
from pyhudi.writer.stats import stats_table

FID, BASE, DELETE = "__pyhudi_fid", "__pyhudi_base", "__pyhudi_delete"
CONTROL_COLUMNS = (FID, BASE, DELETE)
_BUFFER_BYTES = 64 * 1024 * 1024


_LOCAL = threading.local()


@contextmanager
def local_task(task_id: int) -> Iterator[None]:
    """Run the enclosed work as local task `task_id` (a thread standing in for a Spark task)."""
    _LOCAL.task_id = task_id
    try:
        yield
    finally:
        del _LOCAL.task_id


def task_identity() -> tuple[int, str]:
    """(task partition id, write token) of the running Spark task (or local task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:  # a local task, or outside Spark (unit tests)
        task_id = getattr(_LOCAL, "task_id", 0)
        return task_id, make_write_token(task_id, 0, 0)

    return context.partitionId(), make_write_token(
        context.partitionId(), context.stageId(), context.taskAttemptId()
    )


# ---- bulk insert: no shuffle, one file per partition path per task (rolled over by size) ------


class _PartitionBuffer:
    """Rows of one partition path in a task, written into files rolled over at the target size.

    `preserve_meta`: the rows keep their commit time and sequence number (clustering).
    """

    def __init__(
        self,
        spec: WriteTaskSpec,
        partition: str,
        pid: int,
        token: str,
        *,
        preserve_meta: bool = False,
    ) -> None:
        self.spec, self.partition, self.pid, self.token = spec, partition, pid, token
        self.preserve_meta = preserve_meta
        self.prefix = new_file_id_prefix()
        self.file_index = 0
        self.pending: list[pa.Table] = []
        self.pending_bytes = 0
        self.writer: BaseFileWriter | None = None
        self.finished: list[dict] = []

    def add(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.pending_bytes += table.nbytes
        if self.pending_bytes >= min(_BUFFER_BYTES, self.spec.sizing.max_file_size_bytes):
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        if self.writer is None:
            file_id = new_file_id(self.file_index, self.prefix)
            self.writer = BaseFileWriter(
                self.spec,
                self.partition,
                file_id,
                self.token,
                IOType.CREATE,
                task_partition_id=self.pid,
            )
        table = pa.concat_tables(self.pending)
        if self.preserve_meta:
            self.writer.write_existing(table)
        else:
            self.writer.write_new(table)
        self.writer.counts["num_inserts"] += table.num_rows
        self.pending, self.pending_bytes = [], 0
        if self.writer.bytes_written() >= self.spec.sizing.max_file_size_bytes:
            self.finished.append(self.writer.close())
            self.writer = None
            self.file_index += 1

    def close(self) -> list[dict]:
        self.flush()
        if self.writer is not None:
            self.finished.append(self.writer.close())
            self.writer = None
        return self.finished


def split_by_partition(table: pa.Table) -> Iterator[tuple[str, pa.Table]]:
    encoded = pc.dictionary_encode(table.column(PARTITION_PATH)).combine_chunks()
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    values = encoded.dictionary.to_pylist()
    if len(values) == 1:
        yield values[0], table
        return
    order = np.argsort(indices, kind="stable")
    counts = np.bincount(indices, minlength=len(values))
    ordered = table.take(pa.array(order))
    offset = 0
    for code, count in enumerate(counts):
        if count:
            yield values[code], ordered.slice(offset, int(count))
            offset += int(count)


def bulk_insert_function(
    spec: WriteTaskSpec,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        buffers: dict[str, _PartitionBuffer] = {}
        for batch in batches:
            if batch.num_rows == 0:
                continue
            for partition, part in split_by_partition(pa.Table.from_batches([batch])):
                buffer = buffers.get(partition)
                if buffer is None:
                    buffer = buffers[partition] = _PartitionBuffer(spec, partition, pid, token)
                buffer.add(part)
        rows = [row for buffer in buffers.values() for row in buffer.close()]
        yield from stats_table(rows).to_batches()

    return run


# ---- file-group writes: create new groups or merge into existing base files ------------------


@dataclass(frozen=True)
class MergeSpec:
    merge_mode: MergeMode
    ordering_field: str | None
    #: Pre-combine the group's records (one per key, greatest ordering value) inside the task:
    #: every record of a key reaches the same file group, so no separate shuffle is needed.
    combine: bool = False


ROW = "__pyhudi_row"


def keep_latest_per_key(table: pa.Table, ordering_field: str | None) -> pa.Table:
    """One record per record key: the greatest ordering value wins, ties go to the later record."""
    if table.num_rows < 2 or pc.count_distinct(table.column(RECORD_KEY)).as_py() == table.num_rows:
        return table
    numbered = table.append_column(ROW, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    sort_keys = (
        [(ordering_field, "ascending")]
        if ordering_field and ordering_field in table.column_names
        else []
    )
    return last_per_key(numbered, RECORD_KEY, [*sort_keys, (ROW, "ascending")]).drop_columns([ROW])


def file_group_function(spec: WriteTaskSpec, merge: MergeSpec) -> Callable[[pa.Table], pa.Table]:
    """The `applyInArrow` body for one file group: create it, or merge into its base file."""

    def run(group: pa.Table) -> pa.Table:
        if group.num_rows == 0:
            return stats_table([])
        pid, token = task_identity()
        if merge.combine:
            group = keep_latest_per_key(group, merge.ordering_field)
        file_id = group.column(FID)[0].as_py()
        base_name = group.column(BASE)[0].as_py()
        partition = group.column(PARTITION_PATH)[0].as_py() or ""
        deletes = pc.fill_null(group.column(DELETE), False)
        records = group.drop_columns(list(CONTROL_COLUMNS))
        if base_name is None:
            inserts = records.filter(pc.invert(deletes))
            if inserts.num_rows == 0:
                return stats_table([])
            writer = BaseFileWriter(
                spec, partition, file_id, token, IOType.CREATE, task_partition_id=pid
            )
            writer.write_new(inserts)
            writer.counts["num_inserts"] = inserts.num_rows
            return stats_table([writer.close()])
        return stats_table(
            [_merge(spec, merge, partition, file_id, base_name, records, deletes, pid, token)]
        )

    return run


def _merge(
    spec: WriteTaskSpec,
    merge: MergeSpec,
    partition: str,
    file_id: str,
    base_name: str,
    incoming: pa.Table,
    deletes: pa.ChunkedArray,
    pid: int,
    token: str,
) -> dict:
    base = parse_base_file(partition, base_name)
    prev_commit = base.instant_time if base else "null"
    old = read_existing_base(spec, partition, file_id, base_name)

    incoming = conform(incoming, spec.file_schema)
    plan = plan_merge(old, incoming, deletes, merge)
    writer = BaseFileWriter(
        spec,
        partition,
        file_id,
        token,
        IOType.MERGE,
        task_partition_id=pid,
        prev_commit=prev_commit,
    )
    _write_merged(writer, old, incoming, plan)
    writer.counts.update(
        num_updates=plan.num_updates, num_inserts=plan.num_inserts, num_deletes=plan.num_deletes
    )
    return writer.close()


def read_existing_base(
    spec: WriteTaskSpec, partition: str, file_id: str, base_name: str
) -> pa.Table:
    """An existing base file's records; a bootstrap skeleton is stitched to its source file first."""
    table = pq.read_table(spec.storage.open_input(f"{spec.partition_dir(partition)}/{base_name}"))
    source = spec.bootstrap_sources.get((partition, file_id))
    if source is not None:
        from pyhudi.bootstrap.stitch import stitch_rows

        table = stitch_rows(source, table, partition, spec.file_schema, base_name)
    return conform(table, spec.file_schema)


@dataclass(frozen=True)
class MergePlan:
    """Row positions of the merged file: old rows (kept or replaced in place), then inserts."""

    take_old: np.ndarray  # old row positions kept unchanged, in file order
    take_new: np.ndarray  # incoming row positions written (updates then inserts)
    order: np.ndarray  # final order over concat(kept old, written new)
    num_updates: int
    num_inserts: int
    num_deletes: int


def plan_merge(
    old: pa.Table, incoming: pa.Table, deletes: pa.ChunkedArray, merge: MergeSpec
) -> MergePlan:
    """Positions of the merged file. Several incoming records of one key collapse to the last one,
    as Hudi's merge handle keys incoming records by record key."""
    last = _last_occurrences(incoming.column(RECORD_KEY))
    if last is None:
        return _plan_merge_unique(old, incoming, deletes, merge)
    taken = pa.array(last)
    plan = _plan_merge_unique(old, incoming.take(taken), deletes.take(taken), merge)
    return MergePlan(
        plan.take_old,
        last[plan.take_new],
        plan.order,
        plan.num_updates,
        plan.num_inserts,
        plan.num_deletes,
    )


def _last_occurrences(keys: pa.ChunkedArray) -> np.ndarray | None:
    """Input positions of the last record of each key (in input order), or None if keys are unique."""
    n = len(keys)
    if n < 2 or pc.count_distinct(keys).as_py() == n:
        return None
    reversed_keys = keys.take(pa.array(np.arange(n - 1, -1, -1)))
    first_in_reverse = pc.index_in(
        pc.unique(reversed_keys), value_set=reversed_keys.combine_chunks()
    )
    return np.sort(n - 1 - first_in_reverse.to_numpy(zero_copy_only=False).astype(np.int64))


def _plan_merge_unique(
    old: pa.Table, incoming: pa.Table, deletes: pa.ChunkedArray, merge: MergeSpec
) -> MergePlan:
    old_keys, new_keys = old.column(RECORD_KEY), incoming.column(RECORD_KEY)
    match = pc.index_in(old_keys, value_set=new_keys.combine_chunks())
    matched = pc.is_valid(match).to_numpy(zero_copy_only=False).astype(bool)
    match_idx = pc.fill_null(match, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    is_delete = deletes.to_numpy(zero_copy_only=False).astype(bool)
    wins = matched.copy()
    if merge.merge_mode is MergeMode.EVENT_TIME_ORDERING and merge.ordering_field and matched.any():
        wins &= _incoming_wins(old, incoming, match_idx, matched, merge.ordering_field)
    replaced = wins & ~is_delete[np.clip(match_idx, 0, None)] if len(is_delete) else wins
    dropped = (
        wins & is_delete[np.clip(match_idx, 0, None)] if len(is_delete) else np.zeros_like(wins)
    )
    old_positions = np.arange(old.num_rows)
    in_old = np.zeros(incoming.num_rows, dtype=bool)
    in_old[match_idx[matched]] = True
    insert_positions = np.flatnonzero(~in_old & ~is_delete)
    # Final layout: every old row position, replaced ones pointing at their incoming row.
    keep_old = old_positions[~replaced & ~dropped]
    update_new = match_idx[replaced]
    written_new = np.concatenate([update_new, insert_positions]).astype(np.int64)
    slot_old = np.full(old.num_rows, -1, dtype=np.int64)
    slot_old[keep_old] = np.arange(len(keep_old))
    slot_old[replaced] = len(keep_old) + np.arange(len(update_new))
    in_file_order = slot_old[~dropped]
    inserts = len(keep_old) + len(update_new) + np.arange(len(insert_positions))
    return MergePlan(
        take_old=keep_old,
        take_new=written_new,
        order=np.concatenate([in_file_order, inserts]).astype(np.int64),
        num_updates=len(update_new),
        num_inserts=len(insert_positions),
        num_deletes=int(dropped.sum()),
    )


def _incoming_wins(
    old: pa.Table, incoming: pa.Table, match_idx: np.ndarray, matched: np.ndarray, field: str
) -> np.ndarray:
    """Event-time ordering: the incoming record wins unless its ordering value is smaller."""
    if field not in old.column_names or field not in incoming.column_names:
        return np.ones(len(matched), dtype=bool)
    old_values = old.column(field).combine_chunks()
    new_values = incoming.column(field).combine_chunks().take(pa.array(np.clip(match_idx, 0, None)))
    if old_values.type != new_values.type:
        new_values = new_values.cast(old_values.type)
    stale = pc.fill_null(pc.less(new_values, old_values), False).to_numpy(zero_copy_only=False)
    return ~stale.astype(bool)


def _write_merged(
    writer: BaseFileWriter, old: pa.Table, incoming: pa.Table, plan: MergePlan
) -> None:
    kept = old.take(pa.array(plan.take_old, pa.int64()))
    new = incoming.take(pa.array(plan.take_new, pa.int64()))
    if len(plan.order) == len(plan.take_old) + len(plan.take_new) and _is_identity_split(plan):
        writer.write_existing(kept)
        writer.write_new(new)
        return
    # Interleave to keep file order: new rows get this instant's commit time and sequence numbers
    # (numbered by their position in the file), carried-over rows keep theirs.
    instant, n = writer.spec.instant_time, len(plan.order)
    new = new.set_column(
        new.column_names.index(COMMIT_TIME),
        COMMIT_TIME,
        pa.repeat(instant, new.num_rows).cast(pa.string()),
    )
    combined = pa.concat_tables([kept, new]).take(pa.array(plan.order, pa.int64()))
    is_new = pa.array(plan.order >= len(plan.take_old))
    positions = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
    fresh = pc.binary_join_element_wise(
        pa.repeat(f"{instant}_{writer.task_partition_id}_", n), positions, ""
    )
    seqnos = pc.if_else(is_new, fresh, combined.column(COMMIT_SEQNO).combine_chunks())
    combined = combined.set_column(combined.column_names.index(COMMIT_SEQNO), COMMIT_SEQNO, seqnos)
    writer.write_existing(combined)


def _is_identity_split(plan: MergePlan) -> bool:
    """True when the final order is simply all kept old rows, then all new rows."""
    return bool(np.array_equal(plan.order, np.arange(len(plan.order))))
