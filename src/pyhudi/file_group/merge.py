"""Merging incoming records into a file group's base file (copy-on-write updates and deletes),
in Arrow: which old rows stay, which incoming rows win (precombine / payload ordering)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pyhudi.codec.arrow_compute import field_values
from pyhudi.codec.bloom import continued_bloom_filter, read_footer_bloom
from pyhudi.codec.file_names import (
    parse_base_file,
)
from pyhudi.codec.schema import COMMIT_SEQNO, COMMIT_TIME, PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_file import BaseFileWriter, conform
from pyhudi.file_group.cdc_log import (
    Changes,
    cdc_content,
    cdc_log_bytes,
    cdc_log_name,
    needs_cdc_log,
)
from pyhudi.file_group.control_columns import BASE, CONTROL_COLUMNS, DELETE, FID
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import refused_row, stats_table
from pyhudi.file_group.stitch import stitch_rows
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import earlier_stays_arrow, ordering_columns
from pyhudi.merge.record_merger import keep_latest_per_key, merge_over_stored
from pyhudi.model.enums import IOType
from pyhudi.table.faults import fault_point


@dataclass(frozen=True)
class MergeSpec:
    merge_mode: MergeMode
    ordering_field: str | None
    #: Pre-combine the group's records (one per key, greatest ordering value) inside the task:
    #: every record of a key reaches the same file group, so no separate shuffle is needed.
    combine: bool = False
    #: Incoming deletes apply whatever the stored record's ordering value: the delete operation's
    #: records (Hudi's `EmptyHoodieRecordPayload`, natural order, always wins the merge). Deletes
    #: that are upserted records (`_hoodie_is_deleted`) keep their ordering value and can be stale.
    deletes_always_apply: bool = False


def file_group_function(spec: WriteTaskSpec, merge: MergeSpec) -> Callable[[pa.Table], pa.Table]:
    """The `applyInArrow` body for one file group: create it, or merge into its base file."""

    def run(group: pa.Table) -> pa.Table:
        if group.num_rows == 0:
            return stats_table([])
        pid, token = task_identity()
        if merge.combine:
            group = keep_latest_per_key(group, merge.ordering_field, merge.merge_mode, DELETE)
        file_id = group.column(FID)[0].as_py()
        base_name = group.column(BASE)[0].as_py()
        partition = group.column(PARTITION_PATH)[0].as_py() or ""
        if spec.refuses(partition):
            return stats_table([refused_row(partition)])
        deletes = pc.fill_null(group.column(DELETE), False)
        records = group.drop_columns(list(CONTROL_COLUMNS))
        if base_name is None:
            inserts = records.filter(pc.invert(deletes))
            if inserts.num_rows == 0:
                return stats_table([])
            writer = BaseFileWriter(
                spec, partition, file_id, token, IOType.CREATE, task_partition_id=pid
            )
            writer.write_new(inserts)
            writer.counts["num_inserts"] = inserts.num_rows
            return stats_table([writer.close()])
        return stats_table(
            [
                merge_into_file_group(
                    spec, merge, partition, file_id, base_name, records, deletes, pid, token
                )
            ]
        )

    return run


def merge_into_file_group(
    spec: WriteTaskSpec,
    merge: MergeSpec,
    partition: str,
    file_id: str,
    base_name: str,
    incoming: pa.Table,
    deletes: pa.ChunkedArray,
    pid: int,
    token: str,
) -> dict:
    base = parse_base_file(partition, base_name)
    prev_commit = base.instant_time if base else "null"
    old, footer = _read_base(spec, partition, file_id, base_name)

    incoming = conform(incoming, spec.file_schema)
    if merge.merge_mode is MergeMode.PARTIAL_UPDATE:  # merged records replace the stored ones
        incoming, deletes = merge_over_stored(old, incoming, deletes, merge.ordering_field)
    plan = plan_merge(old, incoming, deletes, merge)
    writer = BaseFileWriter(
        spec,
        partition,
        file_id,
        token,
        IOType.MERGE,
        task_partition_id=pid,
        prev_commit=prev_commit,
    )
    if plan.num_deletes == 0 and footer is not None:
        # Every old row stays where it was (updates in place) and inserts follow: the new file's
        # keys begin with the old file's keys in their order, whose filter the old footer holds.
        b = spec.bloom
        previous = continued_bloom_filter(
            read_footer_bloom(footer),
            old.num_rows,
            b.num_entries,
            b.fpp,
            b.type_code,
            b.max_entries,
        )
        if previous is not None:
            writer.continue_bloom(previous, old.num_rows)
    writer.previous_keys = old.column(RECORD_KEY)
    _write_merged(writer, old, incoming, plan)
    writer.counts.update(
        num_updates=plan.num_updates, num_inserts=plan.num_inserts, num_deletes=plan.num_deletes
    )
    row = writer.close()
    if spec.cdc is not None and needs_cdc_log(len(plan.order), plan.num_inserts):
        changes = Changes(
            plan.replaced_old,
            plan.take_new[: plan.num_updates],
            plan.dropped_old,
            plan.take_new[plan.num_updates :],
        )
        content = cdc_content(spec.cdc, spec.instant_time, old, incoming, changes)
        row.update(write_cdc_log(spec, partition, file_id, token, content))
    return row


def write_cdc_log(
    spec: WriteTaskSpec, partition: str, file_id: str, token: str, content: bytes
) -> dict[str, object]:
    """Write a merge's CDC log (its APPEND marker first, as Hudi's log writer callback does);
    the stats row columns naming it."""
    assert spec.cdc is not None
    name = cdc_log_name(file_id, spec.instant_time, token)
    spec.create_marker(partition, name, IOType.APPEND)
    data = cdc_log_bytes(spec.cdc, spec.instant_time, content)
    spec.storage.create_new(posixpath.join(spec.partition_dir(partition), name), data)
    fault_point("write.during_data_files")  # executor side: a CDC log is complete
    return {"cdc_file": name, "cdc_size_bytes": len(data)}


def read_existing_base(
    spec: WriteTaskSpec, partition: str, file_id: str, base_name: str
) -> pa.Table:
    """An existing base file's records; a bootstrap skeleton is stitched to its source file first."""
    return _read_base(spec, partition, file_id, base_name)[0]


