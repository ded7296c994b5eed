"""Merge-on-read of one file slice: its log files scanned (`log_scan`), resolved per key and
overlaid on its base records by the rules of `pyhudi.merge.record_merger`."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import RECORD_KEY
from pyhudi.file_group.log_scan import InstantFilter, log_records, queued_blocks
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import MergeMode
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base, resolve_log


def slice_winners(task: SliceTask) -> pa.Table:
    instants = InstantFilter(task.visible_instants, task.as_of, task.timeline_start)
    blocks = queued_blocks(task.storage, [task.path(p) for p in task.log_files], instants)
    log = log_records(blocks, task.file_schema, task.ordering_field)
    return resolve_log(log, MergeMode(task.merge_mode), task.ordering_field, task.ordered_deletes)


def merge_slice_with_stats(
    task: SliceTask, base: pa.Table | None
) -> tuple[pa.Table, dict[str, int]]:
    """`merge_slice` plus what compaction reports: log records, blocks, updates, inserts, deletes."""
    instants = InstantFilter(task.visible_instants, task.as_of, task.timeline_start)
    blocks = queued_blocks(task.storage, [task.path(p) for p in task.log_files], instants)
    log = log_records(blocks, task.file_schema, task.ordering_field)
    mode = MergeMode(task.merge_mode)
    winners = resolve_log(log, mode, task.ordering_field, task.ordered_deletes)
    merged = merge_with_base(base, winners, mode, task.ordering_field, task.ordered_deletes)
    in_base = (
        pc.is_in(winners.column(RECORD_KEY), value_set=base.column(RECORD_KEY)).to_numpy(
            zero_copy_only=False
        )
        if base is not None and winners.num_rows
        else np.zeros(winners.num_rows, dtype=bool)
    )
    deleted = (
        winners.column(DELETED).to_numpy(zero_copy_only=False)
        if winners.num_rows
        else np.zeros(0, bool)
    )
    stats = {
        "total_log_records": log.num_rows,
        "total_log_blocks": len(blocks),
        "num_updates": int(np.count_nonzero(in_base & ~deleted)),
        "num_inserts": int(np.count_nonzero(~in_base & ~deleted)),
        "num_deletes": int(np.count_nonzero(in_base & deleted)),
    }
    return merged, stats


def merge_slice(task: SliceTask, base: pa.Table | None) -> pa.Table:
    """The snapshot of one file slice: its base records merged with its log records."""
    if task.skip_merge:
        instants = InstantFilter(task.visible_instants, task.as_of, task.timeline_start)
        log = log_records(
            queued_blocks(task.storage, [task.path(p) for p in task.log_files], instants),
            task.file_schema,
            None,
        )
        live = log.filter(pc.invert(log.column(DELETED))).drop_columns([SEQ, DELETED, NATURAL])
        return pa.concat_tables([t for t in (base, live) if t is not None])
    mode = MergeMode(task.merge_mode)
    return merge_with_base(
        base, slice_winners(task), mode, task.ordering_field, task.ordered_deletes
    )
