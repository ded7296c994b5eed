"""Record merging in Arrow: log records resolved per key, overlaid on base records, and incoming
records combined per key (§5.13). Ordering values compare by the one rule of `ordering.py`.

Two log versions of a key (log records, log deletes) meet in the log scan; the scan's result then
meets the base record. Which rule applies depends on the table version: version 6 follows Hudi
0.15's payloads, versions 8 and 9 (`ordered_deletes`) Hudi 1.2's merge modes.

In the log scan (`resolve_log`):
* version 6, every payload, `OverwriteWithLatestAvroPayload` too (Hudi 0.15
  `HoodieMergedLogRecordScanner`: records combine by the payload's `preCombine`, deletes by
  `processNextDeletedRecord`): a delete resets the key unless (ordered, not natural-order 0) the
  key's current log version has a greater ordering value (`applied_deletes`); after it, the
  version with the greatest ordering value wins (ties: the later one);
* version 8/9 EVENT_TIME_ORDERING (Hudi 1.2 `EventTimeRecordMerger`): records and deletes
  carrying ordering values compete alike, the greatest wins (ties: the later one); only a
  natural-order delete resets the key, and ordered deletes right after it (before any record)
  are ignored;
* version 8/9 COMMIT_TIME_ORDERING (Hudi 1.2 `CommitTimeRecordMerger`): the latest log version wins.
Against the base record (`overlay`):
* COMMIT_TIME_ORDERING (`OverwriteWithLatestAvroPayload`): the log's version wins (a delete
  removes the key), whatever the ordering values;
* EVENT_TIME_ORDERING (`DefaultHoodieRecordPayload`): the base wins when its ordering value is
  greater (a stale update loses); a delete always wins on version 6 (Hudi 0.15 deletes the base
  record on a stale `_hoodie_is_deleted`), on 8/9 only a natural-order one does.
* PARTIAL_UPDATE (`PartialUpdateAvroPayload`, version 6): deletes reset a key as under event-time
  ordering; the records after a key's last reset fold oldest first by `partial.precombine`, and
  the result merges over the base record by `partial.combine` (a base record matched by the log
  is always replaced: by the merged record, or by nothing when it is deleted).
Log versions sort by the ordering rule (nulls first). Everything is vectorised Arrow: sorting and
run detection, no per-record Python.

A table of log records (`file_group/log_scan.py` builds it) carries three columns besides the
file schema: `SEQ` (the record's position in the scan, oldest first), `DELETED` (a delete block's
key or a `_hoodie_is_deleted` record) and `NATURAL` (a delete with natural ordering: always applies).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.arrow_compute import field_values, has_field, last_per_key, with_sort_columns
from pyhudi.codec.schema import IS_DELETED_FIELD, RECORD_KEY
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import base_stays_arrow, earlier_stays_arrow, ordering_columns
from pyhudi.merge.partial import ARROW_FIELDS, combine, precombine

SEQ, DELETED, NATURAL = "__pyhudi_seq", "__pyhudi_delete", "__pyhudi_natural"


def _last_per_key(table: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Table:
    return last_per_key(table, RECORD_KEY, sort_keys)


def _has(table: pa.Table, fields: list[str]) -> bool:
    return all(has_field(table.schema, f) for f in fields)


def _values(table: pa.Table, field: str) -> pa.ChunkedArray:
    values = field_values(table, field)
    assert values is not None, field  # checked by `_has`
    return values


def resolve_log(
    log: pa.Table, mode: MergeMode, ordering: str | None, ordered_deletes: bool = False
) -> pa.Table:
    """One row per key: the log's final version of it (a row with `__pyhudi_delete` = delete
    marker). `ordered_deletes`: table version 8 or 9 (Hudi 1.2's rules; else Hudi 0.15's)."""
    if log.num_rows == 0:
        return log
    fields = ordering_columns(ordering)
    if mode is MergeMode.PARTIAL_UPDATE:
        return _resolve_partial(log, fields if _has(log, fields) else [])
    if not mode.orders_log_versions(ordered_deletes) or not fields or not _has(log, fields):
        return _last_per_key(log, [(SEQ, "ascending")])
    if ordered_deletes:
        return _resolve_merge_mode(log, fields)
    resets = applied_deletes(log, fields)
    candidates = _after_last_reset(log, resets)
    sortable, columns = with_sort_columns(candidates, fields)  # nested fields (`a.b`) as columns
    winners = _last_per_key(sortable, [*((c, "ascending") for c in columns), (SEQ, "ascending")])
    return _with_delete_markers(winners.select(candidates.column_names), log, resets)


def _resolve_merge_mode(log: pa.Table, fields: list[str]) -> pa.Table:
    """`resolve_log` under Hudi 1.2's EVENT_TIME_ORDERING (`EventTimeRecordMerger`): after a
    key's last natural-order delete, the greatest of its records and ordered deletes (ties: the
    later), leaving out the ordered deletes before the first record after that natural delete
    (a natural delete marker keeps them out); a key left with none: its last natural delete."""
    deleted = _deleted(log)
    natural = deleted & log.column(NATURAL).to_numpy(zero_copy_only=False).astype(bool)
    keys = log.column(RECORD_KEY)
    ids = pc.index_in(keys, value_set=pc.unique(keys)).to_numpy(zero_copy_only=False)
    seq = log.column(SEQ).combine_chunks().to_numpy(zero_copy_only=False)
    n_keys = int(ids.max()) + 1
    last_natural = np.full(n_keys, -1, dtype=np.int64)
    np.maximum.at(last_natural, ids[natural], seq[natural])
    after = seq > last_natural[ids]
    first_record = np.full(n_keys, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_record, ids[after & ~deleted], seq[after & ~deleted])
    shadowed = deleted & (last_natural[ids] >= 0) & (seq < first_record[ids])
    sortable, columns = with_sort_columns(log.filter(pa.array(after & ~shadowed)), fields)
    winners = _last_per_key(sortable, [*((c, "ascending") for c in columns), (SEQ, "ascending")])
    return _with_delete_markers(winners.select(log.column_names), log, natural)


def _resolve_partial(log: pa.Table, fields: list[str]) -> pa.Table:
    """`resolve_log` under PARTIAL_UPDATE: deletes that apply reset the key (as under event-time
    ordering), the records after a key's last reset fold oldest first."""
    # No ordering field: every delete applies (natural order).
    resets = applied_deletes(log, fields) if fields else _deleted(log).copy()
    candidates = _after_last_reset(log, resets)
    names = [c for c in log.column_names if c not in (SEQ, DELETED, NATURAL)]
    folded, _ = fold_versions(candidates, names, fields, np.zeros(candidates.num_rows, dtype=bool))
    return _with_delete_markers(folded, log, resets)


