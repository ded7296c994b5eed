"""`pyhudi.read` of every real table with a metadata table equals hudi-rs whether the files are
listed through the metadata table (`hoodie.metadata.enable`, the reader default) or on storage."""

from __future__ import annotations

import pytest
from tests.helpers.metadata import WITH_METADATA
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi


@pytest.mark.parametrize("name", WITH_METADATA)
def test_reads_with_and_without_the_metadata_listing_equal_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    theirs = hudi_rs_table(path)
    assert theirs.num_rows
    for enabled in ("true", "false"):
        ours = pyhudi.read(spark, path, {"hoodie.metadata.enable": enabled}).toArrow()
        assert ours.column_names == theirs.column_names, enabled
        assert rows(ours) == rows(theirs), enabled


@pytest.mark.parametrize(
    ("name", "column"),
    [("mor_avro__v8_trips_8i3u1d", "uuid"), ("cow__v9_txns_simple_meta", "txn_id")],
)
def test_reads_with_data_skipping_return_the_same_rows(spark, hudi_tables, name, column):
    path = str(hudi_tables[name])
    keys = sorted(hudi_rs_table(path).column(column).to_pylist())
    for filters in ([(column, "=", keys[0])], [(column, ">=", keys[-2])], [(column, "<", keys[0])]):
        skipped = pyhudi.read(spark, path, {"hoodie.enable.data.skipping": "true"}, filters=filters)
        plain = pyhudi.read(spark, path, filters=filters)
        assert rows(skipped.toArrow()) == rows(plain.toArrow()), filters
    assert (
        pyhudi.read(
            spark, path, {"hoodie.enable.data.skipping": "true"}, filters=[(column, "=", keys[0])]
        ).count()
        == 1
    )
