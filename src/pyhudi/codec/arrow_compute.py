"""Small Arrow compute helpers shared by writers and readers (vectorised, no per-row Python)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


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
