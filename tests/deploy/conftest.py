"""Deployments started by the tests themselves: a fresh user process, a Spark Connect server,
a standalone cluster. Everything started here is stopped in `finally`."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Deployment tests start their own Spark: `-m "not spark"` (`make test-fast`) leaves them out."""
    for item in items:
        if item.get_closest_marker("deploy") is not None:
            item.add_marker(pytest.mark.spark)