def _deleted(log: pa.Table) -> np.ndarray:
    return log.column(DELETED).combine_chunks().to_numpy(zero_copy_only=False).astype(bool)


def _after_last_reset(log: pa.Table, resets: np.ndarray) -> pa.Table:
    """The log's records (deletes left out) written after their key's last applied delete."""
    reset_seq = pc.if_else(pa.array(resets), log.column(SEQ), -1)
    grouped = (
        pa.table({RECORD_KEY: log.column(RECORD_KEY), "r": reset_seq})
        .group_by(RECORD_KEY)
        .aggregate([("r", "max")])
    )
    position = pc.index_in(log.column(RECORD_KEY), value_set=grouped.column(RECORD_KEY))
    after_reset = pc.greater(log.column(SEQ), grouped.column("r_max").take(position))
    return log.filter(pc.and_(after_reset, pa.array(~_deleted(log))))


def _with_delete_markers(resolved: pa.Table, log: pa.Table, resets: np.ndarray) -> pa.Table:
    """`resolved` plus a delete marker (the last applied delete) for each key it has no row of."""
    deleted_keys = log.filter(pa.array(resets))
    if deleted_keys.num_rows == 0:
        return resolved
    markers = _last_per_key(deleted_keys, [(SEQ, "ascending")])
    markers = markers.filter(
        pc.invert(pc.is_in(markers.column(RECORD_KEY), value_set=resolved.column(RECORD_KEY)))
    )
    return pa.concat_tables([resolved, markers])


def fold_versions(
    table: pa.Table, names: list[str], fields: list[str], deleted: np.ndarray
) -> tuple[pa.Table, np.ndarray]:
    """Each key's rows (oldest first, in `table` order) precombined into one row by
    `partial.precombine` over the columns `names` (other columns: the later row's), with the
    delete flag of each result. One vectorised step per version depth of the deepest key."""
    n = table.num_rows
    if n < 2:
        return table, deleted
    keys = table.column(RECORD_KEY)
    ids = pc.index_in(keys, value_set=pc.unique(keys)).to_numpy(zero_copy_only=False)
    order = np.lexsort((np.arange(n), ids))
    sorted_ids = ids[order]
    starts = np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]
    depth = np.arange(n) - np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    first = order[depth == 0]
    slot_of_key = np.empty(int(ids.max()) + 1, dtype=np.int64)
    slot_of_key[ids[first]] = np.arange(len(first))
    acc, acc_deleted = table.take(pa.array(first)), deleted[first]
    for level in range(1, int(depth.max()) + 1):
        rows = order[depth == level]
        slots = slot_of_key[ids[rows]]
        merged, gone = _precombine_rows(
            acc.take(pa.array(slots)),
            table.take(pa.array(rows)),
            names,
            fields,
            (acc_deleted[slots], deleted[rows]),
        )
        picks = np.arange(acc.num_rows, dtype=np.int64)
        picks[slots] = acc.num_rows + np.arange(len(slots))
        acc = pa.concat_tables([acc, merged]).take(pa.array(picks))
        acc_deleted = acc_deleted.copy()
        acc_deleted[slots] = gone
    return acc, acc_deleted


