"""Every public entry point from a Spark Connect client, against a real Spark Connect server
started from the pyspark distribution (the class `sbin/start-connect-server.sh` runs)."""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi.spark.deploy import connect_server
from tests.deploy.runner import assert_metadata_table_exact, run_scenario
from tests.helpers.oracle import hudi_rs_table

pytestmark = pytest.mark.deploy

STEPS = [
    "format_unregistered",
    "format_registered",
    "write_read_cow",
    "mor",
    "services",
    "bootstrap",
    "stream",
    "readme",
    "sql",
    "dml",
]


@pytest.fixture(scope="module")
def connect(tmp_path_factory):
    logs = tmp_path_factory.mktemp("connect-server")
    with connect_server(logs) as url:
        # last, in the same client: catalog sync without a metastore client (`fallback`)
        module = "tests.deploy.hive_sync_scenario"
        work = tmp_path_factory.mktemp("connect-client")
        yield run_scenario(url, work, [*STEPS, "fallback"], module=module)


def test_format_hudi_from_a_connect_client(connect):
    assert connect["format_unregistered"]["count"] == 6
    assert (connect["format_registered"]["count"], connect["format_registered"]["sf"]) == (10, 5)
    assert connect["format_registered"]["upserted"] == 2  # Hudi's default operation


def test_write_and_read_copy_on_write(connect):
    cow = connect["write_read_cow"]
    assert (cow["count"], cow["ts2"]) == (10, 4)
    assert sorted(hudi_rs_table(cow["path"]).column("ts").to_pylist()) == [1] * 6 + [2] * 4


def test_merge_on_read_reads_and_table_services(connect):
    mor, services = connect["mor"], connect["services"]
    assert (mor["count"], mor["ts2"], mor["format_ts2"], mor["read_optimized_ts2"]) == (10, 4, 4, 0)
    assert services["compactions"] == 1 and services["count"] == 10
    assert "commit" in services["actions"]  # the compaction's instant
    table = pyhudi.HudiTable(mor["path"])
    assert all(not s.has_log_files for s in table.latest_file_slices())
    assert sorted(hudi_rs_table(mor["path"]).column("ts").to_pylist()) == [1] * 6 + [2] * 4


def test_bootstrap_and_streaming(connect):
    assert connect["bootstrap"]["count"] == 8
    assert connect["bootstrap"]["actions"] == ["commit"]
    assert connect["stream"]["count"] == 10 == hudi_rs_table(connect["stream"]["path"]).num_rows
    assert connect["stream"]["actions"] == ["commit", "commit"]
    for step in ("bootstrap", "stream"):  # metadata table on by default, kept exact
        assert_metadata_table_exact(connect[step]["path"])


def test_spark_sql_catalog_tables(connect):
    sql = connect["sql"]
    assert (sql["select"], sql["after_insert"], sql["after_overwrite"]) == (4, 6, ["id-300"])
    assert sql["bulk_operations"] == ["BULK_INSERT", "BULK_INSERT"]
    for path in (sql["path"], sql["opt_path"]):
        assert_metadata_table_exact(path)


def test_merge_update_delete_and_call_through_spark_sql_and_pyhudi_sql(connect):
    dml = connect["dml"]
    assert dml["merged"] == [1, 1]
    assert dml["rows"] == [["id-000", 9.0], ["id-001", 20.0], ["id-003", 4.0], ["id-009", 1.0]]
    assert dml["actions"] == ["deltacommit"] * 4


def test_the_readme_blocks_run_on_connect_through_spark_remote(connect):
    assert connect["readme"]["blocks"] == 3
    assert hudi_rs_table(connect["readme"]["path"]).column("uuid").to_pylist() == ["id-9"]


def test_catalog_sync_from_connect_registers_a_spark_only_table_and_warns(connect):
    fallback = connect["fallback"]
    assert fallback["count"] == 4  # the USING hudi table reads the Hudi table
    assert len(fallback["warnings"]) == 1
    assert "Spark Connect" in fallback["warnings"][0] and "Spark-only" in fallback["warnings"][0]
