"""Data skipping (`hoodie.enable.data.skipping`) never changes a read's rows: on the real tables with
column stats, a random filter on an indexed data column matches the same rows in the slices kept as
in all slices (each slice read and merged Spark-free), and selective filters do skip slices."""

from __future__ import annotations

import datetime as dt
import operator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.file_group.slice_reader import read_slice
from pyhudi.metadata import MetadataTable
from pyhudi.reader.data_skipping import stats_index
from pyhudi.reader.planner import plan_read
from pyhudi.reader.slices import slice_tasks
from pyhudi.table.context import TableContext

TABLES = [
    "cow__v9_txns_complex_meta",
    "cow__v9_txns_nonpart_meta",
    "cow__v9_txns_simple_meta",
    "mor_avro__v8_trips_8i3u1d",
    "mor_avro__v9_txns_complex_meta",
    "mor_avro__v9_txns_nonpart_meta",
    "mor_avro__v9_txns_simple_meta",
]
ON = {"hoodie.enable.data.skipping": "true"}
OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "not in"]
_COMPARE = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Table:
    """A real table's slices read once: (partition, file id) -> rows as Python dicts."""

    def __init__(self, root: str) -> None:
        self.ctx = TableContext.open(root)
        plan = plan_read(self.ctx)
        self.rows: dict[tuple[str, str], list[dict[str, Any]]] = {
            (t.partition_path, t.file_id): read_slice(t).to_pylist()
            for t in slice_tasks(self.ctx, plan)
        }
        indexed = {c for _, c in stats_index(MetadataTable.open(self.ctx))}
        schema: pa.Schema = plan.data_schema
        self.columns = sorted(
            f.name
            for f in schema
            if f.name in indexed and not pa.types.is_nested(f.type) and not f.name.startswith("_")
        )

    def matching(self, groups, column: str, op: str, value: Any) -> set[str]:  # type: ignore[no-untyped-def]
        return {
            row["_hoodie_record_key"]
            for group in groups
            for row in self.rows[group]
            if _matches(row.get(column), op, value)
        }


def _matches(actual: Any, op: str, value: Any) -> bool:
    if actual is None:
        return False
    if op in ("in", "not in"):
        found = actual in value
        return found if op == "in" else not found
    return bool(_COMPARE[op](actual, value))


_CACHE: dict[str, Table] = {}


def _table(hudi_tables, name: str) -> Table:
    if name not in _CACHE:
        _CACHE[name] = Table(str(hudi_tables[name]))
    return _CACHE[name]


@pytest.mark.parametrize("name", TABLES)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_skipping_keeps_every_matching_row(hudi_tables, name, data):
    table = _table(hudi_tables, name)
    assert table.columns
    column = data.draw(st.sampled_from(table.columns))
    seen = sorted(
        {r[column] for rows in table.rows.values() for r in rows if r.get(column) is not None},
        key=repr,
    )
    op = data.draw(st.sampled_from(OPS))
    pick = st.sampled_from(seen)
    value = data.draw(st.lists(pick, min_size=1, max_size=3) if op in ("in", "not in") else pick)
    value = _nudge(value, data.draw(st.integers(-1, 1)))
    filters = [(column, op, value)]
    kept = plan_read(table.ctx, ON, filters)
    groups = [(s.partition_path, s.file_id) for s in (*kept.base_only, *kept.with_logs)]
    assert set(groups) <= set(table.rows)
    assert table.matching(groups, column, op, value) == table.matching(
        table.rows, column, op, value
    )


def _nudge(value: Any, step: int) -> Any:
    """A value next to a seen one (between two stored values, or outside every range)."""
    if isinstance(value, bool | list) or step == 0:
        return value
    if isinstance(value, int):
        return value + step
    if isinstance(value, dt.datetime):
        return value + dt.timedelta(microseconds=step)
    if isinstance(value, dt.date):
        return value + dt.timedelta(days=step)
    if isinstance(value, str):
        return value + "\x00" if step > 0 else value[:-1]
    return value


@pytest.mark.parametrize("name", ["cow__v9_txns_simple_meta", "mor_avro__v8_trips_8i3u1d"])
def test_a_selective_filter_skips_slices(hudi_tables, name):
    table = _table(hudi_tables, name)
    key_column = "txn_id" if "txn" in name else "uuid"
    group, rows = next((g, r) for g, r in table.rows.items() if r)
    value = rows[0][key_column]
    everything = plan_read(table.ctx, None, [(key_column, "=", value)])
    skipped = plan_read(table.ctx, ON, [(key_column, "=", value)])
    all_groups = [
        (s.partition_path, s.file_id) for s in (*everything.base_only, *everything.with_logs)
    ]
    kept = [(s.partition_path, s.file_id) for s in (*skipped.base_only, *skipped.with_logs)]
    assert group in kept and len(kept) < len(all_groups)
