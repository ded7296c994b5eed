"""spark.read.format("hudi") with hoodie.enable.data.skipping: pushed filters on data columns read
fewer file slices (input partitions) and return the rows hudi-rs returns for the same filter."""

from __future__ import annotations

from pyspark.sql import functions as F
from tests.helpers.oracle import hudi_rs_table
from tests.helpers.pyspark_versions import DATA_SOURCE

import pyhudi

V8 = "mor_avro__v8_trips_8i3u1d"
ON = {"hoodie.enable.data.skipping": "true"}


def test_pushed_filters_skip_slices_and_keep_the_rows(spark, hudi_tables):
    pyhudi.register(spark)
    path = str(hudi_tables[V8])
    theirs = hudi_rs_table(path).to_pylist()
    value = sorted(r["uuid"] for r in theirs)[2]
    for condition, keep in (
        (F.col("uuid") == value, lambda r: r["uuid"] == value),
        (F.col("uuid") > value, lambda r: r["uuid"] > value),
        (F.col("fare") <= 30.0, lambda r: r["fare"] is not None and r["fare"] <= 30.0),
    ):
        expected = sorted(r["uuid"] for r in theirs if keep(r))
        plain = spark.read.format("hudi").load(path).filter(condition)
        skipping = spark.read.format("hudi").options(**ON).load(path).filter(condition)
        assert sorted(r["uuid"] for r in skipping.collect()) == expected
        assert sorted(r["uuid"] for r in plain.collect()) == expected
    if DATA_SOURCE:
        everything = spark.read.format("hudi").load(path).filter(F.col("uuid") == value)
        skipped = spark.read.format("hudi").options(**ON).load(path).filter(F.col("uuid") == value)
    else:  # pyspark 3.5: `load` runs `pyhudi.read`, which skips by its `filters`
        everything = pyhudi.read(spark, path, filters=[("uuid", "=", value)])
        skipped = pyhudi.read(spark, path, ON, filters=[("uuid", "=", value)])
    assert skipped.rdd.getNumPartitions() < everything.rdd.getNumPartitions()
