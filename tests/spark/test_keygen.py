"""Record keys and partition paths equal what Hudi 0.14 wrote for the same config (the real tables)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from tests.helpers.builders import df_of, trips_options

import pyhudi
from pyhudi.keygen.spark import with_key_columns
from pyhudi.table.context import TableContext
from pyhudi.writer.config import resolve_write_config

REAL_TABLES = [
    "cow__v6_complexkeygen_hivestyle",
    "cow__v6_nonpartitioned",
    "cow__v6_simplekeygen_nonhivestyle",
    "cow__v6_timebasedkeygen_nonhivestyle",
    "mor_avro__v6_trips_8i1u",
    "mor_parquet__v6_complexkeygen_hivestyle",
]


@pytest.mark.parametrize("name", REAL_TABLES)
def test_keygen_reproduces_hudi_keys_and_partition_paths(spark, hudi_tables, name):
    root = hudi_tables[name]
    ctx = TableContext.open(str(root))
    cfg = resolve_write_config({}, ctx.config)
    files = [f for f in root.rglob("*.parquet") if ".hoodie" not in f.parts]
    expected, produced = set(), set()
    for path in files:
        table = pq.read_table(path)
        expected |= set(
            zip(
                table.column("_hoodie_record_key").to_pylist(),
                table.column("_hoodie_partition_path").to_pylist(),
            )
        )
        data = spark.read.parquet(str(path)).drop(
            *[c for c in table.column_names if c.startswith("_hoodie")]
        )
        keyed = with_key_columns(data, cfg.keygen, "k", "p").select("k", "p").collect()
        produced |= {(r.k, r.p) for r in keyed}
    assert produced == expected


def _partitions(spark, tmp_path, options, rows, schema):
    path = str(tmp_path / "t")
    pyhudi.write(
        df_of(spark, rows, schema),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    return sorted(pyhudi.HudiTable(path).partitions())


def test_timestamp_keygen_epoch_millis_formats_in_output_timezone(spark, tmp_path):
    options = trips_options(
        **{
            "hoodie.datasource.write.partitionpath.field": "ts",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
            "hoodie.keygen.timebased.timezone": "Asia/Kolkata",
        }
    )
    rows = [
        {"uuid": "a", "city": "x", "ts": 1_700_000_000_000, "rider": "r", "fare": 1.0},
        {"uuid": "b", "city": "x", "ts": 1_700_010_000_000, "rider": "r", "fare": 1.0},
    ]
    # 1700000000000 = 2023-11-14T22:13:20Z = 2023-11-15 03:43 in Kolkata; +10000 s = 06:30 the same day.
    parts = _partitions(
        spark,
        tmp_path,
        options,
        rows,
        "uuid string, city string, ts long, rider string, fare double",
    )
    assert parts == ["2023/11/15"]
    table = pyhudi.HudiTable(str(tmp_path / "t"))
    assert table.properties["hoodie.keygen.timebased.timestamp.type"] == "EPOCHMILLISECONDS"


def test_timestamp_keygen_date_string_with_zone_and_unix_seconds(spark, tmp_path):
    options = trips_options(
        **{
            "hoodie.datasource.write.partitionpath.field": "when",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
            "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd/HH",
        }
    )
    rows = [
        {"uuid": "a", "when": "2023-04-01T12:01:00.123Z", "ts": 1},
        {"uuid": "b", "when": "2023-04-02T23:59:59.000Z", "ts": 1},
    ]
    assert _partitions(spark, tmp_path, options, rows, "uuid string, when string, ts long") == [
        "2023/04/01/12",
        "2023/04/02/23",
    ]


def test_url_encoding_and_default_partition(spark, tmp_path):
    options = trips_options(
        **{
            "hoodie.datasource.write.partitionpath.urlencode": "true",
            "hoodie.datasource.write.hive_style_partitioning": "true",
        }
    )
    rows = [
        {"uuid": "a", "city": "a/b:c=d", "ts": 1, "rider": "r", "fare": 1.0},
        {"uuid": "b", "city": None, "ts": 1, "rider": "r", "fare": 1.0},
    ]
    parts = _partitions(
        spark,
        tmp_path,
        options,
        rows,
        "uuid string, city string, ts long, rider string, fare double",
    )
    assert parts == ["city=__HIVE_DEFAULT_PARTITION__", "city=a%2Fb%3Ac%3Dd"]
    df = pyhudi.read(spark, str(tmp_path / "t"), filters=[("city", "=", "a/b:c=d")])
    assert [r.uuid for r in df.collect()] == ["a"]


def test_custom_keygen_mixes_simple_and_timestamp_fields(spark, tmp_path):
    options = trips_options(
        **{
            "hoodie.datasource.write.partitionpath.field": "city:SIMPLE,ts:TIMESTAMP",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "UNIX_TIMESTAMP",
            "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd",
        }
    )
    rows = [{"uuid": "a", "city": "sf", "ts": 86400 * 365, "rider": "r", "fare": 1.0}]
    assert _partitions(
        spark,
        tmp_path,
        options,
        rows,
        "uuid string, city string, ts long, rider string, fare double",
    ) == ["sf/19710101"]


def test_timestamp_column_record_key_renders_epoch_micros(spark, tmp_path):
    df = spark.createDataFrame([("x",)], "c string").select(
        F.timestamp_seconds(F.lit(1)).alias("k"), F.lit(1).alias("ts")
    )
    path = str(tmp_path / "t")
    pyhudi.write(
        df,
        path,
        {
            "hoodie.table.name": "t",
            "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.operation": "insert",
        },
    )
    assert pyhudi.read(spark, path).select("_hoodie_record_key").first()[0] == "1000000"
