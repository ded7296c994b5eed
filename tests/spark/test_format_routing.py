"""`df.write.format("hudi")` and `writeStream.format("hudi")` in a registered session run every
operation, index and table type `pyhudi.write` / `stream_write` run, with Hudi's option keys and
Spark's save modes (the default one included); `org.apache.hudi` is the same format; the
writers of other formats are untouched."""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi.exceptions import ConfigError, TableExistsError

SCHEMA = "uuid string, city string, ts long, fare double"


def _options(table_type: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": "ts",
        **extra,
    }


def _rows(spark, path: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = spark.read.format("org.apache.hudi").load(path)
    return sorted(tuple(r) for r in df.select("uuid", "city", "ts", "fare").collect())


@pytest.mark.parametrize(
    ("table_type", "index"),
    [
        ("COPY_ON_WRITE", {}),
        ("MERGE_ON_READ", {}),
        ("MERGE_ON_READ", {"hoodie.index.type": "BLOOM"}),
        ("COPY_ON_WRITE", {"hoodie.index.type": "GLOBAL_SIMPLE"}),
        ("MERGE_ON_READ", {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}),
    ],
)
def test_save_runs_hudi_default_operation_and_the_others(spark, tmp_path, table_type, index):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    path = str(tmp_path / "trips")
    options = _options(table_type, **index)
    first = spark.createDataFrame(
        [("id-1", "sf", 1, 9.5), ("id-2", "nyc", 1, 7.0), ("id-3", "la", 1, 3.0)], SCHEMA
    )
    # Hudi's quickstart: partitionBy names the partition field; no operation means upsert.
    first.write.format("hudi").options(**options).partitionBy("city").mode("overwrite").save(path)
    partitioned = {**options, "hoodie.datasource.write.partitionpath.field": "city"}
    changes = spark.createDataFrame([("id-1", "sf", 2, 11.0), ("id-4", "nyc", 2, 4.5)], SCHEMA)
    changes.write.format("hudi").options(**partitioned).mode("append").save(path)
    gone = first.filter("uuid = 'id-2'")
    gone.write.format("org.apache.hudi").options(**partitioned).option(
        "hoodie.datasource.write.operation", "delete"
    ).mode("append").save(path)
    assert _rows(spark, path) == [
        ("id-1", "sf", 2, 11.0),
        ("id-3", "la", 1, 3.0),
        ("id-4", "nyc", 2, 4.5),
    ]
    commits = pyhudi.HudiTable(path).commits()
    assert [c.action for c in commits[-3:]] == (
        ["commit"] * 3 if table_type == "COPY_ON_WRITE" else ["deltacommit"] * 3
    )
    # Spark's default save mode: an existing table is an error, as with Hudi's bundle.
    with pytest.raises(TableExistsError):
        changes.write.format("hudi").options(**partitioned).save(path)
    with pytest.raises(ConfigError, match="different partition fields"):
        changes.write.format("hudi").options(**partitioned).partitionBy("fare").mode("append").save(
            path
        )
    assert pyhudi.HudiTable(path).commits() == commits


def test_write_stream_runs_stream_write(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    source = str(tmp_path / "in")
    rows = spark.createDataFrame([("id-1", "sf", 1, 9.5), ("id-2", "nyc", 1, 7.0)], SCHEMA)
    rows.write.parquet(source)
    query = (
        spark.readStream.schema(rows.schema)
        .parquet(source)
        .writeStream.format("hudi")
        .options(**_options("MERGE_ON_READ"))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .outputMode("append")
        .trigger(availableNow=True)
        .start(str(tmp_path / "table"))
    )
    query.awaitTermination()
    assert _rows(spark, str(tmp_path / "table")) == sorted(tuple(r) for r in rows.collect())
    with pytest.raises(ConfigError, match="output mode append"):
        spark.readStream.schema(rows.schema).parquet(source).writeStream.format("hudi").options(
            **_options("MERGE_ON_READ")
        ).option("checkpointLocation", str(tmp_path / "c2")).outputMode("complete").start(
            str(tmp_path / "other")
        )


def test_other_formats_are_spark_own(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    df = spark.createDataFrame([(1, "a")], "n int, s string")
    df.write.format("parquet").mode("overwrite").option("compression", "gzip").save(
        str(tmp_path / "p")
    )
    df.write.mode("append").parquet(str(tmp_path / "p"))
    assert spark.read.parquet(str(tmp_path / "p")).count() == 2


def test_format_hudi_loads_part_of_a_table_through_a_glob(spark, tmp_path):  # type: ignore[no-untyped-def]
    pyhudi.register(spark)
    path = str(tmp_path / "globbed")
    rows = [("a", 1, "sf"), ("b", 1, "la"), ("c", 1, "sf")]
    pyhudi.write(
        spark.createDataFrame(rows, "id string, ts long, city string"),
        path,
        {
            "hoodie.table.name": "globbed",
            "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "city",
        },
    )
    sf = spark.read.format("hudi").load(path + "/sf/*")
    assert sorted(r.id for r in sf.collect()) == ["a", "c"]
    listed = spark.read.format("hudi").option("hoodie.datasource.read.paths", path + "/la").load()
    assert [r.id for r in listed.collect()] == ["b"]
    assert spark.read.format("hudi").load(path + "/*/*").count() == 3
