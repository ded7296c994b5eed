"""pyhudi bootstraps a parquet table, Apache Hudi reads it: METADATA_ONLY (Hudi stitches pyhudi's
skeleton files to the source files through pyhudi's HFile bootstrap index) and FULL_RECORD, then
an upsert by pyhudi; Hudi 0.15 and 1.2 read exactly what pyhudi reads."""

from __future__ import annotations

import pytest

import pyhudi
from tests.judge.compare import assert_same_read, hudi_frame

SELECTORS = {
    "METADATA_ONLY": "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector",
    "FULL_RECORD": "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector",
}
SOURCE_SCHEMA = "id string, city string, ts long, fare double"


@pytest.fixture(scope="module")
def bootstrapped(spark, tmp_path_factory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("bootstrap")
    source = str(root / "source")
    rows = [(f"k{i:03d}", ["sf", "nyc"][i % 2], 1, i / 2) for i in range(40)]
    df = spark.createDataFrame(rows, SOURCE_SCHEMA).repartition(2)
    df.write.partitionBy("city").parquet(source)
    tables = {}
    for mode in ("METADATA_ONLY", "FULL_RECORD"):
        path = str(root / mode.lower())
        options = {
            "hoodie.table.name": f"boot_{mode.lower()}",
            "hoodie.datasource.write.operation": "bootstrap",
            "hoodie.bootstrap.base.path": source,
            "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.bootstrap.mode.selector": SELECTORS[mode],
        }
        pyhudi.write(spark.createDataFrame([], "x int"), path, options)
        upsert = {k: v for k, v in options.items() if "bootstrap" not in k}
        upsert["hoodie.datasource.write.operation"] = "upsert"
        changed = [(f"k{i:03d}", ["sf", "nyc"][i % 2], 2, i * 10.0) for i in range(0, 40, 7)]
        pyhudi.write(spark.createDataFrame(changed, SOURCE_SCHEMA), path, upsert)
        tables[mode] = path
    return tables


@pytest.mark.parametrize("version", ["hudi_0_15", "hudi_1_2"])
@pytest.mark.parametrize("mode", ["METADATA_ONLY", "FULL_RECORD"])
def test_hudi_reads_what_pyhudi_bootstrapped(spark, bootstrapped, mode, version, request) -> None:  # type: ignore[no-untyped-def]
    judge = request.getfixturevalue(version)
    path = bootstrapped[mode]
    theirs = hudi_frame(spark, judge.read(path, {"hoodie.metadata.enable": "true"}))
    ours = pyhudi.read(spark, path)
    what = f"{mode} bootstrap ({judge.version.name})"
    assert_same_read(ours, theirs, what, any_column_order=judge.version.name == "0.15")
    assert theirs.count() == 40
