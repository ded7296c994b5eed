"""Merge-on-read by position: what a file slice's logs do to its base file, in two small passes.

Hudi table version 6 logs carry record keys, not base-file positions, so the positions are found
in a task that reads the logs and the base file's record keys. A read needs them before its query is
planned (they become a filter of the native base scan), while the surviving log rows are only needed
when the query runs, so the work is split:

* `slice_deletes` (before planning): the base row positions the logs replace or delete (a delete
  vector) and, under event-time ordering, the keys of log records that lose to a newer base row.
  Under commit-time ordering a base row is dropped exactly when some log record has its key, so
  when every block counted carries the RECORD_POSITIONS header (and the logs belong to the base
  file's own slice) the delete vector is the union of those positions: no content is read. Else
  only the record keys of the log blocks are decoded (`log_record_keys`), not whole records, and
  matched against the base file's key column.
* `slice_live_rows` (in the query's own tasks): the logs decoded and resolved per key, minus deletes
  and the losing keys: the rows the logs add. Nothing is cached between the two passes, so the query
  needs no checkpoint and its log decoding runs beside the base scan.

The same per-key rules as `merge_with_base` decide (`overlay`), so the snapshot is identical.
Under partial updates (`PartialUpdateAvroPayload`) a base row the logs touch is always replaced
(by the merged record, or by nothing), as under commit-time ordering; the live rows are then the
log records merged over their base rows, so `slice_live_rows` reads the base file too.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.arrow_compute import has_field
from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.codec.log.positions import decode_positions
from pyhudi.codec.log.reader import LocatedBlock
from pyhudi.codec.schema import RECORD_KEY
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.file_group.log_merge import slice_winners
from pyhudi.file_group.log_scan import InstantFilter, log_record_keys, queued_blocks
from pyhudi.file_group.slice_reader import read_base
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import ordering_columns
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, overlay
from pyhudi.model.enums import HeaderMetadataType

_NONE = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class SliceDeletes:
    """What a slice's logs take away: base rows to drop, log keys whose base row stays."""

    dropped_positions: np.ndarray  # int64, ascending row positions in the base file
    lost_keys: tuple[str, ...] = ()  # event-time ordering: log winners older than the base row


def event_time_fields(task: SliceTask) -> list[str]:
    """The ordering fields that decide whether a base row stays (none under commit-time ordering
    and partial updates, where a base row the logs touch never stays as it is)."""
    if MergeMode(task.merge_mode) is not MergeMode.EVENT_TIME_ORDERING:
        return []
    fields = ordering_columns(task.ordering_field)
    return fields if fields and all(has_field(task.file_schema, f) for f in fields) else []


def slice_deletes(task: SliceTask) -> SliceDeletes:
    if task.base_file is None:
        return SliceDeletes(_NONE)
    fields = event_time_fields(task)
    if fields:
        return _event_time_deletes(task, fields)
    positioned = header_positions(task)
    if positioned is not None:
        return SliceDeletes(positioned)
    instants = InstantFilter(task.visible_instants, task.as_of, task.timeline_start)
    blocks = queued_blocks(task.storage, [task.path(p) for p in task.log_files], instants)
    keys = log_record_keys(blocks, task.file_schema, task.ordering_field)
    if len(keys) == 0:
        return SliceDeletes(_NONE)
    base = read_base_file(task.storage, task.path(task.base_file), columns=[RECORD_KEY])
    hit = pc.is_in(base.column(RECORD_KEY), value_set=keys.combine_chunks())
    return SliceDeletes(np.flatnonzero(hit.to_numpy(zero_copy_only=False)).astype(np.int64))


def header_positions(task: SliceTask) -> np.ndarray | None:
    """Under commit-time ordering, the base rows the slice's logs replace or delete, from the
    committed blocks' RECORD_POSITIONS headers alone (no block content is read); None when some
    block has no such header or the logs were not written against the slice's base file."""
    if task.base_file is None or event_time_fields(task) or not logs_of_base_file(task):
        return None
    instants = InstantFilter(task.visible_instants, task.as_of, task.timeline_start)
    paths = [task.path(p) for p in task.log_files]
    return block_positions(queued_blocks(task.storage, paths, instants, read_content=False))


def logs_of_base_file(task: SliceTask) -> bool:
    """Whether every log file of the slice was written against its base file (named with the base
    file's instant): not so for the logs of a slice a pending compaction opened, which are read
    over the previous base file, so positions in them would not be positions in this one."""
    base = parse_base_file(task.partition_path, posixpath.basename(task.base_file or ""))
    if base is None:
        return False
    for path in task.log_files:
        log = parse_log_file(task.partition_path, posixpath.basename(path))
        if log is None or log.base_instant_time != base.instant_time:
            return False
    return True


def block_positions(blocks: list[LocatedBlock]) -> np.ndarray | None:
    """The union of the blocks' RECORD_POSITIONS headers (ascending base row positions), or None
    when some block has none (its records must be matched by key)."""
    found = []
    for block in blocks:
        value = block.header.get(HeaderMetadataType.RECORD_POSITIONS)
        if not value:
            return None
        found.append(decode_positions(value))
    return np.unique(np.concatenate(found)) if found else _NONE


def _event_time_deletes(task: SliceTask, fields: list[str]) -> SliceDeletes:
    winners = slice_winners(task)
    if winners.num_rows == 0:
        return SliceDeletes(_NONE)
    columns = list(dict.fromkeys([RECORD_KEY, *(f.split(".")[0] for f in fields)]))
    base = read_base_file(task.storage, task.path(task.base_file), columns=columns)  # type: ignore[arg-type]
    mode = MergeMode(task.merge_mode)
    keep, live = overlay(base, winners, mode, task.ordering_field, task.ordered_deletes)
    dropped = np.flatnonzero(~pc.fill_null(keep, True).to_numpy(zero_copy_only=False))
    updates = winners.filter(pc.invert(winners.column(DELETED))).column(RECORD_KEY)
    lost = pc.filter(updates, pc.invert(pc.is_in(updates, value_set=live.column(RECORD_KEY))))
    return SliceDeletes(dropped.astype(np.int64), tuple(lost.to_pylist()))


def slice_live_rows(task: SliceTask, lost_keys: tuple[str, ...] = ()) -> pa.Table:
    """The log rows a snapshot of the slice shows (file schema): the resolved log records minus
    deletes and minus `lost_keys` (from `slice_deletes`)."""
    winners = slice_winners(task)
    mode = MergeMode(task.merge_mode)
    if mode is MergeMode.PARTIAL_UPDATE and winners.num_rows and task.base_file is not None:
        base = read_base(task)
        assert base is not None
        return overlay(base, winners, mode, task.ordering_field)[1]
    if winners.num_rows:
        keep = pc.invert(winners.column(DELETED))
        if lost_keys:
            lost = pc.is_in(winners.column(RECORD_KEY), value_set=pa.array(lost_keys, pa.string()))
            keep = pc.and_(keep, pc.invert(lost))
        winners = winners.filter(keep)
    return winners.drop_columns([c for c in (SEQ, DELETED, NATURAL) if c in winners.column_names])


def delete_vector_words(positions: np.ndarray, rows: int | None = None) -> np.ndarray:
    """A bitmap of `positions` as int64 words: bit `p & 63` of word `p >> 6` is set for each p."""
    size = (int(positions.max()) + 1 if len(positions) else 0) if rows is None else rows
    words = np.zeros((size + 63) // 64, dtype=np.uint64)
    np.bitwise_or.at(
        words, positions >> 6, np.left_shift(np.uint64(1), (positions & 63).astype(np.uint64))
    )
    return words.view(np.int64)
