"""`HudiTable.to_arrow` (no Spark) reads every real Hudi table as hudi-rs does, and as `pyhudi.read`."""

from __future__ import annotations

import pytest
from tests.helpers.fixtures import table_names
from tests.helpers.oracle import assert_same_rows, hudi_rs_table, rows
from tests.interop.test_real_tables import _options, refuses_incremental_without_meta_fields

import pyhudi

NAMES = table_names()
READ_OPTIMIZED = {"hoodie.datasource.query.type": "read_optimized"}


@pytest.mark.parametrize("name", NAMES)
def test_to_arrow_snapshot_and_read_optimized_match_hudi_rs(hudi_tables, name):
    path = str(hudi_tables[name])
    table = pyhudi.HudiTable(path)
    assert_same_rows(table.to_arrow(), hudi_rs_table(path))
    assert_same_rows(table.to_arrow(READ_OPTIMIZED), hudi_rs_table(path, read_optimized=True))


@pytest.mark.parametrize("name", [n for n in NAMES if "empty" not in n])
def test_to_arrow_time_travel_and_incremental_match_hudi_rs(hudi_tables, name):
    path = str(hudi_tables[name])
    commits = pyhudi.HudiTable(path).commits()
    for instant in commits:
        ours = pyhudi.read_arrow(path, _options(as_of=instant.time))
        assert_same_rows(ours, hudi_rs_table(path, as_of=instant.time))
    if refuses_incremental_without_meta_fields(pyhudi.read_arrow, path):
        return
    times = [i.completion_time or i.time for i in commits]
    for start in ["00000000000000000", *times[:-1]]:
        assert_same_rows(
            pyhudi.read_arrow(path, _options(start=start)), hudi_rs_table(path, start=start)
        )


@pytest.mark.parametrize(
    "name",
    [
        "cow__v6_complexkeygen_hivestyle",
        "cow__v6_simplekeygen_hivestyle_no_metafields",
        "cow__v6_timebasedkeygen_nonhivestyle",
        "cow__v9_txns_complex_meta",
        "mor_avro__v6_trips_8i3d",
        "mor_avro__v8_trips_8i3u1d",
        "mor_avro__v9_txns_simple_nometa",
        "mor_parquet__v6_nonpartitioned_rollback",
        "mor_parquet__v6_simplekeygen_nonhivestyle_overwritetable",
        "cow__v6_empty",
    ],
)
def test_to_arrow_equals_the_spark_read_schema_included(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    for options in ({}, READ_OPTIMIZED):
        ours = pyhudi.read_arrow(path, options)
        spark_read = pyhudi.read(spark, path, options).toArrow()
        assert ours.schema.equals(spark_read.schema, check_metadata=False)
        assert_same_rows(ours, spark_read)


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("mor") and "empty" not in n])
def test_to_arrow_columns_of_merged_slices_equal_the_full_read(hudi_tables, name):
    """Merged slices read only the requested base columns (plus key and ordering fields)."""
    path = str(hudi_tables[name])
    full = pyhudi.read_arrow(path)
    data = [c for c in full.column_names if not c.startswith("_hoodie")]
    for columns in (data[-2:], [data[0]], ["_hoodie_commit_time", data[-1]]):
        columns = [c for c in columns if c in full.column_names]
        ours = pyhudi.read_arrow(path, columns=columns)
        assert ours.column_names == columns
        assert sorted(map(str, rows(ours))) == sorted(map(str, rows(full.select(columns))))


def test_to_arrow_runs_without_pyspark(hudi_tables):
    import subprocess
    import sys

    path = str(hudi_tables["mor_avro__v6_trips_8i3d"])
    code = (
        "import sys, pyhudi; t = pyhudi.HudiTable(sys.argv[1]).to_arrow(); "
        "assert t.num_rows == 5, t.num_rows; assert 'pyspark' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code, path], check=True)
