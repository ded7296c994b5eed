"""Run `tests.deploy.scenario` in a fresh Python process and collect its per-step results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_scenario(
    session: str,
    work: Path,
    steps: list[str],
    *,
    hive: bool = False,
    timeout_s: int = 900,
    module: str = "tests.deploy.scenario",
) -> dict[str, dict[str, Any]]:
    """Results by step name; a failing step fails the test with its traceback. `module` runs
    another scenario module with the same command line (`--session`, `--work`, `--steps`)."""
    env = {
        "PYHUDI_SCENARIO_HIVE": "1" if hive else "0",
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    work.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", module, "--session", session]
    command += ["--work", str(work), "--steps", ",".join(steps)]
    done = subprocess.run(
        command,
        cwd=work,  # Spark SQL's warehouse and metastore files land here
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            results[record.pop("step")] = record
    missing = [s for s in ["import", *steps] if s not in results]
    assert not missing, f"steps {missing} did not run:\n{done.stdout}\n{done.stderr[-4000:]}"
    failed = {k: v["trace"] for k, v in results.items() if "error" in v}
    assert not failed, "\n".join(f"{k}:\n{v}" for k, v in failed.items())
    return results


def assert_metadata_table_exact(path: str) -> None:
    """The table a deployed session wrote has its metadata table (on by default, as in Hudi) and
    the validator finds no difference between its `files` partition and storage."""
    from pyhudi.metadata import validate
    from pyhudi.table.context import TableContext

    assert "files" in TableContext.open(path).config.metadata_partitions, path
    report = validate(path)
    assert report.differences == (), report.differences
