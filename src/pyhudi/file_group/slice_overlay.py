"""Merge-on-read by position: a file slice's resolved log records against its base file's keys.

Hudi table version 6 logs carry record keys, not base-file positions, so the positions are found
here, in the task that decoded the logs: the base file's record keys (plus the ordering fields under
event-time ordering) are read, and the same per-key rules as `merge_with_base` decide which base rows
the logs replace or delete. The result is small: the surviving log rows and the base row positions
to drop (a delete vector). The reader then scans the base file natively and drops those positions by
`_metadata.row_index`, so no other base column passes through Python and no join is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import RECORD_KEY
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.file_group.log_merge import ordering_columns, overlay, slice_winners
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.table.payload import MergeMode


@dataclass(frozen=True)
class SliceOverlay:
    """What a slice's logs do to its base file: rows to add, base row positions to drop."""

    live: pa.Table  # surviving log rows, in the task's file schema
    dropped_positions: np.ndarray  # int64, ascending row positions in the base file


def slice_overlay(task: SliceTask) -> SliceOverlay:
    winners = slice_winners(task)
    none = np.zeros(0, dtype=np.int64)
    if task.base_file is None or winners.num_rows == 0:
        keep, live = overlay(_no_base(task), winners, MergeMode(task.merge_mode), None)
        return SliceOverlay(live, none)
    mode = MergeMode(task.merge_mode)
    fields = [RECORD_KEY]
    if mode is MergeMode.EVENT_TIME_ORDERING:
        names = task.file_schema.names
        fields += [f for f in ordering_columns(task.ordering_field) if f in names]
    base = read_base_file(task.storage, task.path(task.base_file), columns=fields)
    keep, live = overlay(base, winners, mode, task.ordering_field)
    dropped = np.flatnonzero(~pc.fill_null(keep, True).to_numpy(zero_copy_only=False))
    return SliceOverlay(live, dropped.astype(np.int64))


def _no_base(task: SliceTask) -> pa.Table:
    return pa.table({RECORD_KEY: pa.array([], pa.string())})


def delete_vector_words(positions: np.ndarray, rows: int | None = None) -> np.ndarray:
    """A bitmap of `positions` as int64 words: bit `p & 63` of word `p >> 6` is set for each p."""
    size = (int(positions.max()) + 1 if len(positions) else 0) if rows is None else rows
    words = np.zeros((size + 63) // 64, dtype=np.uint64)
    np.bitwise_or.at(
        words, positions >> 6, np.left_shift(np.uint64(1), (positions & 63).astype(np.uint64))
    )
    return words.view(np.int64)
