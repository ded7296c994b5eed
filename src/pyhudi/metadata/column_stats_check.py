"""The `column_stats` check: each latest parquet base file's footer statistics against the metadata
table's (file, column) entries (Hudi's validator compares min, max, null count and value count),
and each entry of a log file of the latest slices against the records of its data blocks.

The columns compared are those the metadata table indexes (any live entry names them) that are
leaf columns of the file; a footer's statistics are folded over its row groups (min of mins, max
of maxes, sums of null and value counts), as Hudi's `ParquetUtils.readColumnStatsFromMetadata`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.metadata_records import ColumnStats, MetadataRecord
from pyhudi.codec.schema import with_meta_fields
from pyhudi.file_group.column_ranges import table_column_ranges
from pyhudi.file_group.log_scan import log_records
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ
from pyhudi.metadata.report import Difference
from pyhudi.model.enums import LogBlockType
from pyhudi.model.file import BaseFile, LogFile
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema

CHECK = "column_stats"
DATA_BLOCKS = frozenset(
    (LogBlockType.AVRO_DATA_BLOCK, LogBlockType.PARQUET_DATA_BLOCK, LogBlockType.HFILE_DATA_BLOCK)
)


@dataclass(frozen=True)
class FooterStats:
    """One column of one parquet file, folded over its row groups."""

    min_value: Any
    max_value: Any
    null_count: int
    value_count: int


def column_stats_differences(
    ctx: TableContext,
    records: Iterable[MetadataRecord],
    latest: list[BaseFile],
    log_files: Sequence[LogFile] = (),
) -> tuple[list[Difference], str | None]:
    """(differences, a note on what was not compared) for the latest base files `latest` and the
    log files of the latest slices `log_files`."""
    indexed: dict[tuple[str, str], ColumnStats] = {}
    for record in records:
        stats = record.column_stats
        if stats is not None and not stats.is_deleted and stats.file_name and stats.column_name:
            indexed[(stats.file_name, stats.column_name)] = stats
    found = _base_file_differences(ctx, indexed, latest)
    found += _log_file_differences(ctx, indexed, log_files)
    not_parquet = [b.file_name for b in latest if not b.file_name.endswith(".parquet")]
    note = f"{len(not_parquet)} non-parquet base files not compared" if not_parquet else None
    return found, note


def _base_file_differences(
    ctx: TableContext, indexed: Mapping[tuple[str, str], ColumnStats], latest: list[BaseFile]
) -> list[Difference]:
    columns = {column for _, column in indexed}
    found: list[Difference] = []
    not_parquet = [b.file_name for b in latest if not b.file_name.endswith(".parquet")]
    for base in latest:
        if base.file_name in not_parquet:
            continue
        footer = footer_stats(ctx, base, columns)
        missing = sorted(c for c in footer if (base.file_name, c) not in indexed)
        if missing:
            detail = f"no entry for {len(missing)} of its indexed columns: {', '.join(missing)}"
            found.append(Difference(CHECK, base.partition_path, base.file_name, detail))
        for column, computed in sorted(footer.items()):
            stats = indexed.get((base.file_name, column))
            mismatch = (
                _mismatch(_raw_timestamps(stats), _raw_footer(computed))
                if stats is not None
                else None
            )
            if mismatch:
                subject = f"{base.file_name} column {column}"
                found.append(Difference(CHECK, base.partition_path, subject, mismatch))
    return found


def _log_file_differences(
    ctx: TableContext, indexed: Mapping[tuple[str, str], ColumnStats], log_files: Sequence[LogFile]
) -> list[Difference]:
    """Each indexed (log file, column) entry against the ranges of the records in the log file's
    data blocks. A log file without entries is not compared: Hudi writes none for log files
    appended before `column_stats` was enabled, by log compaction, or holding only deletes."""
    by_file: dict[str, dict[str, ColumnStats]] = {}
    for (name, column), stats in indexed.items():
        by_file.setdefault(name, {})[column] = stats
    found: list[Difference] = []
    schema = None
    for log in log_files:
        entries = by_file.get(log.file_name)
        if not entries:
            continue
        schema = schema or with_meta_fields(table_arrow_schema(ctx, None) or pa.schema([]))
        computed = {s.column_name: s for s in log_file_ranges(ctx, log, schema)}
        for column, stats in sorted(entries.items()):
            mine = computed.get(column)
            mismatch = (
                _mismatch(_raw_timestamps(stats), _as_footer(mine))
                if mine is not None
                else "an entry for a column the log file's records do not have"
            )
            if mismatch:
                subject = f"{log.file_name} column {column}"
                found.append(Difference(CHECK, log.partition_path, subject, mismatch))
    return found


def log_file_ranges(ctx: TableContext, log: LogFile, schema: pa.Schema) -> list[ColumnStats]:
    """The column ranges of the records in a log file's data blocks (all blocks together)."""
    with ctx.storage.open_input(ctx.path(log.relative_path)) as handle:
        blocks = [
            b
            for b in iter_blocks(handle, read_content=True)
            if not b.is_corrupt and b.block_type in DATA_BLOCKS
        ]
    records = log_records(blocks, schema, None)
    records = records.drop_columns(
        [c for c in (SEQ, DELETED, NATURAL) if c in records.column_names]
    )
    return table_column_ranges(log.file_name, records)


