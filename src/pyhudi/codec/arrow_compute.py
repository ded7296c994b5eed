"""Small Arrow compute helpers shared by writers and readers (vectorised, no per-row Python)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def field_values(table: pa.Table, name: str) -> pa.ChunkedArray | None:
    """The column `name`, or the nested field it names (`a.b`: field `b` of struct column `a`,
    null where `a` is null); None when the table has neither."""
    if name in table.column_names:
        return table.column(name)
    top, *nested = name.split(".")
    if not nested or top not in table.column_names:
        return None
    values = table.column(top)
    for part in nested:
        if not pa.types.is_struct(values.type) or values.type.get_field_index(part) < 0:
            return None
        values = pc.struct_field(values, part)
    return values


def has_field(schema: pa.Schema, name: str) -> bool:
    """`schema` has the column `name`, or the nested field it names (`a.b`)."""
    if name in schema.names:
        return True
    top, *nested = name.split(".")
    return (
        bool(nested)
        and top in schema.names
        and nested_type(schema.field(top).type, nested) is not None
    )


def nested_type(data_type: pa.DataType, path: list[str]) -> pa.DataType | None:
    """The type of the field at `path` inside the struct type `data_type` (`[]`: itself), or None."""
    for part in path:
        if not pa.types.is_struct(data_type) or data_type.get_field_index(part) < 0:
            return None
        data_type = data_type.field(part).type
    return data_type


def with_sort_columns(table: pa.Table, names: list[str]) -> tuple[pa.Table, list[str]]:
    """`table` with a top-level column for each nested field of `names` (`a.b`), which sorts
    and comparisons take by name; returns it and the column name standing for each field."""
    columns = []
    for index, name in enumerate(names):
        if name in table.column_names:
            columns.append(name)
            continue
        values = field_values(table, name)
        if values is None:
            raise KeyError(name)
        column = f"__pyhudi_sort_{index}"
        table = table.append_column(column, values)
        columns.append(column)
    return table, columns


def sort_indices_nulls_first(table: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Array:
    """`sort_indices` with nulls first on every key (per-key placement on pyarrow >= 25)."""
    try:
        return pc.sort_indices(
            table, sort_keys=[(name, order, "at_start") for name, order in sort_keys]
        )
    except (TypeError, ValueError, pa.ArrowInvalid):
        return pc.sort_indices(table, sort_keys=sort_keys, null_placement="at_start")


def last_of_runs(sorted_values: pa.Array) -> np.ndarray:
    """Mask of the last element of every run of equal values in an already sorted array."""
    n = len(sorted_values)
    last = np.ones(n, dtype=bool)
    if n > 1:
        last[:-1] = pc.not_equal(sorted_values.slice(0, n - 1), sorted_values.slice(1)).to_numpy(
            zero_copy_only=False
        )
    return last


def last_per_key(table: pa.Table, key: str, sort_keys: list[tuple[str, str]]) -> pa.Table:
    """The last row of each `key` after ordering by (key, *sort_keys); rows keep their input order."""
    column = table.column(key)
    if column.null_count == 0 and pc.count_distinct(column).as_py() == table.num_rows:
        return table  # every key once (e.g. one upsert's log block): nothing to choose
    order = sort_indices_nulls_first(table, [(key, "ascending"), *sort_keys])
    keys = table.column(key).take(order).combine_chunks()
    kept = order.to_numpy()[last_of_runs(keys)]
    return table.take(pa.array(np.sort(kept)))
