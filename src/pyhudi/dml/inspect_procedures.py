"""Hudi's read-only inspection procedures: `show_commit_files`, `show_fsview_latest`, `stats_wa`
and `stats_file_sizes`, with Hudi 0.15's parameters and result columns.

Rows come in a stable order where Hudi's come in a Java hash map's order: `show_commit_files` in
the commit metadata's partition order, `stats_file_sizes` by commit time (then `ALL`). Values
are Hudi's, paths included (a local table's paths as `file:/...`).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession

from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.dml.procedure_args import Args, flag, limit, result_frame, table_context
from pyhudi.exceptions import ConfigError, InstantNotFoundError, UnsupportedOperationError
from pyhudi.model.file import FileSlice, LogFile
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext


def _rows(spark: SparkSession, schema: str, rows: Sequence[Any], count: int) -> DataFrame:
    return result_frame(spark, schema, list(rows)[:count])


def _qualified(ctx: TableContext, relative: str) -> str:
    """A file's path as Hudi prints it: the table's URI joined with the relative path."""
    base = ctx.base_path.rstrip("/")
    if "://" not in base and not base.startswith("file:"):
        base = "file:" + base
    return f"{base}/{relative}"


# ---- show_commit_files ----------------------------------------------------------------------

COMMIT_FILES_SCHEMA = (
    "action string, partition_path string, file_id string, previous_commit string, "
    "total_records_updated long, total_records_written long, total_bytes_written long, "
    "total_errors long, file_size long"
)


def show_commit_files(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL show_commit_files(table|path => ..., instant_time => ..., limit => 10)`: one row
    per file the completed commit, deltacommit or replacecommit wrote."""
    ctx = table_context(spark, args)
    time = args.get("instant_time")
    if not time:
        raise ConfigError("show_commit_files needs instant_time")
    commits = ctx.active.timeline.commits()
    instant = commits.find(str(time))
    if instant is None:
        raise InstantNotFoundError(
            f"Commit {time} not found in the completed commits of {ctx.base_path}"
        )
    metadata = ctx.active.commit_metadata(instant)
    rows = [
        (
            instant.action.value,
            partition,
            stat.file_id,
            stat.prev_commit,
            stat.num_update_writes,
            stat.num_writes,
            stat.total_write_bytes,
            stat.total_write_errors,
            stat.file_size_bytes,
        )
        for partition, stats in metadata.partition_to_write_stats.items()
        for stat in stats
    ]
    return _rows(spark, COMMIT_FILES_SCHEMA, rows, limit(args))


# ---- show_fsview_latest ---------------------------------------------------------------------

FSVIEW_LATEST_SCHEMA = (
    "partition string, file_id string, base_instant string, data_file string, "
    "data_file_size long, num_delta_files long, total_delta_file_size long, "
    "delta_size_compaction_scheduled long, delta_size_compaction_unscheduled long, "
    "delta_to_base_radio_compaction_scheduled double, "
    "delta_to_base_radio_compaction_unscheduled double, "
    "delta_files_compaction_scheduled string, delta_files_compaction_unscheduled string"
)


