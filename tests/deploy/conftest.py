"""Deployments started by the tests themselves: a fresh user process, a Spark Connect server,
a standalone cluster. Everything started here is stopped in `finally`."""

import pytest

from tests.deploy.runner import run_scenario

#: The steps of tests/deploy/test_user_session.py (first: `format_unregistered` must run before
#: anything registers the format) and of tests/deploy/test_hive_sync.py.
USER_SESSION_STEPS = ["format_unregistered", "format_registered", "readme", "sql", "sync"]
HIVE_SYNC_STEPS = ["cow", "full_resync", "mor_ro_rt", "plain_hive"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Deployment tests start their own Spark: `-m "not spark"` (`make test-fast`) leaves them out."""
    for item in items:
        if item.get_closest_marker("deploy") is not None:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def local_hive_session(tmp_path_factory):  # type: ignore[no-untyped-def]
    """A user's Hive-enabled `local[1]` session in one fresh process (one JVM, one embedded Derby
    metastore) runs the steps of the user-session and the Hive-sync tests; results by step
    (tests/conftest.py's `SHARED_SCOPES` keeps both modules on one xdist worker)."""
    work = tmp_path_factory.mktemp("local-hive-session")
    steps = USER_SESSION_STEPS + HIVE_SYNC_STEPS
    return run_scenario(
        "local[1]", work, steps, hive=True, module="tests.deploy.hive_sync_scenario"
    )
