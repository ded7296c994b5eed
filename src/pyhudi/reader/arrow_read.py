"""`pyhudi.read_arrow` / `HudiTable.to_arrow`: a snapshot read into a `pyarrow.Table`, no Spark.

The same plan as `pyhudi.read` (`planner.plan_read`: query type, `as.of.instant`, metadata-table
listing, partition pruning, data skipping) and the same per-slice readers as the Spark path's
Arrow tasks, run on local threads (pyarrow's parquet reads and compute release the GIL):

| planned slices                          | read by                                                  |
|-----------------------------------------|----------------------------------------------------------|
| parquet base files without log files    | one `pyarrow.dataset` scan (threads, filters pushed down) |
| slices with log files, bootstrap skeletons, Lance base files | per slice in a thread pool: base merged with its logs (by row position when every log block carries RECORD_POSITIONS, else by key) / stitched to its source |

Row filters are the `(column, op, value)` tuples of `pyhudi.read`, applied to the merged rows with
Spark's semantics (a comparison with null drops the row); they are pushed into the scan only for
files nothing merges into. Incremental queries filter by commit time exactly as the Spark read does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from pyhudi.codec.schema import COMMIT_TIME, RECORD_KEY
from pyhudi.exceptions import ConfigError
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.log_merge import slice_winners
from pyhudi.file_group.slice_overlay import header_positions, slice_live_rows
from pyhudi.file_group.slice_reader import read_slice
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import ordering_columns
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base
from pyhudi.model.enums import BaseFileFormat
from pyhudi.reader.cdc import is_cdc_query, read_cdc_arrow
from pyhudi.reader.partition_values import string_partition_fields
from pyhudi.reader.planner import ReadPlan, plan_read
from pyhudi.reader.pruning import (
    COMPARISONS,
    PartitionFilter,
    check_filter_columns,
    validate_filters,
)
from pyhudi.reader.slices import slice_tasks
from pyhudi.table.context import TableContext


def read_arrow(
    ctx: TableContext,
    options: Mapping[str, str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    filters: Sequence[PartitionFilter] = (),
) -> pa.Table:
    """The table read with `pyhudi.read`'s option keys, as one Arrow table (see the module doc)."""
    checked = validate_filters(filters)
    if is_cdc_query(options or {}):
        if checked:
            raise ConfigError("a CDC query takes no filters: filter its rows instead")
        table = read_cdc_arrow(ctx, options or {})
        return table.select(list(columns)) if columns else table
    plan = plan_read(ctx, options, checked)
    return read_plan_arrow(ctx, plan, columns=columns)


def read_plan_arrow(
    ctx: TableContext, plan: ReadPlan, *, columns: Sequence[str] | None = None
) -> pa.Table:
    schema = plan.file_schema
    out = output_schema(plan, columns)
    condition = rows_expression(schema, plan.filters, plan.commit_times)
    # Columns each part must produce: the output plus what the filters read.
    needed = _needed(schema, out, plan.filters, plan.commit_times is not None)
    scan, tasks = _split(ctx, plan)
    parts: list[pa.Table] = []
    with ThreadPoolExecutor(max_workers=max(1, min(_threads(), len(tasks)))) as pool:
        # The slices' log decoding (partly Python) overlaps the GIL-free scan of the other files.
        prune = not plan.drop_meta_fields  # stored record keys: the merge needs only those
        merged = [pool.submit(_read_task, t, needed, condition, prune) for t in tasks]
        if scan:
            parts.append(_scan_base_files(ctx, scan, schema, needed, condition))
        parts.extend(f.result() for f in merged)
    parts = [p.select(out.names) for p in parts if p.num_rows]
    table = pa.concat_tables([conform(p, out) for p in parts]) if parts else out.empty_table()
    for name in string_partition_fields(ctx.config):  # Hudi 1.x: strings (partition_values.py)
        if name in table.column_names:
            index = table.column_names.index(name)
            table = table.set_column(index, name, table.column(name).cast(pa.string()))
    return table


def output_schema(plan: ReadPlan, columns: Sequence[str] | None) -> pa.Schema:
    """The schema of the rows a read returns (meta fields first unless the table has none)."""
    full = plan.data_schema if plan.drop_meta_fields else plan.file_schema
    if columns is None:
        return full
    missing = [c for c in columns if c not in full.names]
    if missing:
        raise ConfigError(
            f"columns {missing} are not columns of the table (it has {', '.join(full.names)})"
        )
    return pa.schema([full.field(c) for c in columns])


def _split(ctx: TableContext, plan: ReadPlan) -> tuple[list[str], list[SliceTask]]:
    """(parquet base files scanned as one dataset, slices read one by one)."""
    if ctx.config.base_file_format is not BaseFileFormat.PARQUET:
        return [], slice_tasks(ctx, plan)
    paths = [ctx.path(s.base_file.relative_path) for s in plan.base_only]  # type: ignore[union-attr]
    return paths, slice_tasks(ctx, plan, (*plan.with_logs, *plan.stitched))


def _threads() -> int:
    return max(1, min(16, pa.cpu_count() or os.cpu_count() or 1))


def _needed(
    schema: pa.Schema, out: pa.Schema, filters: Sequence[PartitionFilter], commit_time: bool
) -> list[str]:
    wanted = set(out.names) | {f[0] for f in filters}
    if commit_time:
        wanted.add(COMMIT_TIME)
    return [name for name in schema.names if name in wanted]