def _read_base(
    spec: WriteTaskSpec, partition: str, file_id: str, base_name: str
) -> tuple[pa.Table, dict[bytes, bytes] | None]:
    """(`read_existing_base`, the file's footer key-value metadata; None for a stitched skeleton)."""
    with spec.storage.open_input(f"{spec.partition_dir(partition)}/{base_name}") as handle:
        file = pq.ParquetFile(handle)
        table = file.read()
        footer: dict[bytes, bytes] | None = dict(file.metadata.metadata or {})
    source = spec.bootstrap_sources.get((partition, file_id))
    if source is not None:
        table = stitch_rows(source, table, partition, spec.file_schema, base_name)
        footer = None
    return conform(table, spec.file_schema), footer


@dataclass(frozen=True)
class MergePlan:
    """Row positions of the merged file: old rows (kept or replaced in place), then inserts."""

    take_old: np.ndarray  # old row positions kept unchanged, in file order
    take_new: np.ndarray  # incoming row positions written (updates then inserts)
    order: np.ndarray  # final order over concat(kept old, written new)
    num_updates: int
    num_inserts: int
    num_deletes: int
    #: Old row positions replaced by the first `num_updates` of `take_new` (aligned), and those
    #: removed by deletes: the changes a CDC log records.
    replaced_old: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dropped_old: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def plan_merge(
    old: pa.Table, incoming: pa.Table, deletes: pa.ChunkedArray, merge: MergeSpec
) -> MergePlan:
    """Positions of the merged file. Several incoming records of one key collapse to the last one,
    as Hudi's merge handle keys incoming records by record key."""
    last = _last_occurrences(incoming.column(RECORD_KEY))
    if last is None:
        return _plan_merge_unique(old, incoming, deletes, merge)
    taken = pa.array(last)
    plan = _plan_merge_unique(old, incoming.take(taken), deletes.take(taken), merge)
    return MergePlan(
        plan.take_old,
        last[plan.take_new],
        plan.order,
        plan.num_updates,
        plan.num_inserts,
        plan.num_deletes,
        plan.replaced_old,
        plan.dropped_old,
    )


def _last_occurrences(keys: pa.ChunkedArray) -> np.ndarray | None:
    """Input positions of the last record of each key (in input order), or None if keys are unique."""
    n = len(keys)
    if n < 2 or pc.count_distinct(keys).as_py() == n:
        return None
    reversed_keys = keys.take(pa.array(np.arange(n - 1, -1, -1)))
    first_in_reverse = pc.index_in(
        pc.unique(reversed_keys), value_set=reversed_keys.combine_chunks()
    )
    return np.sort(n - 1 - first_in_reverse.to_numpy(zero_copy_only=False).astype(np.int64))


