"""The real Hudi 0.14 tables (table version 6, written without a metadata table): a pyhudi upsert
with default options (`hoodie.metadata.enable` defaults to true, as Hudi's) initialises their
metadata table from the listing of the Hudi-written files, then maintains it; the validator finds
no difference and hudi-rs reads what pyhudi reads."""

from __future__ import annotations

import shutil

import pytest
from tests.helpers.oracle import META, hudi_rs_table, rows

import pyhudi
from pyhudi.metadata import has_metadata_table, validate
from pyhudi.table.context import TableContext

V6_TABLES = [
    "cow__v6_complexkeygen_hivestyle",
    "cow__v6_nonpartitioned",
    "cow__v6_simplekeygen_nonhivestyle",
    "cow__v6_simplekeygen_nonhivestyle_overwritetable",
    "cow__v6_timebasedkeygen_nonhivestyle",
    "mor_avro__v6_trips_8i3d",
    "mor_parquet__v6_complexkeygen_hivestyle",
    "mor_parquet__v6_nonpartitioned_rollback",
    "mor_parquet__v6_simplekeygen_nonhivestyle",
]


def _same_rows(spark, path: str) -> int:  # type: ignore[no-untyped-def]
    ours = pyhudi.read(spark, path).toArrow()
    key = "_hoodie_record_key"
    columns = [c for c in ours.column_names if c in META]
    assert rows(ours, key=key, columns=columns) == rows(
        hudi_rs_table(path), key=key, columns=columns
    )
    return ours.num_rows


@pytest.mark.parametrize("name", V6_TABLES)
def test_a_pyhudi_upsert_into_a_real_v6_table_builds_an_exact_metadata_table(
    spark, hudi_tables, tmp_path, name
):
    path = str(tmp_path / name)
    shutil.copytree(hudi_tables[name], path)
    assert not has_metadata_table(TableContext.open(path))
    count = _same_rows(spark, path)
    picked = pyhudi.read(spark, path).drop(*META).limit(3)
    data = spark.createDataFrame(picked.collect(), picked.schema)  # not lazy over the table
    result = pyhudi.write(data, path, {"hoodie.datasource.write.operation": "upsert"})
    ctx = TableContext.open(path)
    assert ctx.config.metadata_partitions == ("files",) and has_metadata_table(ctx)
    report = validate(path)
    assert report.differences == (), report.differences
    assert _same_rows(spark, path) == count
    assert result.instant_time in {i.time for i in ctx.active.timeline.commits()}
