"""`df.write.format("hudi")` through Spark's Python Data Source API."""

from __future__ import annotations

from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.spark.source_operations import runs_as_data_source


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


def test_operations_needing_a_join_run_as_pyhudi_write(spark, tmp_path):
    """Spark's Python Data Source API cannot look keys up inside a write: in a registered session
    `save()` runs those operations through `pyhudi.write` (unregistered, the data source refuses
    them naming it)."""
    pyhudi.register(spark)
    path = str(tmp_path / "t")
    options = trips_options()
    df_of(spark, trips(0, 5)).write.format("hudi").options(
        **options, **{"hoodie.datasource.write.operation": "insert"}
    ).mode("append").save(path)
    for operation, rows in (("upsert", 5), ("delete", 3)):
        given = {**options, "hoodie.datasource.write.operation": operation}
        assert not runs_as_data_source(path, given, overwrite=False)
        df_of(spark, trips(0, 2, ts=7)).write.format("hudi").options(**given).mode("append").save(
            path
        )
        assert hudi_rs_table(path).num_rows == rows
    assert [c.action.value for c in pyhudi.HudiTable(path).commits()] == ["commit"] * 3
