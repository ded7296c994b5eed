"""Shared fixtures: one local SparkSession for the whole run, and the real Hudi tables unzipped."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from tests.helpers.fixtures import HUDI_TABLE_ZIPS as HUDI_TABLES


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
    if not HUDI_TABLES.exists():
        pytest.fail(f"real Hudi tables not found at {HUDI_TABLES}")
    root = tmp_path_factory.mktemp("hudi-tables")
    tables = {}
    for archive in sorted(HUDI_TABLES.glob("*.zip")):
        target = root / archive.stem
        with zipfile.ZipFile(archive) as zipped:
            members = [m for m in zipped.namelist() if not m.startswith("__MACOSX")]
            zipped.extractall(target, members)
        (inner,) = [p for p in target.iterdir() if p.is_dir()]
        tables[archive.stem] = inner
    return tables
