"""Merge-on-read file-group writes (deltacommits).

Per file group of a write (Hudi's `BaseSparkDeltaCommitActionExecutor` rules):
* a new file group: its inserts become a new base file;
* a small file without log files that takes inserts (the index cannot see keys in logs): merged
  into a new base file, as on copy-on-write, so every key stays in a base file;
* any other existing file group: updates and deletes are appended as a new log file of its
  latest file slice (the slice a pending compaction opened, if there is one).
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY, arrow_to_avro_json
from pyhudi.config import write as write_keys
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.control_columns import BASE, CONTROL_COLUMNS, DELETE, FID, LOCATED, POSITION
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.index_results import log_key_changes
from pyhudi.file_group.log_append import KnownPositions, LogSpec, SliceState, append_log
from pyhudi.file_group.merge import MergeSpec, merge_into_file_group
from pyhudi.file_group.stats import STATS_DDL, refused_row, stats_table
from pyhudi.merge.record_merger import keep_latest_per_key
from pyhudi.model.enums import BaseFileFormat, IOType
from pyhudi.spark_compat import apply_in_arrow
from pyhudi.table.context import TableContext
from pyhudi.writer.job import WriteJob, merge_spec, write_tasks
from pyhudi.writer.late_tasks import settled_groups


def slice_states(ctx: TableContext) -> dict[str, SliceState]:
    """fileId -> the slice new log files go to (latest, including one opened by a pending compaction)."""
    states = {}
    for file_slice in ctx.view().latest_file_slices():
        base = file_slice.base_file
        states[file_slice.file_id] = SliceState(
            base_instant=file_slice.base_instant_time,
            base_file_name=base.file_name if base else None,
            log_file_names=tuple(log.file_name for log in file_slice.log_files),
            next_version=file_slice.latest_log_version + 1,
        )
    return states


def mor_file_group_function(
    job: WriteJob, states: dict[str, SliceState], merge_fids: frozenset[str], log_spec: LogSpec
) -> Callable[[pa.Table], pa.Table]:
    spec = job.spec
    merge = merge_spec(job.cfg)
    delete_ordering = _delete_ordering(merge, job.ctx.config.version)

    def run(group: pa.Table) -> pa.Table:
        if group.num_rows == 0:
            return stats_table([])
        pid, token = task_identity()
        if merge.combine:
            group = keep_latest_per_key(group, merge.ordering_field, merge.merge_mode, DELETE)
        file_id = group.column(FID)[0].as_py()
        partition = group.column(PARTITION_PATH)[0].as_py() or ""
        if spec.refuses(partition):
            return stats_table([refused_row(partition)])
        deletes = pc.fill_null(group.column(DELETE), False)
        located = group.column(LOCATED) if LOCATED in group.column_names else None
        state = states.get(file_id)
        positions = _known_positions(group, deletes, state)
        records = group.drop_columns(
            [c for c in (*CONTROL_COLUMNS, LOCATED, POSITION) if c in group.schema.names]
        )
        if state is None:
            return _create(spec, partition, file_id, token, pid, records.filter(pc.invert(deletes)))
        if file_id in merge_fids and state.base_file_name and not state.log_file_names:
            return stats_table(
                [
                    merge_into_file_group(
                        spec,
                        merge,
                        partition,
                        file_id,
                        state.base_file_name,
                        records,
                        deletes,
                        pid,
                        token,
                    )
                ]
            )
        # Everything appended to an existing file group counts as an update (as Hudi's append handle
        # counts records routed to an existing location).
        upserts = records.filter(pc.invert(deletes))
        row = append_log(
            spec,
            log_spec,
            state,
            partition,
            file_id,
            token,
            pid,
            upserts,
            records.filter(deletes),
            num_updates=upserts.num_rows,
            positions=positions,
            delete_ordering=delete_ordering,
        )
        if spec.collect_keys:
            row.update(log_key_changes(records.column(RECORD_KEY), deletes, located))
        return stats_table([row])

    return run


def _delete_ordering(merge: MergeSpec, table_version: int) -> str | None:
    """The ordering field the log deletes carry: Hudi writes a `_hoodie_is_deleted` upsert's
    delete with the record's ordering value (Hudi 0.15 under every payload, since its log scan
    compares it with earlier log records; pyhudi leaves it out where the log scan does not
    compare, COMMIT_TIME_ORDERING on versions 8 and 9); the `delete` operation's deletes
    (`EmptyHoodieRecordPayload`) keep natural order (0)."""
    if merge.deletes_always_apply or not merge.merge_mode.orders_log_versions(table_version >= 8):
        return None
    return merge.ordering_field


def _known_positions(
    group: pa.Table, deletes: pa.ChunkedArray, state: SliceState | None
) -> KnownPositions | None:
    """The row positions the index lookup found (`POSITION`), when they are rows of the base file
    of the slice the log goes to (every positioned record is routed to that file); else None (the
    append task finds them from the base file's keys, if it writes positions)."""
    if POSITION not in group.column_names or state is None or state.base_file_name is None:
        return None
    positions = group.column(POSITION)
    positioned = pc.is_valid(positions)
    bases = pc.fill_null(pc.equal(group.column(BASE), state.base_file_name), False)
    if pc.any(pc.and_(positioned, pc.invert(bases))).as_py():
        return None
    return KnownPositions(positions.filter(pc.invert(deletes)), positions.filter(deletes))


def _create(spec, partition, file_id, token, pid, inserts: pa.Table) -> pa.Table:  # type: ignore[no-untyped-def]
    if inserts.num_rows == 0:
        return stats_table([])
    writer = BaseFileWriter(spec, partition, file_id, token, IOType.CREATE, task_partition_id=pid)
    writer.write_new(inserts)
    writer.counts["num_inserts"] = inserts.num_rows
    return stats_table([writer.close()])


def writes_positions(job: WriteJob) -> bool:
    """Log blocks carry record positions (the index lookup returns them, `control_columns.POSITION`):
    not under the bucket index, which routes records without looking their keys up (Hudi's bucket
    index leaves them without positions too), so finding them would cost a read of every appended
    group's base-file keys."""
    config = job.ctx.config
    return (
        job.cfg.is_merge_on_read
        and write_keys.WRITE_RECORD_POSITIONS.get(job.cfg.options)
        and not job.cfg.index_type.routes_by_bucket
        and config.populate_meta_fields
        and config.base_file_format is BaseFileFormat.PARQUET
    )


def write_file_groups_mor(job: WriteJob, records: DataFrame) -> list[dict]:
    states = slice_states(job.ctx)
    log_spec = LogSpec(
        schema_json=arrow_to_avro_json(
            job.spec.file_schema, job.cfg.table_name, with_meta_fields=True
        ),
        block_format=write_keys.LOG_DATA_BLOCK_FORMAT.get(job.cfg.options),
        compression=job.cfg.sizing.compression if job.cfg.sizing.compression != "none" else "none",
        record_positions=writes_positions(job),
        table_version=job.ctx.config.version,
    )
    function = settled_groups(
        job.spec, mor_file_group_function(job, states, frozenset(job.small_file_ids), log_spec)
    )
    data = records.drop(
        *[
            c
            for c in records.columns
            if c.startswith("__pyhudi_") and c not in (*CONTROL_COLUMNS, LOCATED, POSITION)
        ]
    )
    # Appending a log file costs what its records cost; only small-file merges rewrite a base file.
    tasks = write_tasks(job, len(job.small_file_ids))
    result = apply_in_arrow(data, FID, function, STATS_DDL, tasks=tasks)
    return [row.asDict() for row in result.collect()]
