"""Catalog sync as Hudi's Hive sync, against the embedded Derby metastore of a Hive-enabled
session in a fresh process (one session for every step): the stored table equals what Hudi's
`HiveSyncTool`/`HMSDDLExecutor` registers, partitions follow the timeline, Spark reads through it."""

from __future__ import annotations

import json
import os

import pytest

from tests.deploy.metastore import standalone_metastore
from tests.deploy.runner import run_scenario

pytestmark = pytest.mark.deploy

#: Hudi's classes (`HoodieInputFormatUtils` for parquet base files), written out on purpose.
HUDI_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
HUDI_REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
HUDI_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
HUDI_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
META_COLUMNS = [
    ["_hoodie_commit_time", "string"],
    ["_hoodie_commit_seqno", "string"],
    ["_hoodie_record_key", "string"],
    ["_hoodie_partition_path", "string"],
    ["_hoodie_file_name", "string"],
]
COLUMNS = [*META_COLUMNS, ["uuid", "string"], ["ts", "bigint"], ["fare", "double"]]


@pytest.fixture(scope="module")
def hive(local_hive_session):
    """The steps ran in one Hive-enabled session of a fresh process, after the user-session steps
    (tests/deploy/conftest.py)."""
    return local_hive_session


def _descriptor(table: dict, path: str, *, read_optimized: bool, realtime: bool) -> None:
    assert table["table_type"] == "EXTERNAL_TABLE"
    assert table["partition_keys"] == [["city", "string"]]
    assert table["location"].rstrip("/") == f"file:{path}"
    assert table["input_format"] == (HUDI_REALTIME_INPUT_FORMAT if realtime else HUDI_INPUT_FORMAT)
    assert (table["output_format"], table["serde"]) == (HUDI_OUTPUT_FORMAT, HUDI_SERDE)
    assert table["serde_properties"] == {
        "hoodie.query.as.ro.table": str(read_optimized).lower(),
        "path": f"file://{path}",
        "serialization.format": "1",
    }
    params = table["parameters"]
    assert params["EXTERNAL"] == "TRUE"
    assert params["spark.sql.sources.provider"] == "hudi"
    assert params["spark.sql.sources.schema.numPartCols"] == "1"
    assert params["spark.sql.sources.schema.partCol.0"] == "city"
    assert params["spark.sql.create.version"].startswith("4.")
    parts = int(params["spark.sql.sources.schema.numParts"])
    schema = json.loads("".join(params[f"spark.sql.sources.schema.part.{i}"] for i in range(parts)))
    assert schema["fields"][-1]["name"] == "city"  # partition columns last, as Spark wants


def test_copy_on_write_table_is_registered_with_hudis_storage_descriptor(hive):
    cow = hive["cow"]
    first = cow["first"]
    _descriptor(first["table"], f"{_work(first)}/cow", read_optimized=False, realtime=False)
    assert first["table"]["columns"] == COLUMNS  # meta columns in, partition column out
    assert first["table"]["parameters"]["last_commit_time_sync"] == cow["first_instant"]
    assert first["partitions"] == {
        "chennai": f"file:{_work(first)}/cow/chennai",
        "sf": f"file:{_work(first)}/cow/sf",
    }
    assert first["uuids"] == ["id-000", "id-001", "id-002", "id-003"]  # spark.table reads it
    assert first["columns"][-1] == "city"
    extended = cow["extended"]  # Spark's own view of the metastore entry
    assert f"InputFormat: {HUDI_INPUT_FORMAT}" in extended
    assert f"Serde Library: {HUDI_SERDE}" in extended
    assert "Provider: hudi" in extended and "Partition Columns: [`city`]" in extended


def test_a_later_commit_adds_its_partition_and_advances_last_commit_time_sync(hive):
    second = hive["cow"]["second"]
    assert sorted(second["partitions"]) == ["chennai", "nyc", "sf"]
    assert second["table"]["parameters"]["last_commit_time_sync"] == hive["cow"]["second_instant"]
    assert "id-100" in second["uuids"]