def _plan_merge_unique(
    old: pa.Table, incoming: pa.Table, deletes: pa.ChunkedArray, merge: MergeSpec
) -> MergePlan:
    old_keys, new_keys = old.column(RECORD_KEY), incoming.column(RECORD_KEY)
    match = pc.index_in(old_keys, value_set=new_keys.combine_chunks())
    matched = pc.is_valid(match).to_numpy(zero_copy_only=False).astype(bool)
    match_idx = pc.fill_null(match, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    is_delete = deletes.to_numpy(zero_copy_only=False).astype(bool)
    wins = matched.copy()
    if merge.merge_mode is MergeMode.EVENT_TIME_ORDERING and merge.ordering_field and matched.any():
        incoming_wins = _incoming_wins(old, incoming, match_idx, matched, merge.ordering_field)
        if merge.deletes_always_apply:
            incoming_wins |= is_delete[np.clip(match_idx, 0, None)]
        wins &= incoming_wins
    replaced = wins & ~is_delete[np.clip(match_idx, 0, None)] if len(is_delete) else wins
    dropped = (
        wins & is_delete[np.clip(match_idx, 0, None)] if len(is_delete) else np.zeros_like(wins)
    )
    old_positions = np.arange(old.num_rows)
    in_old = np.zeros(incoming.num_rows, dtype=bool)
    in_old[match_idx[matched]] = True
    insert_positions = np.flatnonzero(~in_old & ~is_delete)
    # Final layout: every old row position, replaced ones pointing at their incoming row.
    keep_old = old_positions[~replaced & ~dropped]
    update_new = match_idx[replaced]
    written_new = np.concatenate([update_new, insert_positions]).astype(np.int64)
    slot_old = np.full(old.num_rows, -1, dtype=np.int64)
    slot_old[keep_old] = np.arange(len(keep_old))
    slot_old[replaced] = len(keep_old) + np.arange(len(update_new))
    in_file_order = slot_old[~dropped]
    inserts = len(keep_old) + len(update_new) + np.arange(len(insert_positions))
    return MergePlan(
        take_old=keep_old,
        take_new=written_new,
        order=np.concatenate([in_file_order, inserts]).astype(np.int64),
        num_updates=len(update_new),
        num_inserts=len(insert_positions),
        num_deletes=int(dropped.sum()),
        replaced_old=np.flatnonzero(replaced).astype(np.int64),
        dropped_old=np.flatnonzero(dropped).astype(np.int64),
    )


def _incoming_wins(
    old: pa.Table, incoming: pa.Table, match_idx: np.ndarray, matched: np.ndarray, field: str
) -> np.ndarray:
    """Event-time ordering: the incoming record wins unless the stored one's ordering value is
    greater (`merge.ordering.earlier_stays`: a stored null ordering value is always replaced)."""
    olds, news = [], []
    at = pa.array(np.clip(match_idx, 0, None))
    for name in ordering_columns(field):
        old_column, new_column = field_values(old, name), field_values(incoming, name)
        if old_column is None or new_column is None:
            return np.ones(len(matched), dtype=bool)
        old_values = old_column.combine_chunks()
        new_values = new_column.combine_chunks().take(at)
        if old_values.type != new_values.type:
            new_values = new_values.cast(old_values.type)
        olds.append(old_values)
        news.append(new_values)
    stale = earlier_stays_arrow(olds, news).to_numpy(zero_copy_only=False)
    return ~stale.astype(bool)


def _write_merged(
    writer: BaseFileWriter, old: pa.Table, incoming: pa.Table, plan: MergePlan
) -> None:
    if len(plan.order) == len(plan.take_old) + len(plan.take_new) and _is_identity_split(plan):
        writer.write_existing(old.take(pa.array(plan.take_old, pa.int64())))
        writer.write_new(incoming.take(pa.array(plan.take_new, pa.int64())))
        return
    writer.write_existing(
        merged_rows(old, incoming, plan, writer.spec.instant_time, writer.task_partition_id)
    )


def merged_rows(
    old: pa.Table, incoming: pa.Table, plan: MergePlan, instant: str, task_partition_id: int
) -> pa.Table:
    """The merged file's rows in file order, in one take over (old rows, incoming rows): carried-
    over rows keep their commit time and sequence number; new rows get this instant's, numbered
    by their position in the file (only theirs are made)."""
    kept = len(plan.take_old)
    sources = np.concatenate([plan.take_old, old.num_rows + plan.take_new])[plan.order]
    stamped = incoming.set_column(
        incoming.column_names.index(COMMIT_TIME),
        COMMIT_TIME,
        pa.repeat(instant, incoming.num_rows).cast(pa.string()),
    )
    rows = pa.concat_tables([old, stamped]).take(pa.array(sources, pa.int64()))
    new_at = np.flatnonzero(plan.order >= kept)
    fresh = pc.binary_join_element_wise(
        pa.repeat(f"{instant}_{task_partition_id}_", len(new_at)),
        pa.array(new_at, pa.int64()).cast(pa.string()),
        "",
    )
    # Sequence numbers: the taken ones, with the new rows' from `fresh` (one take of one column).
    picks = np.arange(len(sources), dtype=np.int64)
    picks[new_at] = len(sources) + np.arange(len(new_at))
    taken = rows.column(COMMIT_SEQNO).combine_chunks()
    seqnos = pa.concat_arrays([taken, fresh.cast(taken.type)]).take(pa.array(picks))
    return rows.set_column(rows.column_names.index(COMMIT_SEQNO), COMMIT_SEQNO, seqnos)


def _is_identity_split(plan: MergePlan) -> bool:
    """True when the final order is simply all kept old rows, then all new rows."""
    return bool(np.array_equal(plan.order, np.arange(len(plan.order))))
