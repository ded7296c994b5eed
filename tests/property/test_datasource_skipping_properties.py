"""The `hudi` Spark data source's pushed filters skip file slices by column stats as
`pyhudi.read(filters=...)` does, and never lose a row: the same Hypothesis property as
`test_data_skipping_properties`, with the filters going through `pushFilters` (Spark's Python
`Filter` objects) and the slices taken from the reader's input partitions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
)
from tests.property.test_data_skipping_properties import ON, TABLES, _nudge, _table

from pyhudi.spark.source import PruningHudiDataSource

FILTERS = {
    "=": EqualTo,
    "<": LessThan,
    "<=": LessThanOrEqual,
    ">": GreaterThan,
    ">=": GreaterThanOrEqual,
    "in": In,
}


def _kept_groups(path: str, options: dict[str, str], pushed: list[Filter]) -> list[tuple[str, str]]:
    source = PruningHudiDataSource({"path": path, **options})
    reader = source.reader(source.schema())
    assert list(reader.pushFilters(pushed)) == pushed  # Spark still applies every filter
    return [
        (task.partition_path, task.file_id)
        for partition in reader.partitions()
        for task in partition.tasks  # type: ignore[attr-defined]
    ]


@pytest.mark.parametrize("name", TABLES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_pushed_filters_keep_every_matching_row(hudi_tables, name, data):
    table = _table(hudi_tables, name)
    column = data.draw(st.sampled_from(table.columns))
    seen = sorted(
        {r[column] for rows in table.rows.values() for r in rows if r.get(column) is not None},
        key=repr,
    )
    op = data.draw(st.sampled_from(sorted(FILTERS)))
    pick = st.sampled_from(seen)
    value: Any = data.draw(st.lists(pick, min_size=1, max_size=3) if op == "in" else pick)
    value = _nudge(value, data.draw(st.integers(-1, 1)))
    pushed = FILTERS[op]((column,), tuple(value) if op == "in" else value)
    kept = _kept_groups(str(hudi_tables[name]), ON, [pushed])
    assert set(kept) <= set(table.rows)
    assert table.matching(kept, column, op, value) == table.matching(table.rows, column, op, value)


@pytest.mark.parametrize("name", ["cow__v9_txns_simple_meta", "mor_avro__v8_trips_8i3u1d"])
def test_a_pushed_selective_filter_skips_slices(hudi_tables, name):
    table = _table(hudi_tables, name)
    key_column = "txn_id" if "txn" in name else "uuid"
    group, rows = next((g, r) for g, r in table.rows.items() if r)
    pushed: list[Filter] = [EqualTo((key_column,), rows[0][key_column])]
    everything = _kept_groups(str(hudi_tables[name]), {}, pushed)
    kept = _kept_groups(str(hudi_tables[name]), ON, pushed)
    assert group in kept and len(kept) < len(everything) == len(table.rows)
