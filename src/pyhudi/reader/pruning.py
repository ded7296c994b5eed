"""Partition pruning: filters on partition columns select partition folders before any file is read.

A filter is `(column, op, value)` with op one of `=`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`
(the shape hudi-rs and pyarrow use). Only filters on partition fields whose folder value is the
column value (simple and complex key generators) prune; all filters are also applied to rows.
"""

from __future__ import annotations

import operator
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from pyhudi.exceptions import ConfigError
from pyhudi.keygen.spec import DEFAULT_PARTITION_PATH, KeyGenKind, kind_of_class
from pyhudi.table.context import TableContext

PartitionFilter = tuple[str, str, Any]
_OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")
#: The comparison operators of a filter tuple, as the functions that apply them (to Spark columns
#: and to Arrow arrays alike: both overload the Python operators).
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def validate_filters(filters: Sequence[PartitionFilter]) -> tuple[PartitionFilter, ...]:
    checked = []
    for item in filters:
        if len(item) != 3 or str(item[1]).lower() not in _OPS:
            raise ConfigError(
                f"a filter is (column, op, value) with op in {', '.join(_OPS)}; got {item!r}"
            )
        checked.append((str(item[0]), str(item[1]).lower(), item[2]))
    return tuple(checked)


def check_filter_columns(schema: pa.Schema, filters: Sequence[PartitionFilter]) -> None:
    """Every filter names a column of the rows read (meta fields included): the one error both
    `pyhudi.read` and `pyhudi.read_arrow` give for any other name."""
    for column, _, _ in filters:
        if column not in schema.names:
            columns = ", ".join(schema.names) or "none: nothing was written yet"
            raise ConfigError(
                f"filter column {column!r} is not a column of the table (it has {columns})"
            )


def partition_values(ctx: TableContext, partition_path: str) -> dict[str, str | None] | None:
    """Column values encoded in a partition path, or None when the path does not encode them."""
    fields = ctx.config.partition_fields
    kind = _kind(ctx)
    if not fields or kind in (KeyGenKind.TIMESTAMP, KeyGenKind.CUSTOM, KeyGenKind.NON_PARTITION):
        return None
    segments = partition_path.split("/") if partition_path else []
    if len(segments) != len(fields):
        return None
    values: dict[str, str | None] = {}
    for name, segment in zip(fields, segments):
        if ctx.config.hive_style_partitioning:
            prefix = f"{name}="
            if not segment.startswith(prefix):
                return None
            segment = segment[len(prefix) :]
        if ctx.config.url_encode_partitioning:
            segment = urllib.parse.unquote(segment)
        values[name] = None if segment == DEFAULT_PARTITION_PATH else segment
    return values


def _kind(ctx: TableContext) -> KeyGenKind | None:
    name = ctx.config.key_generator_class
    try:
        return kind_of_class(name) if name else None
    except ConfigError:
        return None


def prune_partitions(
    ctx: TableContext, partitions: Sequence[str], filters: Sequence[PartitionFilter]
) -> list[str]:
    relevant = [f for f in filters if f[0] in ctx.config.partition_fields]
    if not relevant:
        return list(partitions)
    kept = []
    for partition in partitions:
        values = partition_values(ctx, partition)
        if values is None or all(
            _matches(values.get(column), op, value) for column, op, value in relevant
        ):
            kept.append(partition)
    return kept


def _matches(actual: str | None, op: str, expected: Any) -> bool:
    if actual is None:
        return False
    if op in ("in", "not in"):
        options = [_comparable(actual, v) for v in expected]
        found = any(a == b for a, b in options)
        return found if op == "in" else not found
    left, right = _comparable(actual, expected)
    return {
        "=": left == right,
        "==": left == right,
        "!=": left != right,
        "<": left < right,
        "<=": left <= right,
        ">": left > right,
        ">=": left >= right,
    }[op]


def _comparable(actual: str, expected: Any) -> tuple[Any, Any]:
    """Compare as numbers when the filter value is numeric, else as strings."""
    if isinstance(expected, bool):
        return actual.lower(), str(expected).lower()
    if isinstance(expected, int | float):
        try:
            return float(actual), float(expected)
        except ValueError:
            return actual, str(expected)
    return actual, str(expected)
