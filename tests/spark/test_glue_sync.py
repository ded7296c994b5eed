"""AWS Glue Data Catalog sync (hudi-aws's `AwsGlueCatalogSyncTool`) after `pyhudi.write`, with
Hudi's option keys, against moto's Glue server (a real endpoint on a local port, reached by boto3
through `AWS_ENDPOINT_URL_GLUE`): the table Hudi registers, partitions added and dropped as the
timeline says, new columns, non-partitioned and merge-on-read tables."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.glue import columns, glue_client, glue_endpoint, locations

import pyhudi
from pyhudi.exceptions import ConfigError
from pyhudi.table.context import TableContext

GLUE_TOOL = "org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool"
DEPLOYMENTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "deployments.md"
META_COLUMNS = [
    ("_hoodie_commit_time", "string"),
    ("_hoodie_commit_seqno", "string"),
    ("_hoodie_record_key", "string"),
    ("_hoodie_partition_path", "string"),
    ("_hoodie_file_name", "string"),
]
TRIP_COLUMNS = [("uuid", "string"), ("ts", "bigint"), ("rider", "string"), ("fare", "double")]


@pytest.fixture(scope="module")
def glue(tmp_path_factory):  # type: ignore[no-untyped-def]
    with glue_endpoint(tmp_path_factory.mktemp("glue")) as url:
        yield glue_client(url)


def _options(name: str, database: str, operation: str = "upsert", **extra: str) -> dict[str, str]:
    return trips_options(
        name,
        **{
            "hoodie.datasource.write.operation": operation,
            "hoodie.datasource.meta.sync.enable": "true",
            "hoodie.meta.sync.client.tool.class": GLUE_TOOL,
            "hoodie.datasource.hive_sync.database": database,
            **extra,
        },
    )


def _table(glue, database: str, name: str):  # type: ignore[no-untyped-def]
    return glue.get_table(DatabaseName=database, Name=name)["Table"]


def test_a_partitioned_table_is_registered_as_hudi_registers_it_then_gains_a_partition(
    spark, glue, tmp_path
):
    path = str(tmp_path / "trips")
    first = pyhudi.write(df_of(spark, trips(0, 6)), path, _options("trips", "lake", "insert"))
    uri = TableContext.open(path).uri
    assert uri.endswith(path)

    assert glue.get_database(Name="lake")["Database"]["Name"] == "lake"
    table = _table(glue, "lake", "trips")
    assert table["TableType"] == "EXTERNAL_TABLE"
    sd = table["StorageDescriptor"]
    assert columns(sd) == META_COLUMNS + TRIP_COLUMNS
    assert columns(table, "PartitionKeys") == [("city", "string")]
    assert sd["Location"] == uri
    assert sd["InputFormat"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert sd["OutputFormat"] == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    assert sd["SerdeInfo"]["SerializationLibrary"] == (
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    )
    assert sd["SerdeInfo"]["Parameters"] == {
        "serialization.format": "1",
        "path": uri,
        "hoodie.query.as.ro.table": "false",
    }
    params = table["Parameters"]
    assert params["EXTERNAL"] == "TRUE"
    assert params["last_commit_time_sync"] == first.instant_time
    assert params["hudi.metadata-listing-enabled"] == "FALSE"
    assert params["spark.sql.sources.provider"] == "hudi"
    assert params["spark.sql.sources.schema.numPartCols"] == "1"
    assert params["spark.sql.sources.schema.partCol.0"] == "city"
    schema = json.loads(
        "".join(
            params[f"spark.sql.sources.schema.part.{i}"]
            for i in range(int(params["spark.sql.sources.schema.numParts"]))
        )
    )
    assert [f["name"] for f in schema["fields"]][-2:] == ["fare", "city"]  # partition column last
    assert locations(glue, "lake", "trips") == {
        (city,): f"{uri}/{city}" for city in ("sf", "chennai", "sao_paulo")
    }

    second = pyhudi.write(
        df_of(spark, trips(10, 2, ts=2, city="la")), path, _options("trips", "lake")
    )
    assert set(locations(glue, "lake", "trips")) == {("sf",), ("chennai",), ("sao_paulo",), ("la",)}
    la = glue.get_partition(DatabaseName="lake", TableName="trips", PartitionValues=["la"])
    assert la["Partition"]["StorageDescriptor"]["Location"] == f"{uri}/la"
    assert columns(la["Partition"]["StorageDescriptor"]) == META_COLUMNS + TRIP_COLUMNS
    assert _table(glue, "lake", "trips")["Parameters"]["last_commit_time_sync"] == (
        second.instant_time
    )


def test_delete_partition_and_insert_overwrite_table_drop_glue_partitions(spark, glue, tmp_path):
    path = str(tmp_path / "trips")
    pyhudi.write(df_of(spark, trips(0, 6)), path, _options("dropping", "drops", "insert"))
    drop = _options(
        "dropping",
        "drops",
        "delete_partition",
        **{"hoodie.datasource.write.partitions.to.delete": "chennai"},
    )
    pyhudi.write(df_of(spark, trips(0, 0)), path, drop)
    assert set(locations(glue, "drops", "dropping")) == {("sf",), ("sao_paulo",)}

    overwrite = _options("dropping", "drops", "insert_overwrite_table")
    last = pyhudi.write(df_of(spark, trips(20, 2, city="la")), path, overwrite)
    assert set(locations(glue, "drops", "dropping")) == {("la",)}
    assert _table(glue, "drops", "dropping")["Parameters"]["last_commit_time_sync"] == (
        last.instant_time
    )


def test_a_new_column_updates_the_glue_table(spark, glue, tmp_path):
    path = str(tmp_path / "trips")
    pyhudi.write(df_of(spark, trips(0, 3)), path, _options("evolving", "evolve", "insert"))
    wider = "uuid string, city string, ts long, rider string, fare double, tip double"
    rows = [{**r, "tip": 1.5} for r in trips(0, 1, ts=2)]
    pyhudi.write(df_of(spark, rows, wider), path, _options("evolving", "evolve"))

    table = _table(glue, "evolve", "evolving")
    assert columns(table["StorageDescriptor"]) == [*META_COLUMNS, *TRIP_COLUMNS, ("tip", "double")]
    assert columns(table, "PartitionKeys") == [("city", "string")]
    schema = json.loads(table["Parameters"]["spark.sql.sources.schema.part.0"])
    assert [f["name"] for f in schema["fields"]][-2:] == ["tip", "city"]


def test_a_non_partitioned_table_has_no_partition_keys(spark, glue, tmp_path):
    path = str(tmp_path / "flat")
    options = _options(
        "flat",
        "flat_db",
        "insert",
        **{
            "hoodie.datasource.write.partitionpath.field": "",
            "hoodie.datasource.write.keygenerator.class": (
                "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
            ),
        },
    )
    pyhudi.write(df_of(spark, trips(0, 3)), path, options)
    second = pyhudi.write(df_of(spark, trips(5, 1)), path, options)

    table = _table(glue, "flat_db", "flat")
    assert table.get("PartitionKeys", []) == []
    assert columns(table["StorageDescriptor"]) == [
        *META_COLUMNS,
        ("uuid", "string"),
        ("city", "string"),
        *TRIP_COLUMNS[1:],
    ]
    assert "spark.sql.sources.schema.numPartCols" not in table["Parameters"]
    assert table["Parameters"]["last_commit_time_sync"] == second.instant_time
    assert glue.get_partitions(DatabaseName="flat_db", TableName="flat")["Partitions"] == []


def test_merge_on_read_registers_ro_and_rt_tables_under_the_glue_names(spark, glue, tmp_path):
    path = str(tmp_path / "mor")
    options = _options(
        "mor",
        "ignored_db",
        "insert",
        **{
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.meta.sync.glue.database_name": "mor_db",
            "hoodie.datasource.meta.sync.glue.metadata_file_listing": "true",
        },
    )
    pyhudi.write(df_of(spark, trips(0, 3)), path, options)

    assert [t["Name"] for t in glue.get_tables(DatabaseName="mor_db")["TableList"]] == [
        "mor_ro",
        "mor_rt",
    ]
    ro, rt = _table(glue, "mor_db", "mor_ro"), _table(glue, "mor_db", "mor_rt")
    assert (
        ro["StorageDescriptor"]["InputFormat"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    )
    assert rt["StorageDescriptor"]["InputFormat"] == (
        "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
    )
    assert ro["StorageDescriptor"]["SerdeInfo"]["Parameters"]["hoodie.query.as.ro.table"] == "true"
    assert rt["Parameters"]["hudi.metadata-listing-enabled"] == "TRUE"
    assert set(locations(glue, "mor_db", "mor_rt")) == {("sf",), ("chennai",), ("sao_paulo",)}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name="ignored_db")


def test_glue_only_leaves_the_session_catalog_alone_and_unknown_tools_fail_before_writing(
    spark, glue, tmp_path
):
    path = str(tmp_path / "only")
    pyhudi.write(df_of(spark, trips(0, 1)), path, _options("glue_only", "only_db", "insert"))
    assert _table(glue, "only_db", "glue_only")["Name"] == "glue_only"
    assert not spark.catalog.databaseExists("only_db")

    other = str(tmp_path / "other")
    bigquery = {
        "hoodie.meta.sync.client.tool.class": "org.apache.hudi.gcp.bigquery.BigQuerySyncTool"
    }
    with pytest.raises(ConfigError, match="BigQuerySyncTool"):
        pyhudi.write(df_of(spark, trips(0, 1)), other, {**_options("x", "x"), **bigquery})
    assert not TableContext.exists(other)


def test_the_deployments_page_glue_example_runs_as_written(spark, glue, tmp_path):
    text = DEPLOYMENTS_PAGE.read_text()
    (block,) = re.findall(
        r"<!-- runs in tests/spark/test_glue_sync\.py.*?-->\n```py\n(.*?)```", text, flags=re.S
    )
    trips_df = df_of(spark, trips(0, 3))
    exec(block.replace("s3://bucket/", f"{tmp_path}/"), {"pyhudi": pyhudi, "trips": trips_df})

    table = _table(glue, "analytics", "trips")
    assert table["StorageDescriptor"]["Location"] == TableContext.open(f"{tmp_path}/trips").uri
    assert set(locations(glue, "analytics", "trips")) == {("sf",), ("chennai",), ("sao_paulo",)}
