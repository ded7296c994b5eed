"""A standalone Hive metastore (Thrift service) started from the jars of the pyspark distribution,
on an embedded Derby database of its own: what `hive.metastore.uris` points a session at."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark

JARS = Path(pyspark.__file__).parent / "jars"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def standalone_metastore(work: Path, timeout_s: float = 180) -> Iterator[str]:
    """Start `HiveMetaStore` (a separate JVM), yield its `thrift://` URI, stop it afterwards."""
    work.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    conf = {
        "hive.async.log.enabled": "false",  # pyspark ships no LMAX disruptor for async logging
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={work}/metastore_db;create=true",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": str(work / "warehouse"),
    }
    command = [
        "java",
        "-Xmx512m",
        "-cp",
        f"{JARS}/*",
        "org.apache.hadoop.hive.metastore.HiveMetaStore",
    ]
    command += ["-p", str(port)]
    for key, value in conf.items():
        command += ["--hiveconf", f"{key}={value}"]
    with open(work / "metastore.log", "wb") as log:
        process = subprocess.Popen(command, cwd=work, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout_s
        while not _listening(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"the metastore did not start: {(work / 'metastore.log').read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield f"thrift://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(timeout=30)