def _precombine_rows(
    earlier: pa.Table,
    later: pa.Table,
    names: list[str],
    fields: list[str],
    deleted: tuple[np.ndarray, np.ndarray],
) -> tuple[pa.Table, np.ndarray]:
    merged, gone = precombine(
        ARROW_FIELDS,
        names,
        _arrays(earlier, names),
        _arrays(later, names),
        (_ordering(earlier, fields), _ordering(later, fields)),
        (pa.array(deleted[0]), pa.array(deleted[1])),
    )
    out = later
    for name, values in merged.items():
        out = out.set_column(out.column_names.index(name), name, values)
    return out, gone.to_numpy(zero_copy_only=False).astype(bool)


def _arrays(table: pa.Table, names: list[str]) -> dict[str, pa.Array]:
    return {name: table.column(name).combine_chunks() for name in names}


def _ordering(table: pa.Table, fields: list[str]) -> list[pa.Array]:
    return [_values(table, f).combine_chunks() for f in fields]


def applied_deletes(log: pa.Table, fields: list[str]) -> np.ndarray:
    """Which delete rows of `log` apply under event-time ordering (Hudi 0.15
    `HoodieMergedLogRecordScanner`, records applied oldest first):
    * a natural-order delete (ordering 0) always applies;
    * any other delete applies unless the key's current version is a record whose ordering value
      is greater (`choosePrev`): that is the greatest record (ties: the later) since the last
      delete that applied, or none;
    * a delete that applied is a marker any later record replaces (`preCombine` takes the newer
      payload over an empty one), so it resets the key like a natural-order delete.
    A delete's outcome depends on the deletes before it: each round decides every key's earliest
    undecided delete, so there are as many rounds as one key has ordered deletes (usually one)."""
    deleted = log.column(DELETED).combine_chunks().to_numpy(zero_copy_only=False).astype(bool)
    natural = log.column(NATURAL).combine_chunks().to_numpy(zero_copy_only=False).astype(bool)
    applied = deleted & natural
    pending = deleted & ~natural
    if not pending.any():
        return applied
    keys = log.column(RECORD_KEY)
    key_ids = pc.index_in(keys, value_set=pc.unique(keys)).to_numpy(zero_copy_only=False)
    seq = log.column(SEQ).combine_chunks().to_numpy(zero_copy_only=False)
    n_keys = int(key_ids.max()) + 1
    sortable, columns = with_sort_columns(log, fields)
    while pending.any():
        rows = np.nonzero(pending)[0]
        rows = rows[np.lexsort((seq[rows], key_ids[rows]))]
        first = rows[np.unique(key_ids[rows], return_index=True)[1]]  # each key's earliest
        delete_seq = np.full(n_keys, -1, dtype=np.int64)
        delete_seq[key_ids[first]] = seq[first]
        # The key's last applied delete before its undecided one (-1: none).
        last_applied = np.full(n_keys, -1, dtype=np.int64)
        before = applied & (seq < delete_seq[key_ids])
        np.maximum.at(last_applied, key_ids[before], seq[before])
        between = (
            ~deleted
            & (delete_seq[key_ids] >= 0)
            & (seq > last_applied[key_ids])
            & (seq < delete_seq[key_ids])
        )
        outcome = np.ones(n_keys, dtype=bool)  # no record since the last delete: it applies
        if between.any():
            current = _last_per_key(
                sortable.filter(pa.array(between)),
                [*((c, "ascending") for c in columns), (SEQ, "ascending")],
            )
            current_ids = pc.index_in(
                current.column(RECORD_KEY), value_set=pc.unique(keys)
            ).to_numpy(zero_copy_only=False)
            row_of_key = np.full(n_keys, -1, dtype=np.int64)
            row_of_key[key_ids[first]] = first
            against = sortable.take(pa.array(row_of_key[current_ids]))
            stays = earlier_stays_arrow(
                [current.column(c).combine_chunks() for c in columns],
                [against.column(c).combine_chunks() for c in columns],
            )
            outcome[current_ids] = ~stays.to_numpy(zero_copy_only=False)
        applied[first] = outcome[key_ids[first]]
        pending[first] = False
    return applied


