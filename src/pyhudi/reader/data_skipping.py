"""Data skipping: file slices whose column stats prove no row can match a read's filters are not read.

Used when `hoodie.enable.data.skipping` is true in the read options (Hudi 0.14's default: false)
and the table's metadata table has a `column_stats` partition. A slice is skipped when, for some
filter `(column, op, value)` on an indexed data column, every file of the slice (base and logs) has
a stats entry and none of those min/max ranges can hold a matching value. Conservative: a filter
whose value does not compare with the stats (another type), `!=` and `not in`, a file without an
entry for the column, or a float column (NaN is not in parquet min/max) never skips anything.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from pyhudi.codec.metadata_keys import column_index_id
from pyhudi.codec.metadata_records import ColumnStats
from pyhudi.config import read as rkeys
from pyhudi.metadata import MetadataTable, has_metadata_table
from pyhudi.model.file import FileSlice
from pyhudi.reader.pruning import PartitionFilter
from pyhudi.table.context import TableContext

COLUMN_STATS = "column_stats"
StatsIndex = dict[tuple[str, str], ColumnStats]  # (file name, column) -> stats


def skip_slices(
    ctx: TableContext,
    options: Mapping[str, str],
    slices: Sequence[FileSlice],
    filters: Sequence[PartitionFilter],
) -> list[FileSlice]:
    """The slices that may hold rows matching `filters` (all of them without data skipping)."""
    if not filters or not rkeys.DATA_SKIPPING.get(options) or not has_metadata_table(ctx):
        return list(slices)
    mdt = MetadataTable.open(ctx)
    if COLUMN_STATS not in mdt.partitions():
        return list(slices)
    index = stats_index(mdt, sorted({f[0] for f in filters if f[1] in _RANGE_OPS}))
    columns = {column for _, column in index}
    usable = [f for f in filters if f[0] in columns and f[1] in _RANGE_OPS]
    if not usable:
        return list(slices)
    return [s for s in slices if all(_may_match(s, f, index) for f in usable)]


def stats_index(mdt: MetadataTable, columns: Sequence[str] | None = None) -> StatsIndex:
    """(file name, column) -> live stats; of `columns` only (None: every indexed column), read by
    key prefix: a `column_stats` key starts with its column's hash (`column_index_id`)."""
    index: StatsIndex = {}
    records = (
        mdt.records(COLUMN_STATS)
        if columns is None
        else mdt.records_with_prefix(COLUMN_STATS, [column_index_id(c) for c in columns])
    )
    for record in records.values():
        stats = record.column_stats
        if stats is not None and not stats.is_deleted and stats.file_name and stats.column_name:
            index[(stats.file_name, stats.column_name)] = stats
    return index


def _may_match(piece: FileSlice, item: PartitionFilter, index: StatsIndex) -> bool:
    column, op, value = item
    names = [piece.base_file.file_name] if piece.base_file else []
    names += [log.file_name for log in piece.log_files]
    if not names:
        return True
    for name in names:
        stats = index.get((name, column))
        if stats is None or _range_may_match(stats, op, value):
            return True
    return False


def _range_may_match(stats: ColumnStats, op: str, value: Any) -> bool:
    low, high = stats.min_value, stats.max_value
    if low is None or high is None:
        # No min/max: no non-null value when the counts say so (or no value at all: a log file
        # of deletes only, Hudi 1.x), else unknown.
        if stats.value_count == 0:
            return False
        return not (stats.value_count > 0 and stats.null_count == stats.value_count)
    values = list(value) if op == "in" else [value]
    if not values:
        return False
    if not all(_comparable(low, v) and _comparable(high, v) for v in values):
        return True
    if op in ("=", "==", "in"):
        return any(low <= v <= high for v in values)
    return {"<": low < value, "<=": low <= value, ">": high > value, ">=": high >= value}[op]


_RANGE_OPS = ("=", "==", "<", "<=", ">", ">=", "in")
_NUMBERS = (int, Decimal)


def _comparable(stat: Any, value: Any) -> bool:
    """Only values Spark would compare the same way as Python: no float, no cross-type casts."""
    if isinstance(stat, bool) or isinstance(value, bool):
        return isinstance(stat, bool) and isinstance(value, bool)
    if isinstance(stat, _NUMBERS) and isinstance(value, _NUMBERS):
        return True
    if isinstance(stat, dt.datetime) or isinstance(value, dt.datetime):
        return (
            isinstance(stat, dt.datetime)
            and isinstance(value, dt.datetime)
            and ((stat.tzinfo is None) == (value.tzinfo is None))
        )
    if isinstance(stat, dt.date) and isinstance(value, dt.date):
        return True
    return isinstance(stat, str) and isinstance(value, str)