def _raw_timestamps(stats: ColumnStats) -> ColumnStats:
    """Timestamps as the raw long pyhudi (and Hudi 0.14's append handle) records: Hudi 1.x stores
    a log file's timestamp range as a timestamp (microseconds since the epoch)."""
    low, high = stats.min_value, stats.max_value
    if not isinstance(low, dt.datetime) and not isinstance(high, dt.datetime):
        return stats
    return replace(stats, min_value=_epoch_micros(low), max_value=_epoch_micros(high))


def _epoch_micros(value: Any) -> Any:
    if not isinstance(value, dt.datetime):
        return value
    moment = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _raw_footer(stats: FooterStats) -> FooterStats:
    """A footer's timestamps as raw epoch microseconds: a timestamp range is a raw long in Hudi
    0.14's records and in Hudi 1.x's of the V1 index version, a timestamp in V2's."""
    return replace(
        stats, min_value=_epoch_micros(stats.min_value), max_value=_epoch_micros(stats.max_value)
    )


def _as_footer(stats: ColumnStats) -> FooterStats:
    return FooterStats(stats.min_value, stats.max_value, stats.null_count, stats.value_count)


def footer_stats(ctx: TableContext, base: BaseFile, columns: set[str]) -> dict[str, FooterStats]:
    """Statistics of the leaf columns of `base` named in `columns`, from its parquet footer."""
    with ctx.storage.open_input(ctx.path(base.relative_path)) as handle:
        metadata = pq.ParquetFile(handle).metadata
    result: dict[str, FooterStats] = {}
    for index in range(metadata.num_columns):
        column = metadata.schema.column(index).path
        if column in columns:
            result[column] = _fold(metadata, index)
    return result


def _fold(metadata: Any, index: int) -> FooterStats:
    mins, maxes, nulls, values = [], [], 0, 0
    for group in range(metadata.num_row_groups):
        chunk = metadata.row_group(group).column(index)
        values += chunk.num_values
        stats = chunk.statistics
        if stats is None:
            continue
        nulls += stats.null_count or 0
        if stats.has_min_max:
            mins.append(stats.min)
            maxes.append(stats.max)
    return FooterStats(min(mins, default=None), max(maxes, default=None), nulls, values)


def _mismatch(stats: ColumnStats, computed: FooterStats) -> str | None:
    pairs = [
        ("min", stats.min_value, computed.min_value),
        ("max", stats.max_value, computed.max_value),
        ("null count", stats.null_count, computed.null_count),
        ("value count", stats.value_count, computed.value_count),
    ]
    wrong = [
        f"{name} {mine!r} in the metadata table, {theirs!r} in the footer"
        for name, mine, theirs in pairs
        if mine != theirs
    ]
    return "; ".join(wrong) or None
