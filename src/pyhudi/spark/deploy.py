"""Local Spark deployments started from the pyspark distribution, on 127.0.0.1: a standalone
master and worker, a Spark Connect server (`make demo-cluster`, the deployment tests).

Each one is a child process started here (never a daemon script that forks away), in its own
process group, so leaving the `with` block stops exactly what was started, even after an error.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def spark_env(log_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(log_dir),
        "SPARK_WORKER_DIR": str(log_dir / "work"),
        # executors' Python workers import pyhudi from this interpreter's environment
        "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


@dataclass
class Started:
    """Child processes of one deployment, stopped newest first."""

    log_dir: Path
    processes: list[tuple[str, subprocess.Popen]] = field(default_factory=list)

    def start(self, name: str, command: list[str]) -> subprocess.Popen:
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 (closed with the process)
        process = subprocess.Popen(
            command,
            env=spark_env(self.log_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends its children too
        )
        self.processes.append((name, process))
        return process

    def log(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        for _, process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for _, process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def wait_for(started: Started, name: str, ready: str, timeout_s: float = 240) -> None:
    """Until the process' log shows `ready`; fails with the log when it exits or times out."""
    deadline = time.monotonic() + timeout_s
    process = dict(started.processes)[name]
    while time.monotonic() < deadline:
        if ready in started.log(name):
            return
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{started.log(name)}")
        time.sleep(1)
    raise TimeoutError(f"{name} not ready after {timeout_s} s:\n{started.log(name)}")


def _host() -> tuple[str, ...]:
    return ("--host", "127.0.0.1", "--webui-port", str(free_port()))


def _confs(conf: dict[str, str]) -> list[str]:
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


@contextlib.contextmanager
def connect_server(log_dir: Path, master: str = "local[2]") -> Iterator[str]:
    """A Spark Connect server (the class `sbin/start-connect-server.sh` runs, in the foreground);
    yields its `sc://` URL."""
    port = free_port()
    conf = {
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.driver.memory": "1g",
        "spark.sql.shuffle.partitions": "4",
        # the server starts a Python process per streaming foreachBatch; slow on busy machines
        "spark.python.authenticate.socketTimeout": "120s",
    }
    submit = str(SPARK_HOME / "bin" / "spark-submit")
    started = Started(log_dir)
    try:
        started.start(
            "connect",
            [submit, "--class", SPARK_CONNECT_SERVER, "--master", master, *_confs(conf)],
        )
        wait_for(started, "connect", "Spark Connect server started")
        yield f"sc://127.0.0.1:{port}"
    finally:
        started.stop()


@contextlib.contextmanager
def standalone_cluster(log_dir: Path, *, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """A standalone master and one worker, as `start-master.sh`/`start-worker.sh` run them (in
    the foreground); yields the master URL."""
    port = free_port()
    master = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    started = Started(log_dir)
    try:
        started.start(
            "master",
            [spark_class, "org.apache.spark.deploy.master.Master", *_host(), "--port", str(port)],
        )
        wait_for(started, "master", "I have been elected leader")
        resources = ("--cores", str(cores), "--memory", memory)
        started.start(
            "worker",
            [spark_class, "org.apache.spark.deploy.worker.Worker", *_host(), *resources, master],
        )
        wait_for(started, "worker", "Successfully registered with master")
        yield master
    finally:
        started.stop()
