"""METADATA_ONLY bootstrap: one skeleton base file per source file, from its key columns only.

A skeleton holds just the five meta columns, its rows in the source file's row order (readers stitch
skeleton row i to source row i): commit time `00000000000001`, sequence numbers, the record key
computed from the key columns, the partition path (the source folder) and the skeleton's own name.
Its file id is a bare UUID (Hudi's `createNewFileIdPfx`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.bootstrap.source import SourceJob
from pyhudi.codec.schema import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    META_ARROW_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
)
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import stats_table
from pyhudi.file_group.stitch import read_source_file, with_partition_columns
from pyhudi.keygen.arrow import record_keys
from pyhudi.keygen.spec import KeyGenSpec
from pyhudi.model.enums import IOType
from pyhudi.model.instant import METADATA_BOOTSTRAP_INSTANT
from pyhudi.storage import Storage

SKELETON_SCHEMA = pa.schema(META_ARROW_FIELDS)


def skeleton_function(
    spec: WriteTaskSpec,
    storage: Storage,
    file_format: str,
    keygen: KeyGenSpec,
    partition_columns: tuple[str, ...],
    jobs: list[SourceJob],
):  # type: ignore[no-untyped-def]
    key_columns = sorted(
        {f.split(".")[0] for f in keygen.record_key_fields} - set(partition_columns)
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        pid, token = task_identity()
        rows = []
        for batch in batches:
            for index in batch.column(0).to_pylist():
                rows.append(
                    _write_skeleton(
                        spec,
                        storage,
                        file_format,
                        keygen,
                        partition_columns,
                        key_columns,
                        jobs[index],
                        pid,
                        token,
                    )
                )
        yield from stats_table(rows).to_batches()

    return run


def _write_skeleton(
    spec,
    storage,
    file_format,
    keygen,
    partition_columns,
    key_columns,
    job: SourceJob,
    pid: int,
    token: str,
) -> dict:  # type: ignore[no-untyped-def]
    keys_table = read_source_file(storage, job.source_path, file_format, columns=key_columns)
    keys_table = with_partition_columns(
        keys_table,
        job.hive_values,
        tuple(c for c in partition_columns if c in keygen.record_key_fields),
    )
    n = keys_table.num_rows
    numbers = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
    skeleton = pa.table(
        {
            COMMIT_TIME: pa.repeat(METADATA_BOOTSTRAP_INSTANT, n).cast(pa.string()),
            COMMIT_SEQNO: pc.binary_join_element_wise(
                pa.repeat(f"{METADATA_BOOTSTRAP_INSTANT}_{pid}_", n), numbers, ""
            ),
            RECORD_KEY: record_keys(keys_table, keygen),
            PARTITION_PATH: pa.repeat(job.partition_path, n).cast(pa.string()),
        }
    )
    writer = BaseFileWriter(
        spec, job.partition_path, job.file_id, token, IOType.CREATE, task_partition_id=pid
    )
    writer.write_existing(skeleton)
    writer.counts["num_inserts"] = n
    return writer.close()
