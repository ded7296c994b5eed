"""Process tests: every child process a test starts is SIGKILLed (with its Spark JVM) at teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers.processes import SparkProcess, kill_all


class Processes:
    """Starts `SparkProcess`es for one test and remembers them for the teardown."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: list[SparkProcess] = []

    def start(
        self, name: str, steps: list[dict], env: dict[str, str] | None = None
    ) -> SparkProcess:
        process = SparkProcess(steps, self.workdir, name, dict(env or {})).start()
        self.started.append(process)
        return process


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in tests/process is marked `process` (`-m process` / `-m "not process"`)."""
    for item in items:
        if "tests/process/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.process)


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    manager = Processes(tmp_path / "processes")
    try:
        yield manager
    finally:
        kill_all(manager.started)
