"""`pyhudi.read(..., columns=)` over a METADATA_ONLY bootstrap table: without a meta column (or a
partition column only in folder names) the query is the plain scan of the source files; with one,
the derived values are the skeletons' own."""

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
    meta = pyhudi.read(spark, target, columns=["_hoodie_file_name", "key"])
    assert "_metadata" in _executed_plan(meta)


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
