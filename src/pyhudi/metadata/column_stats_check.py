"""The `column_stats` check: each latest parquet base file's footer statistics against the metadata
table's (file, column) entries (Hudi's validator compares min, max, null count and value count).

The columns compared are those the metadata table indexes (any live entry names them) that are
leaf columns of the file; a footer's statistics are folded over its row groups (min of mins, max
of maxes, sums of null and value counts), as Hudi's `ParquetUtils.readColumnStatsFromMetadata`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

from pyhudi.codec.metadata_records import ColumnStats, MetadataRecord
from pyhudi.metadata.report import Difference
from pyhudi.model.file import BaseFile
from pyhudi.table.context import TableContext

CHECK = "column_stats"


@dataclass(frozen=True)
class FooterStats:
    """One column of one parquet file, folded over its row groups."""

    min_value: Any
    max_value: Any
    null_count: int
    value_count: int


def column_stats_differences(
    ctx: TableContext, records: Iterable[MetadataRecord], latest: list[BaseFile]
) -> tuple[list[Difference], str | None]:
    """(differences, a note on what was not compared) for the latest base files `latest`."""
    indexed: dict[tuple[str, str], ColumnStats] = {}
    for record in records:
        stats = record.column_stats
        if stats is not None and not stats.is_deleted and stats.file_name and stats.column_name:
            indexed[(stats.file_name, stats.column_name)] = stats
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
            mismatch = _mismatch(stats, computed) if stats is not None else None
            if mismatch:
                subject = f"{base.file_name} column {column}"
                found.append(Difference(CHECK, base.partition_path, subject, mismatch))
    note = f"{len(not_parquet)} non-parquet base files not compared" if not_parquet else None
    return found, note


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