def merge_with_base(
    base: pa.Table | None,
    winners: pa.Table,
    mode: MergeMode,
    ordering: str | None,
    ordered_deletes: bool = False,
) -> pa.Table:
    """Base records overlaid with the resolved log records (winners carry the delete flag);
    `ordered_deletes`: as in `overlay`."""
    if base is None or base.num_rows == 0:
        live = winners.filter(pc.invert(winners.column(DELETED))) if winners.num_rows else winners
        return live.drop_columns([c for c in (SEQ, DELETED, NATURAL) if c in live.column_names])
    keep_base, survivors = overlay(base, winners, mode, ordering, ordered_deletes)
    kept = base.filter(keep_base)
    return pa.concat_tables([kept, survivors.select(kept.column_names)])


def overlay(
    base: pa.Table,
    winners: pa.Table,
    mode: MergeMode,
    ordering: str | None,
    ordered_deletes: bool = False,
) -> tuple[pa.Array, pa.Table]:
    """(which base rows stay, the log rows that replace or add to them, without the flag columns).

    Event-time ordering, a delete that won the log against the base record: on table version 6
    it wins whatever the ordering values (Hudi 0.15); with `ordered_deletes` (versions 8 and 9)
    only a natural-order delete does, and one carrying ordering values loses to a base record
    with greater ones, as any update would (Hudi 1.2).

    `base` needs only the record key (and, for event-time ordering, the ordering fields): the
    positional read (`slice_overlay`) passes just those columns.
    """
    if winners.num_rows == 0:
        return pa.repeat(True, base.num_rows), winners.drop_columns([SEQ, DELETED, NATURAL])
    position = pc.index_in(base.column(RECORD_KEY), value_set=winners.column(RECORD_KEY))
    matched = pc.is_valid(position)
    keep_base = pc.invert(matched)
    if mode is MergeMode.PARTIAL_UPDATE:
        return keep_base, _partial_survivors(base, winners, position, ordering)
    drop_winner = np.zeros(winners.num_rows, dtype=bool)
    fields = ordering_columns(ordering)
    if mode is MergeMode.EVENT_TIME_ORDERING and fields and _has(base, fields):
        at = pc.fill_null(position, 0)
        theirs = [_values(winners, f).combine_chunks().take(at) for f in fields]
        # A delete that won the log beats the base record whatever its ordering value (Hudi 0.15:
        # the log scanner compares a delete only with earlier log records; merged with the base,
        # a delete payload wins, in the snapshot and in compaction). Hudi 1.2: natural-order ones.
        forced = winners.column(DELETED).combine_chunks()
        if ordered_deletes:
            forced = pc.and_(forced, winners.column(NATURAL).combine_chunks())
        deleted = forced.take(at)
        stays = base_stays_arrow([_values(base, f) for f in fields], theirs, deleted)
        base_wins = pc.and_(matched, stays)
        keep_base = pc.or_(keep_base, base_wins)
        lost = pc.filter(position, base_wins).to_numpy(zero_copy_only=False).astype(np.int64)
        drop_winner[lost] = True
    survivors = winners.filter(
        pa.array(~drop_winner & ~winners.column(DELETED).to_numpy(zero_copy_only=False))
    )
    return keep_base, survivors.drop_columns([SEQ, DELETED, NATURAL])


def _partial_survivors(
    base: pa.Table, winners: pa.Table, position: pa.Array, ordering: str | None
) -> pa.Table:
    """PARTIAL_UPDATE: the log winners merged over the base records they match (`partial.combine`),
    and the unmatched ones, minus deletes; in the winners' columns without the flag columns."""
    names = [c for c in winners.column_names if c not in (SEQ, DELETED, NATURAL)]
    fields = [f for f in ordering_columns(ordering) if has_field(base.schema, f)]
    if not _has(winners, fields):
        fields = []
    matched = pc.is_valid(position)
    old = base.filter(matched)
    at = pc.filter(position, matched)
    new = winners.take(at)
    merged, gone = combine(
        ARROW_FIELDS,
        names,
        _arrays(old, names),
        _arrays(new, names),
        (_ordering(old, fields), _ordering(new, fields)),
        (_delete_records(old), new.column(DELETED).combine_chunks()),
    )
    updated = pa.table(merged).filter(pc.invert(gone))
    unmatched = np.ones(winners.num_rows, dtype=bool)
    unmatched[at.to_numpy(zero_copy_only=False).astype(np.int64)] = False
    added = winners.filter(
        pa.array(unmatched & ~winners.column(DELETED).to_numpy(zero_copy_only=False))
    ).select(names)
    return pa.concat_tables([updated.select(names), added])


