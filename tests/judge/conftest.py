"""Apache Hudi 0.15 and 1.2 as judges: one process per version for each test process's run (the
modules of tests/judge are two xdist scopes, tests/conftest.py's `JUDGE_HALVES`: each worker that
takes one starts its own). Both run S3A at this process's S3 endpoint (`S3_URL`, fixed before any
JVM starts; moto serves it once a test asks for `s3_server`)."""

from __future__ import annotations

import pytest

from tests.conftest import S3_URL
from tests.helpers.fixtures import TEST_JVM_OPTIONS
from tests.judge.client import HUDI_0_15, HUDI_1_2, Judge

#: The tests' Hudi processes run with the tests' JVM settings (the bench's keep the JVM's own),
#: and two partitions for their small inputs (~10% less CPU than four).
TEST_CONF = {
    "spark.driver.extraJavaOptions": TEST_JVM_OPTIONS,
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Judge tests use the shared Spark session and start Hudi: `make test-fast` leaves them out."""
    for item in items:
        if "tests/judge/" in item.nodeid:
            item.add_marker(pytest.mark.judge)
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def hudi_0_15(tmp_path_factory):  # type: ignore[no-untyped-def]
    judge = Judge(HUDI_0_15, tmp_path_factory.mktemp("hudi-0.15"), TEST_CONF, s3_endpoint=S3_URL)
    judge.start()
    yield judge
    judge.stop()


@pytest.fixture(scope="session")
def hudi_1_2(tmp_path_factory):  # type: ignore[no-untyped-def]
    judge = Judge(HUDI_1_2, tmp_path_factory.mktemp("hudi-1.2"), TEST_CONF, s3_endpoint=S3_URL)
    judge.start()
    yield judge
    judge.stop()
