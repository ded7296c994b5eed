"""Key-prefix and key-set reads of real Hudi-written metadata tables equal the full merged reads."""

from __future__ import annotations

import pytest
from tests.helpers.metadata import WITH_METADATA

from pyhudi.codec.metadata_keys import column_index_id
from pyhudi.metadata import MetadataTable
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups, has_record_index
from pyhudi.table.context import TableContext

#: Every fixture with a metadata table has a column_stats partition; the Lance one's is empty.
WITH_COLUMN_STATS = [n for n in WITH_METADATA if "lance" not in n]


@pytest.mark.parametrize("name", WITH_COLUMN_STATS)
def test_column_stats_read_by_column_prefix_equals_the_full_read_filtered(hudi_tables, name):
    ctx = TableContext.open(str(hudi_tables[name]))
    full = MetadataTable.open(ctx).records("column_stats")
    columns = sorted({r.column_stats.column_name for r in full.values() if r.column_stats})
    assert columns
    for column in columns[:4]:
        prefix = column_index_id(column)
        expected = {k: r for k, r in full.items() if k.startswith(prefix)}
        assert expected
        assert MetadataTable.open(ctx).records_with_prefix("column_stats", [prefix]) == expected
    both = [column_index_id(c) for c in columns[:2]]
    got = MetadataTable.open(ctx).records_with_prefix("column_stats", both)
    assert got == {k: r for k, r in full.items() if k.startswith(tuple(both))}
    assert MetadataTable.open(ctx).records_with_prefix("column_stats", ["no-such-prefix"]) == {}


@pytest.mark.parametrize("name", WITH_METADATA)
def test_record_index_lookup_of_every_key_equals_the_merged_partition(hudi_tables, name):
    ctx = TableContext.open(str(hudi_tables[name]))
    assert has_record_index(ctx)
    full = MetadataTable.open(ctx).records("record_index")
    groups = RecordIndexFileGroups.open(ctx)
    wanted = [*sorted(full), "no-such-key"]
    assert groups.lookup(wanted) == {k: r.location for k, r in full.items()}
