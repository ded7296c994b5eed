"""Reading one file slice into Arrow (Spark-free): the base file (stitched to its bootstrap source
file), merged with its log files on merge-on-read tables. Used by the Python Data Source reader,
the Arrow read path and compaction."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import COMMIT_TIME
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.file_group.log_merge import merge_slice
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.file_group.stitch import stitch_bootstrap_rows


def read_base(task: SliceTask) -> pa.Table | None:
    if task.base_file is None:
        return None
    table = read_base_file(task.storage, task.path(task.base_file))
    if task.bootstrap_source is not None:
        table = stitch_bootstrap_rows(task, table)
    return conform(table, task.file_schema)


def read_slice(task: SliceTask) -> pa.Table:
    base = read_base(task)
    if task.log_files:
        table = merge_slice(task, base)
    else:
        table = base if base is not None else task.file_schema.empty_table()
    if task.commit_times is not None:
        table = table.filter(
            pc.is_in(
                table.column(COMMIT_TIME),
                value_set=pa.array(sorted(task.commit_times), pa.string()),
            )
        )
    return table


def read_slice_batches(
    task: SliceTask, target: pa.Schema, max_rows: int = 65536
) -> Iterator[pa.RecordBatch]:
    """The slice as record batches of exactly `target` (Spark's Arrow schema)."""
    table = conform(read_slice(task), target)
    yield from table.to_batches(max_chunksize=max_rows)
