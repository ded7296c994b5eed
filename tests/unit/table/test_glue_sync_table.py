"""Glue Data Catalog sync without Spark: hand-built Hudi timelines synced by
`pyhudi.table.glue_sync` into moto's Glue server (a real HTTP endpoint), batches larger than one
Glue call, location updates, column changes, partition keys that changed; and the option checks."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest
from tests.helpers.glue import columns, glue_client, glue_endpoint, locations
from tests.helpers.timeline_builder import Base, TimelineBuilder

from pyhudi.config import sync as skeys
from pyhudi.config.unknown import check_write_options, misspelt_keys
from pyhudi.exceptions import ConfigError, MissingDependencyError, SchemaMismatchError
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.table import glue_sync
from pyhudi.table.context import TableContext
from pyhudi.table.glue_sync import (
    DELETES_PER_CALL,
    PARTITIONS_PER_CALL,
    GlueCatalog,
    GlueSettings,
    boto3_module,
    s3_location,
    sync_glue_table,
)
from pyhudi.table.meta_sync import MetastoreTable

MULTI = skeys.MULTI_PART_KEYS_EXTRACTOR
DATA_COLUMNS = (("_hoodie_commit_time", "string"), ("id", "string"), ("v", "bigint"))


@pytest.fixture(scope="module")
def glue(tmp_path_factory):  # type: ignore[no-untyped-def]
    with glue_endpoint(tmp_path_factory.mktemp("glue")) as url:
        yield glue_client(url)


def _spec(ctx: TableContext, database: str, **changes: Any) -> MetastoreTable:
    fields = {
        "database": database,
        "name": "t",
        "table_type": "EXTERNAL_TABLE",
        "columns": DATA_COLUMNS,
        "partition_keys": (("p", "string"),),
        "location": ctx.uri,
        "input_format": skeys.INPUT_FORMAT,
        "output_format": skeys.OUTPUT_FORMAT,
        "serde": skeys.SERDE,
        "serde_properties": {"serialization.format": "1", "path": ctx.uri},
        "parameters": {
            "EXTERNAL": "TRUE",
            "spark.sql.sources.provider": "hudi",
            "spark.sql.sources.schema.numParts": "2",
            "spark.sql.sources.schema.part.0": '{"type":"struct",',
            "spark.sql.sources.schema.part.1": '"fields":[]}',
        },
    }
    return MetastoreTable(**{**fields, **changes})


def _sync(ctx: TableContext, spec: MetastoreTable, **settings: Any) -> None:
    catalog = GlueCatalog.connect(GlueSettings(**settings))
    sync_glue_table(catalog, TableContext.open(ctx.uri), spec, MULTI)


def _many(tb: TimelineBuilder, count: int, prefix: str = "p") -> str:
    return str(tb.write(*(Base(f"{prefix}{i:03d}", f"f{prefix}{i}") for i in range(count))))


def test_first_sync_creates_database_table_and_partitions_beyond_one_batch(glue, tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    latest = _many(tb, PARTITIONS_PER_CALL + 30)
    spec = _spec(tb.ctx, "first_db")
    _sync(tb.ctx, spec)

    assert glue.get_database(Name="first_db")["Database"]["Name"] == "first_db"
    table = glue.get_table(DatabaseName="first_db", Name="t")["Table"]
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["Parameters"] == {
        **spec.parameters,
        "hudi.metadata-listing-enabled": "FALSE",
        "last_commit_time_sync": latest,
    }
    sd = table["StorageDescriptor"]
    assert columns(sd) == list(DATA_COLUMNS)
    assert columns(table, "PartitionKeys") == [("p", "string")]
    assert sd["Location"] == tb.ctx.uri
    assert (sd["InputFormat"], sd["OutputFormat"]) == (skeys.INPUT_FORMAT, skeys.OUTPUT_FORMAT)
    assert sd["SerdeInfo"] == {
        "SerializationLibrary": skeys.SERDE,
        "Parameters": {"serialization.format": "1", "path": tb.ctx.uri},
    }
    found = locations(glue, "first_db", "t")
    assert len(found) == PARTITIONS_PER_CALL + 30
    assert found[("p007",)] == f"{tb.ctx.uri}/p007"


def test_next_sync_adds_written_and_drops_deleted_partitions_beyond_one_batch(glue, tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    _many(tb, DELETES_PER_CALL + 5)
    spec = _spec(tb.ctx, "next_db")
    _sync(tb.ctx, spec)
    tb.write(Base("new", "fn"))
    deleted = {f"p{i:03d}": [f"fp{i}"] for i in range(DELETES_PER_CALL + 2)}
    latest = tb.write(
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.DELETE_PARTITION,
        replaced=deleted,
    )
    _sync(tb.ctx, spec)

    found = locations(glue, "next_db", "t")
    assert sorted(found) == [("new",), ("p027",), ("p028",), ("p029",)]
    table = glue.get_table(DatabaseName="next_db", Name="t")["Table"]
    assert table["Parameters"]["last_commit_time_sync"] == str(latest)


def test_a_full_listing_moves_a_partition_glue_has_elsewhere(glue, tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("a", "f1"), Base("b", "f2"))
    spec = _spec(tb.ctx, "moved_db")
    _sync(tb.ctx, spec)
    wrong = {"Values": ["a"], "StorageDescriptor": {"Location": "s3://elsewhere/a"}}
    glue.batch_update_partition(
        DatabaseName="moved_db",
        TableName="t",
        Entries=[{"PartitionValueList": ["a"], "PartitionInput": wrong}],
    )
    table = glue.get_table(DatabaseName="moved_db", Name="t")["Table"]
    params = {k: v for k, v in table["Parameters"].items() if k != "last_commit_time_sync"}
    glue.update_table(
        DatabaseName="moved_db",
        TableInput={
            "Name": "t",
            "TableType": table["TableType"],
            "Parameters": params,
            "PartitionKeys": table["PartitionKeys"],
            "StorageDescriptor": table["StorageDescriptor"],
        },
    )
    _sync(tb.ctx, spec)  # no last_commit_time_sync: every partition on storage is compared
    assert locations(glue, "moved_db", "t") == {
        ("a",): f"{tb.ctx.uri}/a",
        ("b",): f"{tb.ctx.uri}/b",
    }


def test_new_columns_update_the_table_not_its_partitions_and_drop_stale_schema_parts(
    glue, tmp_path
):
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("a", "f1"))
    _sync(tb.ctx, _spec(tb.ctx, "evolve_db"))
    tb.write(Base("b", "f2"))
    wider = (*DATA_COLUMNS, ("tip", "double"))
    parameters = {
        "EXTERNAL": "TRUE",
        "spark.sql.sources.provider": "hudi",
        "spark.sql.sources.schema.numParts": "1",
        "spark.sql.sources.schema.part.0": '{"type":"struct","fields":[]}',
    }
    _sync(tb.ctx, _spec(tb.ctx, "evolve_db", columns=wider, parameters=parameters))

    table = glue.get_table(DatabaseName="evolve_db", Name="t")["Table"]
    assert columns(table["StorageDescriptor"]) == list(wider)
    sources = {k for k in table["Parameters"] if k.startswith("spark.sql.sources.")}
    assert sources == set(parameters) - {"EXTERNAL"}
    by_values = {
        tuple(p["Values"]): p
        for p in glue.get_partitions(DatabaseName="evolve_db", TableName="t")["Partitions"]
    }
    # Hudi's Glue sync does not cascade: a partition keeps the columns it was added with
    assert columns(by_values[("a",)]["StorageDescriptor"]) == list(DATA_COLUMNS)
    assert columns(by_values[("b",)]["StorageDescriptor"]) == list(wider)


def test_changed_partition_keys_are_an_error_unless_recreate_on_error(glue, tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("a", "f1"))
    _sync(tb.ctx, _spec(tb.ctx, "keys_db", partition_keys=(("q", "string"),)))
    spec = _spec(tb.ctx, "keys_db")
    with pytest.raises(SchemaMismatchError, match=r"keys_db\.t has partition keys \['q'\]"):
        _sync(tb.ctx, spec)
    _sync(tb.ctx, spec, recreate_on_error=True, metadata_listing=True)
    table = glue.get_table(DatabaseName="keys_db", Name="t")["Table"]
    assert columns(table, "PartitionKeys") == [("p", "string")]
    assert table["Parameters"]["hudi.metadata-listing-enabled"] == "TRUE"
    assert locations(glue, "keys_db", "t") == {("a",): f"{tb.ctx.uri}/a"}


def test_a_non_partitioned_table_has_no_partition_keys_and_no_partitions(glue, tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t", partitioned=False)
    latest = tb.write(Base("", "f1"))
    _sync(tb.ctx, _spec(tb.ctx, "flat_db", partition_keys=()))
    table = glue.get_table(DatabaseName="flat_db", Name="t")["Table"]
    assert table.get("PartitionKeys", []) == []
    assert table["Parameters"]["last_commit_time_sync"] == str(latest)
    assert glue.get_partitions(DatabaseName="flat_db", TableName="t")["Partitions"] == []


def test_settings_from_hudi_keys():
    settings = GlueSettings.from_options(
        {
            "hoodie.datasource.meta.sync.glue.database_name": "gdb",
            "hoodie.datasource.meta.sync.glue.table_name": "gt",
            "hoodie.datasource.meta.sync.glue.skip_table_archive": "false",
            "hoodie.aws.glue.region": "eu-west-1",
            "hoodie.aws.glue.endpoint": "glue.example.com",
            "hoodie.aws.access.key": "AK",
            "hoodie.aws.secret.key": "SECRET",
        }
    )
    assert (settings.database, settings.table, settings.region) == ("gdb", "gt", "eu-west-1")
    assert settings.skip_archive is False and settings.credentials == ("AK", "SECRET", None)
    assert "SECRET" not in repr(settings)
    client = glue_sync.glue_client(settings)
    assert client.meta.endpoint_url == "https://glue.example.com"
    assert client.meta.region_name == "eu-west-1"
    with pytest.raises(ConfigError, match="go together"):
        GlueSettings.from_options({"hoodie.aws.access.key": "AK"})


def test_s3a_base_paths_are_registered_as_s3():
    assert s3_location("s3a://bucket/t") == "s3://bucket/t"
    assert s3_location("file:/tmp/t") == "file:/tmp/t"


def test_missing_boto3_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(MissingDependencyError, match=r"pyhudi\[glue\]"):
        boto3_module()
    glue_tool = {"hoodie.meta.sync.client.tool.class": skeys.GLUE_SYNC_TOOL}
    with pytest.raises(ConfigError, match=r"needs boto3: pip install 'pyhudi\[glue\]'"):
        check_write_options(glue_tool)


def test_tool_classes_pyhudi_does_not_implement_are_refused_before_writing():
    bigquery = "org.apache.hudi.gcp.bigquery.BigQuerySyncTool"
    with pytest.raises(ConfigError, match="BigQuerySyncTool"):
        check_write_options({"hoodie.meta.sync.client.tool.class": bigquery})
    with pytest.raises(ConfigError, match=r"hoodie\.aws\.role\.arn"):
        check_write_options({"hoodie.aws.role.arn": "arn:aws:iam::1:role/r"})


def test_glue_keys_are_declared_or_warned_about_never_taken_for_misspellings():
    implemented = {
        "hoodie.meta.sync.client.tool.class": f"{skeys.HIVE_SYNC_TOOL},{skeys.GLUE_SYNC_TOOL}",
        "hoodie.datasource.meta.sync.glue.skip_table_archive": "true",
        "hoodie.datasource.meta.sync.glue.metadata_file_listing": "true",
        "hoodie.datasource.meta.sync.glue.recreate_table_on_error": "true",
        "hoodie.datasource.meta.sync.glue.database_name": "d",
        "hoodie.datasource.meta.sync.glue.table_name": "t",
        "hoodie.aws.glue.region": "us-east-1",
        "hoodie.aws.glue.endpoint": "http://localhost:5000",
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_write_options(implemented)
    tuning = {
        "hoodie.datasource.meta.sync.glue.all_partitions_read_parallelism": "4",
        "hoodie.datasource.meta.sync.glue.changed_partitions_read_parallelism": "4",
        "hoodie.datasource.meta.sync.glue.partition_change_parallelism": "4",
        "hoodie.datasource.meta.sync.glue.partition_index_fields.enable": "true",
        "hoodie.datasource.meta.sync.glue.partition_index_fields": "p",
        "hoodie.aws.role.session.name": "s",
        "hoodie.aws.role.external.id": "x",
    }
    assert misspelt_keys(tuning) == {}
    with pytest.warns(UserWarning, match="not used by pyhudi: .*partition_change_parallelism"):
        check_write_options(tuning)
