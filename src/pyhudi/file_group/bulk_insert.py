"""Bulk insert task functions: no shuffle, one file per partition path per task (rolled over by
size); bucket-indexed loads: one file group per bucket, its id chosen before the task."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.file_names import (
    new_bucket_file_id,
    new_file_id,
    new_file_id_prefix,
)
from pyhudi.codec.schema import PARTITION_PATH
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import refused_row, stats_table
from pyhudi.model.enums import IOType

_BUFFER_BYTES = 64 * 1024 * 1024


class PartitionBuffer:
    """Rows of one partition path in a task, written into files rolled over at the target size.

    `preserve_meta`: the rows keep their commit time and sequence number (clustering).
    `file_id`: the one file group the rows go to (a bucket of the bucket index): never rolled over.
    """

    def __init__(
        self,
        spec: WriteTaskSpec,
        partition: str,
        pid: int,
        token: str,
        *,
        preserve_meta: bool = False,
        file_id: str | None = None,
    ) -> None:
        self.spec, self.partition, self.pid, self.token = spec, partition, pid, token
        self.preserve_meta = preserve_meta
        self.fixed_file_id = file_id
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
            file_id = self.fixed_file_id or new_file_id(self.file_index, self.prefix)
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
        if (
            self.fixed_file_id is None
            and self.writer.bytes_written() >= self.spec.sizing.max_file_size_bytes
        ):
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
    return split_by(table, PARTITION_PATH)


def split_by(table: pa.Table, column: str) -> Iterator[tuple[Any, pa.Table]]:
    """(value, rows) for each distinct value of a column, rows in their order."""
    encoded = pc.dictionary_encode(table.column(column)).combine_chunks()
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
        buffers: dict[str, PartitionBuffer] = {}
        refused: set[str] = set()
        for batch in batches:
            if batch.num_rows == 0:
                continue
            for partition, part in split_by_partition(pa.Table.from_batches([batch])):
                buffer = buffers.get(partition)
                if buffer is None:
                    if spec.refuses(partition):
                        refused.add(partition)
                        continue
                    buffer = buffers[partition] = PartitionBuffer(spec, partition, pid, token)
                buffer.add(part)
        rows = [row for buffer in buffers.values() for row in buffer.close()]
        rows += [refused_row(partition) for partition in sorted(refused)]
        yield from stats_table(rows).to_batches()

    return run


def bucket_load_function(
    spec: WriteTaskSpec, bucket_column: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Rows of new buckets (`bucket_column`: the bucket number), each (partition, bucket) entirely
    in this task (shuffled by both), streamed into one new base file per bucket, named by
    `new_bucket_file_id`: the incoming batches are gathered up to `_SPLIT_BYTES`, split by
    (partition, bucket) in one sort and one take, and buffered per bucket (at most `_BUFFER_BYTES`
    in all, the largest buffer written as a row group first), never materialised as one group."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        buffers: dict[tuple[str, int], PartitionBuffer] = {}
        refused: set[str] = set()

        def add(rows: pa.Table) -> None:
            for (partition, bucket), bucket_rows in split_by_bucket(rows, bucket_column):
                buffer = buffers.get((partition, bucket))
                if buffer is None and spec.refuses(partition):
                    refused.add(partition)
                    continue
                if buffer is None:
                    file_id = new_bucket_file_id(spec.instant_time, partition or "", bucket)
                    buffer = PartitionBuffer(spec, partition, pid, token, file_id=file_id)
                    buffers[(partition, bucket)] = buffer
                buffer.add(bucket_rows.drop_columns([bucket_column]))
            _bound_buffers(buffers.values())

        for gathered in _gathered(batches):
            add(gathered)
        stats = [row for buffer in buffers.values() for row in buffer.close()]
        stats += [refused_row(partition) for partition in sorted(refused)]
        yield from stats_table(stats).to_batches()

    return run


_SPLIT_BYTES = 16 * 1024 * 1024


def _gathered(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.Table]:
    """The batches as tables of about `_SPLIT_BYTES` (fewer, larger splits)."""
    pending: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.num_rows:
            pending.append(batch)
            size += batch.nbytes
        if size >= _SPLIT_BYTES:
            yield pa.Table.from_batches(pending)
            pending, size = [], 0
    if pending:
        yield pa.Table.from_batches(pending)


def split_by_bucket(
    table: pa.Table, bucket_column: str
) -> Iterator[tuple[tuple[str, int], pa.Table]]:
    """((partition path, bucket), rows) for each bucket in `table`, rows in their order: one
    stable sort of the combined (partition, bucket) code and one take."""
    encoded = pc.dictionary_encode(table.column(PARTITION_PATH)).combine_chunks()
    partitions = encoded.dictionary.to_pylist()
    buckets = table.column(bucket_column).to_numpy().astype(np.int64)
    width = int(buckets.max()) + 1
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) * width + buckets
    counts = np.bincount(codes, minlength=len(partitions) * width)
    present = np.flatnonzero(counts)
    if len(present) == 1:
        first = int(present[0])
        yield (partitions[first // width], first % width), table
        return
    ordered = table.take(pa.array(np.argsort(codes, kind="stable")))
    offset = 0
    for code in present.tolist():
        count = int(counts[code])
        yield (partitions[code // width], code % width), ordered.slice(offset, count)
        offset += count


def _bound_buffers(buffers: Iterable[PartitionBuffer]) -> None:
    pending = sorted(buffers, key=lambda b: b.pending_bytes, reverse=True)
    total = sum(b.pending_bytes for b in pending)
    for buffer in pending:
        if total < _BUFFER_BYTES:
            return
        total -= buffer.pending_bytes
        buffer.flush()
