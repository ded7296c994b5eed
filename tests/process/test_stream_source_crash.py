"""A stream from one Hudi table into another, SIGKILLed and restarted while the source is written.

A writer process upserts table A commit after commit. A stream process reads A
(`spark.readStream.format("hudi")`) and upserts every micro-batch into table B
(`pyhudi.stream_write`); the test SIGKILLs its whole process group (driver, JVM, Python workers)
several times, at random moments of its micro-batches, and restarts it on the same checkpoint.
At the end B holds exactly A's records, and the checkpoint's offsets split A's commits into
consecutive windows, each applied to B by one commit.

Child side: `python -m tests.process.test_stream_source_crash <a> <b> <checkpoint> <mode>`.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.fixtures import TEST_JVM_OPTIONS
from tests.helpers.oracle import hudi_rs_table
from tests.helpers.processes import ROOT, SparkProcess, row_spec

import pyhudi
from pyhudi.exceptions import HudiError

pytestmark = [pytest.mark.process, pytest.mark.spark]

SOURCE = {**trips_options("a"), "hoodie.datasource.write.operation": "upsert"}
TARGET = {**trips_options("b"), "hoodie.datasource.write.operation": "upsert"}
COLUMNS = ["uuid", "city", "ts", "rider", "fare"]
#: One source commit per micro-batch: more batches, more moments to be killed at.
READ = {"hoodie.datasource.streaming.max.commits.per.batch": "1"}
BATCH_ID = "_pyhudi.streaming.batch.id"
KILLS = 2
WRITES_PER_GATE = 3


def _writes(path: str, gates: list[Path]) -> list[dict]:
    """Table A: an insert, then upserts of overlapping keys with new keys, each a commit; a few
    after each gate the test opens (while a stream runs)."""
    insert = {**SOURCE, "hoodie.datasource.write.operation": "insert"}
    steps = [{"op": "write", "path": path, "options": insert, "rows": row_spec(0, 30, tag=1)}]
    tag = 1
    for gate in gates:
        steps.append({"op": "wait_file", "path": str(gate), "timeout_s": 300})
        for _ in range(WRITES_PER_GATE):
            tag += 1
            rows = row_spec(tag * 4, 12, tag=tag, ts=tag)
            steps.append({"op": "write", "path": path, "options": SOURCE, "rows": rows})
    return steps


def _start(args: list[str], log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.process.test_stream_source_crash", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process group and wait until none of it is left."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    proc.wait()


def _commits(path: str) -> list:
    try:
        return list(pyhudi.HudiTable(path).commits())
    except HudiError:  # not created yet (or being created)
        return []


def _wait(condition, timeout_s: float, what: str, *procs: subprocess.Popen) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in {timeout_s}s")
        if procs and all(p.poll() is not None for p in procs):
            raise AssertionError(f"processes exited before {what}")
        time.sleep(0.1)


def _state(path: str) -> dict[str, tuple[str, float]]:
    table = hudi_rs_table(path)
    keys = table.column("uuid").to_pylist()
    assert len(keys) == len(set(keys)), f"duplicate keys in {path}"
    return dict(zip(keys, zip(table.column("city").to_pylist(), table.column("fare").to_pylist())))


def _windows(checkpoint: Path) -> dict[int, str]:
    """Batch id -> the end of its window (the stream's offset log)."""
    ends: dict[int, str] = {}
    if not (checkpoint / "offsets").exists():
        return ends
    for entry in (checkpoint / "offsets").iterdir():
        if entry.name.isdigit():
            ends[int(entry.name)] = json.loads(entry.read_text().splitlines()[-1])["time"]
    return ends


def test_killed_and_restarted_stream_applies_each_source_commit_once(tmp_path):
    a, b, checkpoint = str(tmp_path / "a"), str(tmp_path / "b"), tmp_path / "chk"
    gates = [tmp_path / f"gate-{k}" for k in range(KILLS)]
    writer = SparkProcess(_writes(a, gates), tmp_path / "writer", "writer").start()
    streams: list[subprocess.Popen] = []
    rng = random.Random(7)
    try:
        for run, gate in enumerate(gates):  # A is written while the stream runs
            planned = len(_windows(checkpoint))
            stream = _start([a, b, str(checkpoint), "run"], tmp_path / "stream.log")
            streams.append(stream)
            if run == 0:  # killed after a batch reached B, during the next ones
                _wait(lambda: len(_commits(b)) > 0, 300, "a batch in B", stream)
            else:  # killed during its first batch (reading A or writing B)
                _wait(lambda n=planned: len(_windows(checkpoint)) > n, 300, "a batch", stream)
            gate.touch()
            time.sleep(rng.uniform(1.0, 4.0))
            _kill(stream)
        assert all(r.ok for r in writer.wait(180)), writer.log_tail()
        drain = _start([a, b, str(checkpoint), "drain"], tmp_path / "stream.log")
        streams.append(drain)
        assert drain.wait(180) == 0, (tmp_path / "stream.log").read_text()[-3000:]
    finally:
        for stream in streams:
            _kill(stream)
        writer.kill()
    source_commits = [c.time for c in _commits(a)]
    assert len(source_commits) == 1 + KILLS * WRITES_PER_GATE
    assert _state(b) == _state(a)  # every key, its latest values
    ends = _windows(checkpoint)
    assert sorted(ends) == list(range(len(ends)))
    bounds = ["000"] + [ends[i] for i in sorted(ends)]
    assert bounds == sorted(bounds) and bounds[-1] == source_commits[-1]
    windows = {  # batch id -> the source commits it read
        i: [c for c in source_commits if bounds[i] < c <= bounds[i + 1]] for i in sorted(ends)
    }
    assert sorted(c for w in windows.values() for c in w) == source_commits  # each once
    target = pyhudi.HudiTable(b)
    applied = [int(target.commit_metadata(c).extra_metadata[BATCH_ID]) for c in target.commits()]
    assert applied == sorted(set(applied))  # no batch applied twice
    assert applied == [i for i, w in windows.items() if w]  # each non-empty window once


# ---- child side ---------------------------------------------------------------------------------
def main(argv: list[str]) -> int:
    """Stream A into B: `run` until killed, `drain` (availableNow) to the end of A."""
    source, target, checkpoint, mode = argv
    from pyhudi.spark.datasource import register
    from pyhudi.spark.session import local_session

    spark = local_session(
        "stream-source-crash",
        cores=1,
        conf={
            "spark.sql.shuffle.partitions": "1",
            "spark.driver.memory": "1g",
            "spark.driver.extraJavaOptions": TEST_JVM_OPTIONS,
        },
    )
    register(spark)
    while not _commits(source):  # started beside the writer's first commit
        time.sleep(0.2)
    frame = spark.readStream.format("hudi").options(**READ).load(source).select(*COLUMNS)
    trigger = {"availableNow": True} if mode == "drain" else {"processingTime": "0 seconds"}
    query = pyhudi.stream_write(
        frame, target, TARGET, checkpoint_location=checkpoint, trigger=trigger
    )
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
