"""Reads of a METADATA_ONLY bootstrap table: a query (whole frame or `pyhudi.read(..., columns=)`)
that uses no meta column (or partition column only in folder names) is the plain scan of the
source files; one that does reads the row index only for `_hoodie_commit_seqno`, never Spark's
`_metadata`, and gets the skeletons' own values."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from tests.helpers.bootstrap import DATA_COLUMNS, bootstrap_options, existing_table, source_rows

import pyhudi
from pyhudi.exceptions import ConfigError


@pytest.fixture(scope="module")
def bootstrapped(spark, tmp_path_factory) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("projection")
    source = existing_table(spark, str(root / "src"), hive=True)
    target = str(root / "hudi")
    pyhudi.write(spark.createDataFrame([], "x int"), target, bootstrap_options(source))
    return source, target


def _executed_plan(frame) -> str:  # type: ignore[no-untyped-def]
    return frame._jdf.queryExecution().executedPlan().toString()


def test_data_columns_alone_scan_only_those_columns_of_the_source(spark, bootstrapped) -> None:
    source, target = bootstrapped
    frame = pyhudi.read(spark, target, columns=["qty", "amount"])
    assert frame.columns == ["qty", "amount"]
    query = frame.agg(F.count(F.lit(1)), F.sum("qty"))
    plan = _executed_plan(query)
    assert "_metadata" not in plan and "row_index" not in plan, plan
    assert "ReadSchema: struct<qty:int>" in plan, plan
    assert query.collect()[0][1] == sum(range(200))
    expected = sorted((r["qty"], r["amount"]) for r in source_rows(spark, source, True))
    assert sorted(tuple(r) for r in frame.collect()) == expected


def test_meta_and_folder_columns_keep_their_derived_values(spark, bootstrapped) -> None:
    _, target = bootstrapped
    whole = pyhudi.read(spark, target)
    for columns in (["_hoodie_record_key", "qty"], ["dt", "key"], ["_hoodie_commit_seqno"]):
        frame = pyhudi.read(spark, target, columns=columns)
        assert frame.columns == columns
        assert sorted(frame.collect()) == sorted(whole.select(*columns).collect())
    meta = _executed_plan(pyhudi.read(spark, target, columns=["_hoodie_file_name", "key"]))
    assert "input_file_name()" in meta and "ReadSchema: struct<key:string>" in meta, meta
    seqno = _executed_plan(pyhudi.read(spark, target, columns=["_hoodie_commit_seqno"]))
    assert "ReadSchema: struct<_tmp_metadata_row_index:bigint>" in seqno, seqno
    assert "_metadata#" not in meta + seqno and "file_path" not in meta + seqno


def test_the_whole_frame_scans_only_the_columns_a_query_uses(spark, bootstrapped) -> None:
    _, target = bootstrapped
    whole = pyhudi.read(spark, target)
    query = whole.agg(F.count(F.lit(1)), F.sum("qty"))
    plan = _executed_plan(query)
    assert "_metadata" not in plan and "row_index" not in plan, plan
    assert "input_file_name" not in plan and "ReadSchema: struct<qty:int>" in plan, plan
    assert tuple(query.collect()[0]) == (200, sum(range(200)))
    assert "ReadSchema: struct<>" in _executed_plan(whole.groupBy().count())
    meta = whole.select("_hoodie_record_key", "_hoodie_commit_seqno", "_hoodie_file_name")
    assert "_metadata#" not in _executed_plan(meta)
    assert meta.count() == 200 and meta.distinct().count() == 200


def test_a_filter_on_a_stored_column_reaches_the_parquet_scan(spark, bootstrapped) -> None:
    _, target = bootstrapped
    frame = pyhudi.read(spark, target, filters=[("qty", ">=", 150)])
    plan = _executed_plan(frame)
    assert "GreaterThanOrEqual(qty,150)" in plan.split("PushedFilters:")[1], plan
    whole = pyhudi.read(spark, target)
    assert sorted(frame.collect()) == sorted(whole.where(F.col("qty") >= 150).collect())
    assert frame.count() == 50


def test_a_filter_on_a_meta_column_outside_the_projection_still_applies(
    spark, bootstrapped
) -> None:
    _, target = bootstrapped
    filters = [("_hoodie_record_key", "=", "k0003")]
    assert pyhudi.read(spark, target, filters=filters, columns=["qty"]).collect() == [(3,)]
    assert sorted(pyhudi.read(spark, target, columns=DATA_COLUMNS).collect()) == sorted(
        pyhudi.read(spark, target).select(*DATA_COLUMNS).collect()
    )


def test_unknown_columns_are_a_config_error_naming_them(spark, bootstrapped) -> None:
    _, target = bootstrapped
    with pytest.raises(ConfigError, match=r"\['nope'\] are not in the table"):
        pyhudi.read(spark, target, columns=["qty", "nope"])
    with pytest.raises(ConfigError, match="not the string 'qty'"):
        pyhudi.read(spark, target, columns="qty")  # type: ignore[arg-type]