def show_fsview_latest(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL show_fsview_latest(table|path => ..., partition_path => ..., max_instant => ...,
    include_max => false, merge => true, limit => 10)`: the latest completed file slice of each
    file group of the partitions `partition_path` (a glob; every partition when not given)
    matches, its log files split into those a compaction takes (the slice's own) and the rest.
    `merge` is accepted and changes nothing: without in-flight instants there is nothing to
    merge."""
    for unsupported in ("include_in_flight", "exclude_compaction"):
        if flag(args, unsupported):
            raise UnsupportedOperationError(f"show_fsview_latest: {unsupported} => true")
    ctx = table_context(spark, args)
    pattern = args.get("partition_path") or args.get("path_regex")
    view = ctx.view()
    partitions = view.partition_paths()
    if pattern and pattern != "ALL_PARTITIONS":
        partitions = [p for p in partitions if fnmatch.fnmatchcase(p, str(pattern))]
    as_of = _max_instant(ctx, args)
    if as_of is None:
        return _rows(spark, FSVIEW_LATEST_SCHEMA, [], 0)
    pending = set(ctx.active.timeline.pending_compactions().times())
    slices = []
    for group in view.file_groups(as_of, partitions):
        # Hudi's view holds completed instants only: a pending compaction's slice and the logs
        # written on it are not there, with `merge` or without
        shown = next((s for s in group.slices if s.base_instant_time not in pending), None)
        if shown is not None:
            slices.append(shown)
    rows = [_slice_row(ctx, s) for s in sorted(slices, key=lambda s: (s.partition_path, s.file_id))]
    return _rows(spark, FSVIEW_LATEST_SCHEMA, rows, limit(args))


def _max_instant(ctx: TableContext, args: Args) -> str | None:
    """The newest instant the view shows: `max_instant` (itself only with `include_max`), else
    the latest completed instant or pending compaction (None: an empty table)."""
    given = args.get("max_instant")
    timeline = ctx.active.timeline
    if given:
        shown = [
            i.time
            for i in timeline.write_timeline().completed()
            if i.time < str(given) or (flag(args, "include_max") and i.time == str(given))
        ]
        return max(shown, default=None)
    candidates = [
        i.time
        for i in timeline
        if i.is_completed or (i.action is Action.COMPACTION and i.is_pending)
    ]
    return max(candidates, default=None)


def _slice_row(ctx: TableContext, file_slice: FileSlice) -> tuple[Any, ...]:
    base = file_slice.base_file
    base_size = max(base.size_bytes, 0) if base is not None else 0
    logs = [log for log in file_slice.log_files if not log.is_cdc]
    scheduled = [log for log in logs if log.base_instant_time == file_slice.base_instant_time]
    unscheduled = [log for log in logs if log.base_instant_time != file_slice.base_instant_time]

    def size(group: list[LogFile]) -> int:
        return sum(max(log.size_bytes, 0) for log in group)

    def ratio(group: list[LogFile]) -> float:
        return size(group) / float(base_size) if base_size > 0 else -1.0

    def listed(group: list[LogFile]) -> str:
        shown = (
            f"HoodieLogFile{{pathStr='{_qualified(ctx, log.relative_path)}', "
            f"fileLen={log.size_bytes}}}"
            for log in reversed(group)  # a Hudi file slice lists its newest log first
        )
        return "[" + ",".join(shown) + "]"

    return (
        file_slice.partition_path,
        file_slice.file_id,
        file_slice.base_instant_time,
        _qualified(ctx, base.relative_path) if base is not None else "",
        base_size,
        len(logs),
        size(logs),
        size(scheduled),
        size(unscheduled),
        ratio(scheduled),
        ratio(unscheduled),
        listed(scheduled),
        listed(unscheduled),
    )


# ---- stats_wa -------------------------------------------------------------------------------

WRITE_AMPLIFICATION_SCHEMA = (
    "commit_time string, total_upserted long, total_written long, write_amplification_factor string"
)


def stats_wa(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL stats_wa(table|path => ..., limit => 10)`: per completed commit and replacecommit
    (Hudi leaves deltacommits out), records written per record updated, then the total."""
    ctx = table_context(spark, args)
    timeline = ctx.active.timeline.completed().with_actions(Action.COMMIT, Action.REPLACE_COMMIT)
    rows: list[tuple[str, int, int, str]] = []
    upserted, written = 0, 0
    for instant in timeline:
        metadata = ctx.active.commit_metadata(instant)
        updates, writes = metadata.total("num_update_writes"), metadata.total("num_writes")
        rows.append((str(instant.time), updates, writes, _amplification(writes, updates)))
        upserted, written = upserted + updates, written + writes
    rows.append(("Total", upserted, written, _amplification(written, upserted)))
    return _rows(spark, WRITE_AMPLIFICATION_SCHEMA, rows, limit(args))


def _amplification(written: int, upserted: int) -> str:
    """Hudi's `DecimalFormat("#.00")` of the float quotient ("0" when nothing was upserted)."""
    if upserted <= 0:
        return "0"
    quotient = float(np.float32(written) / np.float32(upserted))
    text = str(Decimal(quotient).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))
    return text[1:] if text.startswith("0.") else text


# ---- stats_file_sizes -----------------------------------------------------------------------

FILE_SIZES_SCHEMA = (
    "commit_time string, min long, `10th` double, `50th` double, avg double, `95th` double, "
    "max long, num_files int, std_dev double"
)


def stats_file_sizes(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL stats_file_sizes(table|path => ..., partition_path => '', limit => 10)`: the size
    distribution of the data files (every version, base and log files) in the partitions
    `partition_path` (a glob) matches, per commit the file belongs to, then of them all."""
    ctx = table_context(spark, args)
    pattern = str(args.get("partition_path") or "")
    sizes: dict[str, list[int]] = {}
    for partition, statuses in ctx.view().listing.files.items():
        if pattern and not fnmatch.fnmatchcase(partition, pattern.strip("/")):
            continue
        for status in statuses:
            time = _commit_time(partition, status.name, status.size_bytes)
            if time is not None:
                sizes.setdefault(time, []).append(status.size_bytes)
    everything = [size for group in sizes.values() for size in group]
    rows = [_histogram(time, sizes[time]) for time in sorted(sizes)]
    rows.append(_histogram("ALL", everything))
    return _rows(spark, FILE_SIZES_SCHEMA, rows, limit(args))


def _commit_time(partition: str, name: str, size: int) -> str | None:
    """The commit a data file belongs to: a base file's instant, a log file's base instant."""
    base = parse_base_file(partition, name, size)
    if base is not None:
        return base.instant_time
    log = parse_log_file(partition, name, size)
    return log.base_instant_time if log is not None else None


def _histogram(label: str, sizes: list[int]) -> tuple[Any, ...]:
    """The statistics of a Dropwizard uniform-reservoir snapshot of `sizes` (all kept)."""
    values = sorted(sizes)
    if not values:
        return (label, 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0.0)
    mean = sum(values) / len(values)
    squares = sum((v - mean) ** 2 for v in values)
    variance = squares / (len(values) - 1) if len(values) > 1 else 0.0
    quantile = _quantile_of(values)
    return (
        label,
        values[0],
        quantile(0.1),
        quantile(0.5),
        mean,
        quantile(0.95),
        values[-1],
        len(values),
        math.sqrt(variance),
    )


def _quantile_of(values: list[int]) -> Callable[[float], float]:
    def quantile(q: float) -> float:
        position = q * (len(values) + 1)
        if position < 1:
            return float(values[0])
        if position >= len(values):
            return float(values[-1])
        lower, upper = values[int(position) - 1], values[int(position)]
        return lower + (position - math.floor(position)) * (upper - lower)

    return quantile
