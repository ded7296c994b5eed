"""A user's own local SparkSession (not pyhudi's `local_session`), in a fresh process: the `hudi`
format with no extra conf, `pyhudi.register`, and Spark SQL catalog tables."""

from __future__ import annotations

import pytest

import pyhudi
from tests.deploy.runner import assert_metadata_table_exact
from tests.helpers.oracle import hudi_rs_table

pytestmark = pytest.mark.deploy


@pytest.fixture(scope="module")
def user_session(local_hive_session):
    """The steps ran in a fresh process with a Hive-enabled `local[1]` session of its own
    (tests/deploy/conftest.py; the Hive-sync steps ran after them in the same process)."""
    return local_hive_session


def test_import_pyhudi_does_not_import_pyspark_and_registration_is_reachable(user_session):
    assert user_session["import"] == {
        "pyspark_imported_by_import_pyhudi": False,
        "register_reachable": True,
    }


def test_format_hudi_works_in_a_plain_session_before_and_after_register(user_session):
    assert user_session["format_unregistered"]["count"] == 6  # found by Spark, no pyhudi call
    registered = user_session["format_registered"]
    assert (registered["count"], registered["sf"]) == (10, 5)  # partition pruning on
    assert registered["upserted"] == 2  # Hudi's default operation, through pyhudi.write
    assert registered["actions"] == ["commit", "commit", "commit"]
    assert hudi_rs_table(registered["path"]).num_rows == 10


def test_sql_create_table_select_insert_and_insert_overwrite(user_session):
    sql = user_session["sql"]
    assert sql["select"] == 4
    assert sql["after_insert"] == 6
    assert sql["after_overwrite"] == ["id-300"]
    assert sql["operations"] == ["BULK_INSERT", "INSERT", "INSERT", "INSERT_OVERWRITE_TABLE"]
    assert hudi_rs_table(sql["path"]).column("uuid").to_pylist() == ["id-300"]
    # OPTIONS (path ...) and the insert operation carried by the table's options
    assert sql["bulk_operations"] == ["BULK_INSERT", "BULK_INSERT"]
    assert sql["bulk_count"] == 5 == hudi_rs_table(sql["opt_path"]).num_rows
    assert pyhudi.HudiTable(sql["opt_path"]).properties["hoodie.table.name"] == "trips"
    for path in (sql["path"], sql["opt_path"]):  # metadata table on by default, kept exact
        assert_metadata_table_exact(path)


def test_the_readme_deployment_section_runs_as_written(user_session):
    readme = user_session["readme"]
    assert readme["blocks"] == 3  # the user-session, Spark SQL and catalog sync blocks
    assert hudi_rs_table(readme["path"]).column("uuid").to_pylist() == ["id-9"]


def test_meta_sync_registers_tables_in_the_hive_metastore(user_session):
    sync = user_session["sync"]
    assert sync["catalog"] == "hive"  # the embedded Derby metastore shipped with pyspark
    assert sync["rides"] == 6 and sync["rides_after"] == 7
    assert sync["rides_columns"][-2:] == ["note", "city"]  # a new column; partition column last
    assert sync["tables"] == ["rides", "trips_ro", "trips_rt"]  # Hudi's names for MOR
    assert (sync["trips_ro"], sync["trips_rt"]) == (0, 2)  # read-optimized vs snapshot
