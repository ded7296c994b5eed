"""Shared fixtures: one local SparkSession for the whole run, and the real Hudi tables unzipped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from hypothesis import settings

from tests.helpers.fixtures import table_names, unzip_table

# CI (CI=true) replays the same examples every run, so a landing is decided by the code, not by
# the draw; local runs keep exploring new examples and find new cases.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def spark():
    from pyhudi.spark.session import local_session

    session = local_session(
        "pyhudi-tests",
        cores=2,
        conf={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "2g"},
    )
    from pyhudi.spark.datasource import register

    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def hudi_tables(tmp_path_factory) -> dict[str, Path]:
    """zip name (e.g. `cow__v6_nonpartitioned`) -> unzipped table root."""
    root = tmp_path_factory.mktemp("hudi-tables")
    return {name: unzip_table(name, root) for name in table_names()}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the shared session is marked `spark` (`-m "not spark"` skips them)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
