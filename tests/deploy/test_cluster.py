"""A real standalone cluster: a master and a worker (separate JVMs; executors with their own Python
workers) started from the pyspark distribution, and a user's driver in a fresh process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pyhudi
from pyhudi.spark.deploy import SPARK_HOME, standalone_cluster
from tests.deploy.runner import ROOT, run_scenario
from tests.deploy.scenario import readme_blocks, readme_commands
from tests.helpers.oracle import hudi_rs_table

pytestmark = [pytest.mark.deploy, pytest.mark.cluster]

STEPS = [
    "format_unregistered",
    "format_registered",
    "write_read_cow",
    "mor",
    "services",
    "bootstrap",
    "demo",
]


@pytest.fixture(scope="module")
def master(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as url:
        yield url


@pytest.fixture(scope="module")
def cluster(master, tmp_path_factory):
    return run_scenario(master, tmp_path_factory.mktemp("cluster-driver"), STEPS)


def test_format_hudi_reads_and_writes_on_a_cluster(cluster):
    assert cluster["format_unregistered"]["count"] == 6
    assert (cluster["format_registered"]["count"], cluster["format_registered"]["sf"]) == (10, 5)
    assert hudi_rs_table(cluster["format_registered"]["path"]).num_rows == 10


def test_write_read_merge_on_read_and_services_on_a_cluster(cluster):
    cow, mor, services = cluster["write_read_cow"], cluster["mor"], cluster["services"]
    assert (cow["count"], cow["ts2"]) == (10, 4)
    assert (mor["count"], mor["ts2"], mor["format_ts2"], mor["read_optimized_ts2"]) == (10, 4, 4, 0)
    assert services["compactions"] == 1 and services["count"] == 10
    assert all(not s.has_log_files for s in pyhudi.HudiTable(mor["path"]).latest_file_slices())
    assert sorted(hudi_rs_table(mor["path"]).column("ts").to_pylist()) == [1] * 6 + [2] * 4


def test_bootstrap_on_a_cluster(cluster):
    assert (
        cluster["bootstrap"]["count"] == 8 == hudi_rs_table(cluster["bootstrap"]["path"]).num_rows
    )


def test_the_demo_runs_on_the_cluster(cluster):
    """What `make demo-cluster` runs (there with a cluster of its own), in the driver above."""
    demo = cluster["demo"]
    assert demo["code"] == 0, demo["stdout"][-3000:]
    assert "snapshot: 485 rows (expected 485)" in demo["stdout"]
    assert hudi_rs_table(demo["path"]).num_rows == 485


def test_the_readme_spark_submit_with_py_files_runs_on_the_cluster(master, tmp_path):
    """The README's cluster commands, with a Python that has pyhudi's dependencies but not pyhudi
    (no site packages processing, so no editable install): pyhudi comes from `--py-files` only."""
    (job := tmp_path / "my_job.py").write_text(
        readme_blocks()[0].replace("/data/", f"{tmp_path}/data/")
    )
    bare = tmp_path / "python-without-pyhudi"
    site = next(p for p in sys.path if p.endswith("site-packages"))
    bare.write_text(f'#!/bin/sh\nPYTHONPATH="$PYTHONPATH:{site}" exec {sys.executable} -S "$@"\n')
    bare.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{SPARK_HOME / 'bin'}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PYSPARK_PYTHON": str(bare),
        "PYSPARK_DRIVER_PYTHON": str(bare),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    assert subprocess.run([str(bare), "-c", "import pyhudi"], env=env).returncode != 0
    leftover = not (ROOT / "build").exists()  # setuptools builds the wheel in ./build
    for line in readme_commands("### A cluster"):
        command = line.replace("spark://master:7077", master).replace("my_job.py", str(job))
        command = command.replace("dist", str(tmp_path / "dist"))
        done = subprocess.run(
            command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        if leftover:
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    assert hudi_rs_table(str(tmp_path / "data" / "trips")).num_rows == 2
