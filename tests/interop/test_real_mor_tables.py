"""Every real merge-on-read table reads through pyhudi exactly as hudi-rs reads it."""

from __future__ import annotations

import pytest
from tests.helpers.oracle import assert_same_rows, hudi_rs_table
from tests.interop.test_real_tables import refuses_incremental_without_meta_fields

import pyhudi

MOR = [
    "mor_avro__v6_trips_8i1u",
    "mor_avro__v6_trips_8i3d",
    "mor_avro__v8_trips_8i3u1d",
    "mor_avro__v9_txns_complex_meta",
    "mor_avro__v9_txns_complex_nometa",
    "mor_avro__v9_txns_nonpart_meta",
    "mor_avro__v9_txns_nonpart_nometa",
    "mor_avro__v9_txns_simple_meta",
    "mor_avro__v9_txns_simple_nometa",
    "mor_parquet__v6_complexkeygen_hivestyle",
    "mor_parquet__v6_empty",
    "mor_parquet__v6_nonpartitioned",
    "mor_parquet__v6_nonpartitioned_rollback",
    "mor_parquet__v6_simplekeygen_hivestyle_no_metafields",
    "mor_parquet__v6_simplekeygen_nonhivestyle",
    "mor_parquet__v6_simplekeygen_nonhivestyle_overwritetable",
]


@pytest.mark.parametrize("name", MOR)
def test_real_mor_snapshot_matches_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    assert_same_rows(pyhudi.read(spark, path).toArrow(), hudi_rs_table(path))


@pytest.mark.parametrize("name", MOR)
def test_real_mor_snapshot_through_the_data_source_matches_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    assert_same_rows(spark.read.format("hudi").load(path).toArrow(), hudi_rs_table(path))


@pytest.mark.parametrize("name", MOR)
def test_real_mor_read_optimized_matches_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    ours = pyhudi.read(spark, path, {"hoodie.datasource.query.type": "read_optimized"}).toArrow()
    assert_same_rows(ours, hudi_rs_table(path, read_optimized=True))


@pytest.mark.parametrize("name", [n for n in MOR if "empty" not in n])
def test_real_mor_time_travel_and_incremental_match_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    commits = pyhudi.HudiTable(path).commits()
    for instant in commits:
        assert_same_rows(
            pyhudi.read(spark, path, {"as.of.instant": instant.time}).toArrow(),
            hudi_rs_table(path, as_of=instant.time),
        )
    if refuses_incremental_without_meta_fields(lambda p, o: pyhudi.read(spark, p, o), path):
        return
    times = [i.completion_time or i.time for i in commits]
    for start in ["00000000000000000", *times[:-1]]:
        options = {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": start,
        }
        assert_same_rows(
            pyhudi.read(spark, path, options).toArrow(), hudi_rs_table(path, start=start)
        )
