"""Read tasks for the planned file slices of a read (one picklable `SliceTask` per slice)."""

from __future__ import annotations

from collections.abc import Sequence

from pyhudi.file_group.slice_task import SliceTask
from pyhudi.model.file import FileSlice
from pyhudi.reader.merge_options import merge_settings
from pyhudi.reader.planner import ReadPlan
from pyhudi.table.context import TableContext


def slice_tasks(
    ctx: TableContext, plan: ReadPlan, slices: Sequence[FileSlice] | None = None
) -> list[SliceTask]:
    """Picklable read tasks for the plan's slices (all of them by default)."""
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
                log_files=tuple(
                    log.relative_path for log in file_slice.log_files if not log.is_cdc
                ),
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
                ordered_deletes=ctx.config.version >= 8,
            )
        )
    return tasks