def _delete_records(table: pa.Table) -> pa.Array:
    """Where a stored record's `_hoodie_is_deleted` is true (never null)."""
    if IS_DELETED_FIELD not in table.column_names:
        return pa.repeat(False, table.num_rows)
    return pc.fill_null(table.column(IS_DELETED_FIELD).combine_chunks().cast(pa.bool_()), False)


ROW = "__pyhudi_row"


def keep_latest_per_key(
    table: pa.Table,
    ordering_field: str | None,
    mode: MergeMode = MergeMode.EVENT_TIME_ORDERING,
    delete_column: str | None = None,
) -> pa.Table:
    """One record per record key: the greatest ordering value (tuple of values, with several
    ordering fields) wins, ties go to the later record.
    PARTIAL_UPDATE: each key's records fold in input order (`partial.precombine`), the delete
    flag in `delete_column` (if any) updated to the result's."""
    if table.num_rows < 2 or pc.count_distinct(table.column(RECORD_KEY)).as_py() == table.num_rows:
        return table
    if mode is MergeMode.PARTIAL_UPDATE:
        return _fold_incoming(table, ordering_field, delete_column)
    numbered = table.append_column(ROW, pa.array(np.arange(table.num_rows, dtype=np.int64)))
    fields = ordering_columns(ordering_field)  # several: compared as a tuple, in order
    if not _has(table, fields):
        fields = []
    numbered, sort_columns = with_sort_columns(numbered, fields)
    sort_keys = [(c, "ascending") for c in sort_columns]
    latest = last_per_key(numbered, RECORD_KEY, [*sort_keys, (ROW, "ascending")])
    return latest.select(table.column_names)


def _fold_incoming(
    table: pa.Table, ordering_field: str | None, delete_column: str | None
) -> pa.Table:
    fields = [f for f in ordering_columns(ordering_field) if has_field(table.schema, f)]
    has_flag = delete_column is not None and delete_column in table.column_names
    deleted = (
        pc.fill_null(table.column(delete_column), False).to_numpy(zero_copy_only=False).astype(bool)
        if has_flag
        else np.zeros(table.num_rows, dtype=bool)
    )
    names = [c for c in table.column_names if c != delete_column]
    folded, gone = fold_versions(table, names, fields, deleted)
    if has_flag:
        index = folded.column_names.index(delete_column)
        folded = folded.set_column(index, delete_column, pa.array(gone))
    return folded


def merge_over_stored(
    stored: pa.Table, incoming: pa.Table, deletes: pa.ChunkedArray, ordering: str | None
) -> tuple[pa.Table, pa.ChunkedArray]:
    """PARTIAL_UPDATE copy-on-write: each incoming record that has a stored version becomes the
    two merged (`partial.combine`), its delete flag the result's; both tables in the same columns."""
    position = pc.index_in(incoming.column(RECORD_KEY), value_set=stored.column(RECORD_KEY))
    matched = pc.is_valid(position)
    if not pc.any(matched).as_py():
        return incoming, deletes
    fields = [f for f in ordering_columns(ordering) if has_field(stored.schema, f)]
    if not _has(incoming, fields):
        fields = []
    rows = pc.indices_nonzero(matched)
    old = stored.take(pc.filter(position, matched))
    new = incoming.take(rows)
    names = list(incoming.column_names)
    merged, gone = combine(
        ARROW_FIELDS,
        names,
        _arrays(old, names),
        _arrays(new, names),
        (_ordering(old, fields), _ordering(new, fields)),
        (_delete_records(old), pc.fill_null(deletes.combine_chunks().take(rows), False)),
    )
    picks = np.arange(incoming.num_rows, dtype=np.int64)
    picks[rows.to_numpy(zero_copy_only=False)] = incoming.num_rows + np.arange(len(rows))
    at = pa.array(picks)
    result = pa.concat_tables([incoming, pa.table(merged).select(names)]).take(at)
    flags = pa.concat_arrays([pc.fill_null(deletes.combine_chunks(), False), gone]).take(at)
    return result, pa.chunked_array([flags])
