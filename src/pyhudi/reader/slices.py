"""Reading one file slice into Arrow (Spark-free): the base file, merged with its log files on
merge-on-read tables. Used by the Python Data Source reader and the merge-on-read Spark path."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.schema import COMMIT_TIME
from pyhudi.model.file import FileSlice
from pyhudi.storage import Storage
from pyhudi.writer.base_file import conform

if TYPE_CHECKING:
    from pyhudi.reader.planner import ReadPlan
    from pyhudi.table.context import TableContext


@dataclass(frozen=True)
class SliceTask:
    """A picklable description of one slice read."""

    storage: Storage
    base_path: str
    partition_path: str
    file_id: str
    base_file: str | None  # relative path
    log_files: tuple[str, ...]  # relative paths, ascending
    file_schema: pa.Schema
    visible_instants: frozenset[str]
    as_of: str | None
    commit_times: frozenset[str] | None = None
    merge_mode: str = "COMMIT_TIME_ORDERING"
    ordering_field: str | None = None
    skip_merge: bool = False
    bootstrap_source: str | None = None
    timeline_start: str | None = None

    def path(self, relative: str) -> str:
        return f"{self.base_path}/{relative}" if relative else self.base_path


#: Merges a slice's log files into its base records; registered by the merge-on-read reader.
LogMerger = Callable[[SliceTask, pa.Table | None], pa.Table]
_log_merger: list[LogMerger] = []


def register_log_merger(merger: LogMerger) -> None:
    _log_merger[:] = [merger]


def read_base(task: SliceTask) -> pa.Table | None:
    if task.base_file is None:
        return None
    with task.storage.open_input(task.path(task.base_file)) as handle:
        table = pq.read_table(handle)
    if task.bootstrap_source is not None:
        from pyhudi.bootstrap.stitch import stitch_bootstrap_rows

        table = stitch_bootstrap_rows(task, table)
    return conform(table, task.file_schema)


def read_slice(task: SliceTask) -> pa.Table:
    base = read_base(task)
    if task.log_files:
        if not _log_merger:
            from pyhudi.reader import merge_on_read  # noqa: F401  (registers the merger)
        table = _log_merger[0](task, base)
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


def slice_tasks(
    ctx: TableContext, plan: ReadPlan, slices: Sequence[FileSlice] | None = None
) -> list[SliceTask]:
    """Picklable read tasks for the plan's slices (all of them by default)."""
    from pyhudi.reader.merge_options import merge_settings

    mode, ordering, skip = merge_settings(ctx, plan)
    tasks = []
    for file_slice in (
        slices if slices is not None else (*plan.base_only, *plan.with_logs, *plan.stitched)
    ):
        tasks.append(
            SliceTask(
                storage=ctx.storage,
                base_path=ctx.base_path,
                partition_path=file_slice.partition_path,
                file_id=file_slice.file_id,
                base_file=file_slice.base_file.relative_path if file_slice.base_file else None,
                log_files=tuple(log.relative_path for log in file_slice.log_files),
                file_schema=plan.file_schema,
                visible_instants=plan.visible_instants,
                as_of=plan.as_of,
                commit_times=plan.commit_times,
                merge_mode=mode,
                ordering_field=ordering,
                skip_merge=skip,
                bootstrap_source=file_slice.base_file.bootstrap_source_path
                if file_slice.base_file
                else None,
                timeline_start=plan.timeline_start,
            )
        )
    return tasks