def test_delete_partition_drops_the_metastore_partition(hive):
    third = hive["cow"]["third"]
    assert sorted(third["partitions"]) == ["nyc", "sf"]
    assert third["table"]["parameters"]["last_commit_time_sync"] == hive["cow"]["third_instant"]
    assert third["uuids"] == ["id-000", "id-002", "id-100"]


def test_a_new_column_updates_the_table_and_spark_reads_it(hive):
    cow = hive["cow"]
    fourth = cow["fourth"]
    assert fourth["table"]["columns"] == [*COLUMNS, ["note", "string"]]
    assert fourth["columns"][-2:] == ["note", "city"]
    assert fourth["uuids"] == cow["snapshot_uuids"] == ["id-000", "id-002", "id-100", "id-200"]
    assert fourth["table"]["parameters"]["last_commit_time_sync"] == cow["fourth_instant"]


def test_without_last_commit_time_sync_every_partition_is_listed_again(hive):
    # nyc was dropped from the metastore by hand and the property removed: the re-list of the
    # partitions on storage restores it, and (as Hudi's `syncAllPartitions` does) also lists
    # chennai again, whose folder the delete_partition left for the cleaner
    assert hive["full_resync"]["partitions"] == [["chennai"], ["nyc"], ["sf"]]


def test_merge_on_read_registers_ro_and_rt_with_hudis_input_formats(hive):
    mor = hive["mor_ro_rt"]
    assert {"trips_ro", "trips_rt"} <= set(mor["tables"])
    path = f"{_work(mor['ro'])}/mor_ro_rt"
    _descriptor(mor["ro"]["table"], path, read_optimized=True, realtime=False)
    _descriptor(mor["rt"]["table"], path, read_optimized=False, realtime=True)
    assert sorted(mor["ro"]["partitions"]) == sorted(mor["rt"]["partitions"]) == ["chennai", "sf"]
    assert (mor["trips_ro_ts2"], mor["trips_rt_ts2"]) == (0, 2)  # base files vs merged logs


def test_sync_as_datasource_false_is_a_hive_table_spark_sql_describes(hive):
    plain = hive["plain_hive"]
    table = plain["table"]
    assert table["input_format"] == HUDI_INPUT_FORMAT
    assert table["serde_properties"] == {"serialization.format": "1"}
    assert not any(k.startswith("spark.sql.") for k in table["parameters"])
    assert plain["show_partitions"] == ["city=chennai", "city=sf"]
    assert plain["described"]["InputFormat"] == HUDI_INPUT_FORMAT
    assert plain["described"]["Serde Library"] == HUDI_SERDE


def _work(state: dict) -> str:
    """The scenario's work folder, from the stored serde path (`file:///.../cow`)."""
    path = state["table"]["serde_properties"]["path"][len("file://") :]
    return path.rsplit("/", 1)[0]


def test_sync_into_a_standalone_metastore_by_uri_is_seen_from_another_process(tmp_path):
    """A metastore JVM of its own (Thrift, `hive.metastore.uris`): one process writes and syncs,
    a second process in another folder finds the table with Hudi's descriptor and reads it."""
    with standalone_metastore(tmp_path / "hms") as uris:
        os.environ["PYHUDI_SCENARIO_METASTORE_URIS"] = uris
        try:
            module = "tests.deploy.hive_sync_scenario"
            written = run_scenario("local[1]", tmp_path / "w", ["uri_write"], module=module)
            read = run_scenario("local[1]", tmp_path / "r", ["uri_read"], module=module)
        finally:
            del os.environ["PYHUDI_SCENARIO_METASTORE_URIS"]
    table = read["uri_read"]["table"]
    _descriptor(table, f"{tmp_path}/w/uri", read_optimized=False, realtime=False)
    assert table["parameters"]["last_commit_time_sync"] == written["uri_write"]["instant"]
    assert sorted(read["uri_read"]["partitions"]) == ["chennai", "sf"]
    assert read["uri_read"]["uuids"] == ["id-000", "id-001", "id-002", "id-003"]
    assert not read["uri_read"]["cwd_has_derby"]  # no embedded metastore was involved
    assert not (tmp_path / "w" / "metastore_db").exists()