def _scan_base_files(
    ctx: TableContext,
    paths: list[str],
    schema: pa.Schema,
    needed: list[str],
    condition: pads.Expression | None,
) -> pa.Table:
    """Base files nothing merges into: one threaded dataset scan, filters pushed down."""
    dataset = pads.dataset(paths, schema=schema, format="parquet", filesystem=ctx.storage.fs)
    return dataset.to_table(columns=needed, filter=condition, use_threads=True)


def _read_task(
    task: SliceTask, needed: list[str], condition: pads.Expression | None, prune: bool
) -> pa.Table:
    table = None
    if prune and _mergeable(task):
        table = _read_by_position(task, needed)
        if table is None and len(needed) < len(task.file_schema):
            table = _read_merged_columns(task, needed)
    if table is None:
        table = read_slice(task)
    if condition is not None:
        table = table.filter(condition)
    return table.select(needed)


def _mergeable(task: SliceTask) -> bool:
    """A merge-on-read slice over a parquet base file (with stored record keys: the caller's
    `prune`), merged: its base file can be read for some columns only, or by position."""
    return (
        bool(task.log_files)
        and task.base_file is not None
        and task.base_file.endswith(".parquet")
        and task.bootstrap_source is None
        and not task.skip_merge
    )


def _base_columns(task: SliceTask, columns: list[str]) -> pa.Table:
    """The slice's base file, `columns` only (in file-schema order)."""
    path = task.path(task.base_file)  # type: ignore[arg-type]
    # A dataset with the table's schema: columns the file lacks are nulls, older types are cast.
    dataset = pads.dataset([path], schema=task.file_schema, filesystem=task.storage.fs)
    return dataset.to_table(columns=columns, use_threads=True)


def _read_by_position(task: SliceTask, needed: list[str]) -> pa.Table | None:
    """The slice merged by row position, as the Spark read's `mor_positions` does: the base file's
    needed columns minus the rows its logs' RECORD_POSITIONS headers name, plus the logs' live
    rows. No record key is read or matched; None when the headers cannot say (the key merge)."""
    positions = header_positions(task)
    if positions is None:
        return None
    base = _base_columns(task, needed)
    if len(positions) and int(positions[-1]) >= base.num_rows:
        return None  # not positions in this file: leave it to the key merge
    keep = np.ones(base.num_rows, dtype=bool)
    keep[positions] = False
    live = slice_live_rows(task).select(needed)
    return pa.concat_tables([base.filter(pa.array(keep)), live])


def _read_merged_columns(task: SliceTask, needed: list[str]) -> pa.Table:
    """The slice merged as `read_slice` merges it, reading from the base file only the needed
    columns, the record key and the ordering fields (the log blocks are decoded whole)."""
    ordering = (f.split(".")[0] for f in ordering_columns(task.ordering_field))  # `a.b`: column a
    wanted = {*needed, RECORD_KEY, *ordering}
    keep = [name for name in task.file_schema.names if name in wanted]
    base = _base_columns(task, keep)
    winners = slice_winners(task)
    flags = [c for c in (SEQ, DELETED, NATURAL) if c in winners.column_names]
    winners = winners.select([*keep, *flags])
    mode = MergeMode(task.merge_mode)
    return merge_with_base(base, winners, mode, task.ordering_field, task.ordered_deletes)


def rows_expression(
    schema: pa.Schema,
    filters: Sequence[PartitionFilter],
    commit_times: frozenset[str] | None = None,
) -> pads.Expression | None:
    """The filters (and an incremental query's commit times) as one Arrow expression, with Spark's
    semantics: a row whose comparison is null is dropped, `not in` included."""
    terms: list[pads.Expression] = []
    if commit_times is not None:
        values = pa.array(sorted(commit_times), pa.string())
        terms.append(pc.field(COMMIT_TIME).isin(values))
    check_filter_columns(schema, filters)
    for column, op, value in filters:
        terms.append(_term(schema.field(column), op, value))
    if not terms:
        return None
    result = terms[0]
    for term in terms[1:]:
        result = result & term
    return result


def _term(field: pa.Field, op: str, value: Any) -> pads.Expression:
    column = pc.field(field.name)
    if op in ("in", "not in"):
        values = pa.array([_scalar(field, v).as_py() for v in value], field.type)
        found = column.isin(values)
        return found if op == "in" else (~found & column.is_valid())
    return COMPARISONS[op](column, _scalar(field, value))


def _scalar(field: pa.Field, value: Any) -> pa.Scalar:
    """`value` as a scalar of the column's type (a string column compared with 5 compares '5')."""
    try:
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            text = str(value).lower() if isinstance(value, bool) else str(value)
            return pa.scalar(text, field.type)
        if _is_number(value) and (
            pa.types.is_floating(field.type)
            or (pa.types.is_integer(field.type) and isinstance(value, float))
        ):
            return pa.scalar(value)  # compared as numbers, like Spark's widening
        return pa.scalar(value).cast(field.type) if value is not None else pa.scalar(None)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise ConfigError(
            f"filter value {value!r} cannot be compared with column {field.name!r} "
            f"of type {field.type}: {err}"
        ) from err


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
