"""FULL_RECORD bootstrap: the source files rewritten as ordinary Hudi base files at `00000000000002`.

Each task reads whole source files with Arrow, adds the hive folder columns, computes record keys and
partition paths with the key generator and writes base files per partition path (a bulk insert:
no index lookup, no shuffle). Tasks take contiguous runs of files sorted by folder, so one task
writes few partitions and its files are not smaller than the source's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from pyhudi.bootstrap.source import SourceJob
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.bulk_insert import PartitionBuffer, split_by_partition
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import stats_table
from pyhudi.file_group.stitch import read_source_file, with_partition_columns
from pyhudi.keygen.arrow import partition_paths, record_keys
from pyhudi.keygen.arrow_check import check_arrow_partition_values
from pyhudi.keygen.spec import KeyGenSpec
from pyhudi.storage import Storage


def full_record_function(
    spec: WriteTaskSpec,
    storage: Storage,
    file_format: str,
    keygen: KeyGenSpec,
    partition_columns: tuple[str, ...],
    data_schema: pa.Schema,
    jobs: list[SourceJob],
):  # type: ignore[no-untyped-def]
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        buffers: dict[str, PartitionBuffer] = {}
        for batch in batches:
            for index in batch.column(0).to_pylist():
                job = jobs[index]
                table = read_source_file(storage, job.source_path, file_format)
                table = with_partition_columns(table, job.hive_values, partition_columns)
                keys, partitions = record_keys(table, keygen), partition_paths(table, keygen)
                check_arrow_partition_values(table, keys, keygen)
                rows = conform(table, data_schema)
                rows = rows.append_column(RECORD_KEY, keys).append_column(
                    PARTITION_PATH, partitions
                )
                for partition, part in split_by_partition(rows):
                    buffer = buffers.get(partition)
                    if buffer is None:
                        buffer = buffers[partition] = PartitionBuffer(spec, partition, pid, token)
                    buffer.add(part)
        yield from stats_table([row for b in buffers.values() for row in b.close()]).to_batches()

    return run
