"""`df.write.format("hudi")` through Spark's Python Data Source API."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table

import pyhudi


def test_append_and_overwrite_modes(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "bulk_insert"}
    df_of(spark, trips(0, 20)).write.format("hudi").options(**options).mode("append").save(path)
    df_of(spark, trips(20, 10)).write.format("hudi").options(
        **{**options, "hoodie.datasource.write.operation": "insert"}
    ).mode("append").save(path)
    assert hudi_rs_table(path).num_rows == 30
    df_of(spark, trips(100, 4)).write.format("hudi").options(**options).mode("overwrite").save(path)
    commits = pyhudi.HudiTable(path).commits()
    assert [c.action.value for c in commits] == ["commit", "commit", "replacecommit"]
    assert sorted(hudi_rs_table(path).column("uuid").to_pylist()) == [
        f"id-{i:05d}" for i in range(100, 104)
    ]
    first = commits[0].time
    assert pyhudi.read(spark, path, {"as.of.instant": first}).count() == 20


def test_operations_needing_a_join_name_pyhudi_write(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    df_of(spark, trips(0, 5)).write.format("hudi").options(
        **options, **{"hoodie.datasource.write.operation": "insert"}
    ).mode("append").save(path)
    for operation in ("upsert", "delete"):
        with pytest.raises(
            AnalysisException,
            match=r"UnsupportedOperationError: .*pyhudi\.write\(df, path, options\)",
        ):
            df_of(spark, trips(0, 2)).write.format("hudi").options(
                **options, **{"hoodie.datasource.write.operation": operation}
            ).mode("append").save(path)
    assert [c.action.value for c in pyhudi.HudiTable(path).commits()] == ["commit"]
    assert hudi_rs_table(path).num_rows == 5
