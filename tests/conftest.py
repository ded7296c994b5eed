"""Shared fixtures: one local SparkSession for the whole run, and the real Hudi tables unzipped."""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from hypothesis import settings

from tests.helpers.fixtures import TEST_JVM_OPTIONS, table_names, unzip_table
from tests.helpers.jvm_archive import archive_path, jvm_options, start_building
from tests.helpers.pycache import use_bytecode_cache
from tests.helpers.s3 import MotoServer, environment, free_port, s3a_conf, s3a_jars

#: Every JVM the tests start through the `java` launcher (the shared session, the Hudi judges, the
#: deployments' Connect server, cluster daemons and executors, the Hive metastore, the process
#: tests' children) runs the tests' JVM options: measured alone, the Connect deployment test's
#: processes spent 64 s of CPU instead of 106 s. The bench keeps the JVM's defaults. Those that
#: start once the class-data archive of Spark's classes is built map it (`tests/helpers/jvm_archive`).
JVM_ARCHIVE = archive_path()
os.environ.setdefault("JDK_JAVA_OPTIONS", jvm_options(JVM_ARCHIVE))

#: The Python processes started after this (the xdist workers, every Spark process's driver and
#: Python workers) keep their compiled bytecode in a cache outside the repository: a Spark
#: process's workers import pyhudi a dozen times (`tests/helpers/pycache`).
use_bytecode_cache(os.environ)

#: This test process's S3 endpoint (moto, started on first use by the `s3_server` fixture). Its
#: address is fixed before any Spark JVM starts, so the shared session's S3A and the Python
#: workers' environment (inherited from the JVM) point at it; nothing reaches AWS.
S3_PORT = free_port()
S3_URL = f"http://127.0.0.1:{S3_PORT}"
os.environ.update(environment(S3_URL))

#: Test modules of Spark's Python Data Source API itself (pyspark 4.0+): not collected on 3.5.
DATA_SOURCE_MODULES = [
    "spark/test_stream_source.py",
    "property/test_hostile_writes.py",
    "property/test_datasource_skipping_properties.py",
]
collect_ignore = [] if find_spec("pyspark.sql.datasource") else DATA_SOURCE_MODULES

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
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "2g",
            "spark.driver.extraJavaOptions": TEST_JVM_OPTIONS,
            "spark.jars": ",".join(s3a_jars()),
            **s3a_conf(S3_URL),
        },
    )
    from pyhudi.spark.datasource import register
    from pyhudi.spark_compat import has_python_data_sources

    register(session)
    if not has_python_data_sources():
        # pyspark 3.5: no Python data source; `format("hudi")` is `pyhudi.register`'s routing.
        # The tests collect small results with 4.x's `DataFrame.toArrow`: pyhudi's own shim.
        from pyspark.sql import DataFrame

        from pyhudi.spark.routing import install
        from pyhudi.spark_compat import to_arrow

        install()
        if not hasattr(DataFrame, "toArrow"):
            DataFrame.toArrow = to_arrow
    yield session
    session.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):  # type: ignore[no-untyped-def]
    """moto's S3 server at `S3_URL`, for the whole run of this test process."""
    server = MotoServer.start(S3_PORT, tmp_path_factory.mktemp("moto") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def hudi_tables(tmp_path_factory) -> dict[str, Path]:
    """zip name (e.g. `cow__v6_nonpartitioned`) -> unzipped table root."""
    root = tmp_path_factory.mktemp("hudi-tables")
    return {name: unzip_table(name, root) for name in table_names()}


#: Test modules that share a session fixture (one child process between them): `make test`'s
#: workers (`--dist loadscope`) take each group whole, so the fixture is built once.
SHARED_SCOPES = {
    "tests/deploy/test_user_session.py": "tests/deploy: local Hive session",
    "tests/deploy/test_hive_sync.py": "tests/deploy: local Hive session",
}
#: The judge modules in two halves of about equal time, each one scope: its worker starts one
#: Hudi process per version once for the half (a worker taking both halves reuses them). One
#: scope for the whole folder left its worker running judges long after the other had finished.
JUDGE_HALVES = (
    "tests/judge: first half (one Apache Hudi process per version)",
    "tests/judge: second half (one Apache Hudi process per version)",
)
JUDGE_SECOND_HALF = {
    "test_hudi_continues_pyhudi_tables.py",
    "test_hudi_reads_pyhudi_tables.py",
    "test_hudi_reads_pyhudi_bootstrap.py",
    "test_mixed_writers.py",
    "test_s3.py",
    "test_storage_lock_format.py",
    "test_dynamodb_lock.py",
    "test_hudi_1x_writes.py",
    "test_hudi_1x_merge_modes.py",
    "test_lsm_archival.py",
}
#: The longest scopes, handed out before every other: the workers start on them at once while
#: the rest is shared after (a long scope taken last would keep one worker busy after the others).
LONGEST_SCOPES = JUDGE_HALVES


def pytest_configure(config: pytest.Config) -> None:
    """The run's first process (the xdist controller, or the only one) starts building the JVM
    archive when it is missing and Spark tests may run: the JVMs started after it map it."""
    if "PYTEST_XDIST_WORKER" not in os.environ and "not spark" not in config.option.markexpr:
        start_building(JVM_ARCHIVE)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):  # type: ignore[no-untyped-def]
    """pytest-xdist's `loadscope`, with the modules of `SHARED_SCOPES` as one scope each."""
    if config.getoption("dist") != "loadscope":
        return None
    from collections import OrderedDict

    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(OrderedDict):  # type: ignore[type-arg]
        def __setitem__(self, scope: str, tests: dict[str, bool]) -> None:
            super().__setitem__(scope, tests)
            if scope in LONGEST_SCOPES:
                self.move_to_end(scope, last=False)

    class SharedScopes(LoadScopeScheduling):
        def __init__(self, config, log=None):  # type: ignore[no-untyped-def]
            super().__init__(config, log)
            self.workqueue = LongestFirst()

        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            if scope.startswith("tests/judge/"):
                second = scope.rsplit("/", 1)[-1] in JUDGE_SECOND_HALF
                return JUDGE_HALVES[1 if second else 0]
            return SHARED_SCOPES.get(scope, scope)

    return SharedScopes(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the shared session is marked `spark` (`-m "not spark"` skips them)."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
