"""Faults on S3 as they happen in production, with real writer processes and real SIGKILLs.

The writers are OS processes of their own (their own Spark, S3A and pyarrow) writing to moto's S3
server; afterwards hudi-rs, `pyhudi.read` and `pyhudi.read_arrow` read each table and must agree.

* An upsert SIGKILLed mid-commit (after its inflight file, after its data files, after the
  metadata table's deltacommit): the table reads exactly as before; the next write rolls the dead
  instant back at once; after a clean no object named after the dead instant is left.
* A write SIGKILLed mid-upload (a ~12 MB base file, a multipart upload with a part stored): the
  same; the incomplete multipart upload is no object (no reader sees it, no listing shows it) and
  neither the rollback nor the clean aborts it: it stays, its part stored, until the bucket
  aborts it (a lifecycle rule `AbortIncompleteMultipartUpload`; here `abort_multipart_upload`).
* The endpoint going away during a write (a proxy between the writer and S3, cut while a data
  file task runs) and coming back: the write fails with an error naming what failed, its undo
  fails too (S3 is gone), the table reads as before; once the endpoint is back, the same
  process's next write rolls the failed write back at once and commits.

An expired lease (the lock holder stalls): tests/s3/test_locks.py.

Two writer processes run at once: one stops an upsert at each commit point in turn (each on its
own table, each left hanging there), then starts the big write and is SIGKILLed mid-upload; the
other meets the cut endpoint. Each test then checks and recovers its own table.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import pyhudi
from pyhudi.codec.file_names import parse_base_file
from pyhudi.table import faults
from tests.helpers.builders import trips_options
from tests.helpers.processes import (
    S3A_ENV,
    SparkProcess,
    StepResult,
    expected_rows,
    row_spec,
    rows_frame,
)
from tests.helpers.proxy import TcpProxy
from tests.process.checks import (
    State,
    apply_writes,
    assert_no_orphans,
    fault_marks,
    table_state,
    timeline_summary,
)

pytestmark = [pytest.mark.process, pytest.mark.spark]

COMMIT_POINTS = ["write.after_inflight", "write.after_data_files", "write.after_metadata_commit"]
UPLOAD = "upload"
ENDPOINT = "endpoint"
PAUSE_POINT = "write.during_data_files"
#: The tests of the faults that are no parameter.
TESTS = {
    UPLOAD: "test_a_write_killed_mid_upload_leaves_an_incomplete_multipart_upload_no_reader_sees",
    ENDPOINT: "test_the_endpoint_gone_mid_write_fails_it_and_once_back_the_next_write_recovers",
}
#: How long a crash process may take to reach its points: it starts while the module's other
#: tests (and another xdist worker) run, and under that load 240 s was once not enough.
DEADLINE_S = 600

#: Hudi's defaults otherwise: the metadata table on, heartbeats every minute.
OPTIONS = trips_options("faults")
#: The recoveries from the test process: no waiting for a live-looking writer (a recovery must
#: see that the killed process is gone), a heartbeat that never beats during the test.
RECOVER_AT_ONCE = {
    "hoodie.client.heartbeat.interval_in_ms": "3600000",
    "pyhudi.write.wait.for.active.writer.ms": "0",
}
CLEAN = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}
INITIAL = row_spec(0, 60, tag=1)
CRASHED = row_spec(40, 40, tag=5)  # 20 updates, 20 new keys
RECOVERY = row_spec(70, 20, tag=7)
BEFORE = expected_rows(INITIAL)
#: One city, 24,000 rows of ~520 bytes: one ~12 MB base file, uploaded in two parts (pyarrow's
#: 10 MiB and the rest) at once, each over its own connection.
BIG = row_spec(1000, 24_000, tag=9, cities=("sf",), rider_bytes=512)
#: The upload's uplink (a connection's bytes a second): the small part is stored after ~2 s, the
#: 10 MiB part would take 10 s: the test sees the upload with a part stored and kills the writer.
UPLINK_BYTES_PER_S = 2**20


def _op(operation: str) -> dict[str, str]:
    return {"hoodie.datasource.write.operation": operation}


def _write_step(path: str, rows: dict[str, Any], operation: str, **extra: str) -> dict[str, Any]:
    return {
        "op": "write",
        "path": path,
        "options": {**OPTIONS, **_op(operation), **extra},
        "rows": rows,
    }


# ---- the bucket, listed with boto3 -------------------------------------------------------------
@dataclass(frozen=True)
class Upload:
    key: str
    upload_id: str
    part_sizes: tuple[int, ...]


@dataclass(frozen=True)
class Lake:
    """The module's bucket."""

    bucket: str
    client: Any  # boto3's S3 client, straight at moto
    port: int  # moto's

    def uri(self, name: str) -> str:
        return f"s3://{self.bucket}/{name}"

    def keys(self, prefix: str) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        )
        return sorted(o["Key"] for page in pages for o in page.get("Contents", ()))

    def copy(self, source: str, target: str) -> None:
        """Copy every object under the prefix `source` to the prefix `target`."""
        for key in self.keys(f"{source}/"):
            self.client.copy_object(
                Bucket=self.bucket,
                Key=f"{target}/{key.removeprefix(source + '/')}",
                CopySource={"Bucket": self.bucket, "Key": key},
            )

    def uploads(self, prefix: str, *, data: bool = False) -> list[Upload]:
        """Multipart uploads begun under `prefix` and neither completed nor aborted (`data`:
        only those of data files, outside `.hoodie`)."""
        listed = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=prefix)
        found = []
        for upload in listed.get("Uploads", ()):
            if data and "/.hoodie/" in upload["Key"]:
                continue
            try:
                parts = self.client.list_parts(
                    Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                ).get("Parts", ())
            except self.client.exceptions.NoSuchUpload:  # completed since it was listed
                continue
            sizes = tuple(p["Size"] for p in parts)
            found.append(Upload(upload["Key"], upload["UploadId"], sizes))
        return found


def _named_after(keys: list[str], instant: str) -> list[str]:
    return [k for k in keys if instant in k.rsplit("/", 1)[-1]]


# ---- the faults, run at once -------------------------------------------------------------------
@dataclass
class Fault:
    """One table's fault: the writer process (its first step wrote `INITIAL` to the table) and
    what the test saw of it."""

    name: str
    process: SparkProcess
    mark: Path
    uploads: list[Upload] = field(default_factory=list)  # in flight when it was killed
    failed: StepResult | None = None  # the write that met the cut endpoint
    release: Path | None = None
    barrier: Path | None = None
    released: int = 0  # pauses released so far

    @property
    def table(self) -> str:
        """Its table: this key prefix in the bucket."""
        return _table(self.name)

    @property
    def returncode(self) -> int | None:
        return None if self.process.proc is None else self.process.proc.returncode

    def result(self, step: int) -> StepResult | None:
        return next((r for r in self.process.results() if r.step == step), None)

    def paused(self) -> bool:
        """A task waits at the pause point (reached more often than released)."""
        return fault_marks(self.mark)[PAUSE_POINT] > self.released

    def release_pause(self) -> None:
        """Let the waiting task (if any) go on: one release per pause, once the last is taken."""
        assert self.release is not None
        if self.paused() and not self.release.exists():
            self.release.touch()
            self.released += 1


def _table(name: str) -> str:
    return name.replace(".", "-")


def _until(
    condition: Callable[[], bool], fault: Fault, what: str, *, releasing: bool = False
) -> None:
    """Wait for `condition` (`releasing`: every pause meanwhile), failing when the process ended
    first or it took too long."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if not fault.process.alive() or time.monotonic() > deadline:
            raise AssertionError(f"{fault.name}: no {what}\n{fault.process.log_tail()}")
        if releasing:
            fault.release_pause()
        time.sleep(0.05)


@dataclass
class Faults:
    """Runs the writers; each run returns the faults of its process by name."""

    lake: Lake
    work: Path
    processes: list[SparkProcess] = field(default_factory=list)
    proxies: list[TcpProxy] = field(default_factory=list)

    def start(self, name: str, steps: list[dict], env: dict[str, str]) -> SparkProcess:
        process = SparkProcess(steps, self.work / name, "writer", {S3A_ENV: "1", **env})
        self.processes.append(process)
        return process.start()

    def proxy(self, **options: int) -> TcpProxy:
        proxy = TcpProxy(self.lake.port, **options).start()
        self.proxies.append(proxy)
        return proxy

    def initial(self, name: str) -> dict:
        return _write_step(self.lake.uri(_table(name)), INITIAL, "insert")

    def crash(self, points: list[str], upload: bool) -> dict[str, Fault]:
        """One process: `INITIAL` written once (and copied to each table), then an upsert (each
        on its table) stopped at each of `points` in turn (a `hang` there, then the next one
        starts), then (`upload`) a big insert over a slow uplink; the whole process group is
        SIGKILLed once the insert's data file upload has a part stored (or, without it, once
        every upsert is at its point)."""
        proxy = self.proxy(upload_bytes_per_s=UPLINK_BYTES_PER_S)
        names = [*points, *([UPLOAD] if upload else [])]
        marks = {point: self.work / f"{point}.mark" for point in points}
        copied = self.work / "copied"
        steps = [self.initial("crash"), {"op": "wait_file", "path": str(copied)}]
        for point in points:
            upsert = _write_step(self.lake.uri(_table(point)), CRASHED, "upsert")
            steps += [
                {"op": "fault", "point": point, "action": "hang", "mark": str(marks[point])},
                {"op": "background", "steps": [upsert]},
                {"op": "wait_file", "path": str(marks[point]), "timeout_s": DEADLINE_S},
            ]
        if upload:
            steps += [{"op": "fault"}, _write_step(self.lake.uri(_table(UPLOAD)), BIG, "insert")]
        process = self.start("crash", steps, {"AWS_ENDPOINT_URL": proxy.url})
        crashed = {n: Fault(n, process, marks.get(n, self.work / "no.mark")) for n in names}
        first = next(iter(crashed.values()))
        _until(lambda: first.result(0) is not None, first, "table")
        for name in names:
            self.lake.copy(_table("crash"), _table(name))
        copied.touch()
        deadline = time.monotonic() + DEADLINE_S
        while process.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
            if any(not r.ok for r in process.results()):
                break
            if not all(fault_marks(m) for m in marks.values()):
                continue  # the bucket is listed only from then on (moto's time is the test's)
            uploads = self.lake.uploads(f"{_table(UPLOAD)}/", data=True) if upload else []
            if not upload or any(size >= 2**20 for u in uploads for size in u.part_sizes):
                process.kill()
                if upload:
                    crashed[UPLOAD].uploads = uploads
                return crashed
        process.kill()
        raise AssertionError(f"the crash process did not get there\n{process.log_tail()}")

    def cut_mid_write(self) -> dict[str, Fault]:
        """An upsert through a proxy, paused inside a data file task (its first file written);
        the proxy is cut, the task goes on and the write fails; the proxy is restored. The same
        process then waits at a barrier; its next write recovers (`test_the_endpoint_...`)."""
        proxy = self.proxy()
        work = self.work / ENDPOINT
        path = self.lake.uri(_table(ENDPOINT))
        # The recovery fails at once if the failed write still looks live.
        no_wait = {"pyhudi.write.wait.for.active.writer.ms": "0"}
        steps = [
            self.initial(ENDPOINT),
            _write_step(path, CRASHED, "upsert"),
            {"op": "wait_file", "path": str(work / "barrier"), "timeout_s": 600},
            _write_step(path, RECOVERY, "upsert", **no_wait),
        ]
        env = {  # in the Spark tasks from the start: the INITIAL write pauses too
            "AWS_ENDPOINT_URL": proxy.url,
            faults.FAULT_POINT_ENV: PAUSE_POINT,
            faults.FAULT_ACTION_ENV: "pause",
            faults.FAULT_MARK_ENV: str(work / "mark"),
            faults.FAULT_RELEASE_ENV: str(work / "release"),
        }
        fault = Fault(ENDPOINT, self.start(ENDPOINT, steps, env), work / "mark")
        fault.release, fault.barrier = work / "release", work / "barrier"
        _until(lambda: fault.result(0) is not None, fault, "table", releasing=True)
        _until(fault.paused, fault, "pause in the upsert")
        proxy.cut()
        fault.release_pause()
        _until(lambda: fault.result(1) is not None, fault, "end of the upsert")
        proxy.restore()
        fault.failed = fault.result(1)
        return {ENDPOINT: fault}

    def close(self) -> None:
        for process in self.processes:
            process.kill()
        for proxy in self.proxies:
            proxy.close()


# Session scope: pytest sets up the shared Spark session (session scope) after these, not before,
# so the writers start while it starts; `_stop_writers` ends them with the module.
@pytest.fixture(scope="session")
def lake(s3_server) -> Lake:  # type: ignore[no-untyped-def]
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server.url)
    name = f"faults-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    client.create_bucket(Bucket=name)
    return Lake(name, client, int(s3_server.url.rsplit(":", 1)[1]))


Crashed = dict[str, "Future[dict[str, Fault]]"]


@pytest.fixture(scope="session")
def writers(lake, tmp_path_factory, request) -> Iterator[tuple[Faults, Crashed]]:  # type: ignore[no-untyped-def]
    """The faults of this module's selected tests, started at once (each process driven from a
    thread of its own): fault name -> the future of its process's faults."""
    module = sys.modules[__name__]
    wanted = {
        item.callspec.params.get("point", "") if hasattr(item, "callspec") else item.originalname
        for item in request.session.items
        if item.module is module
    }
    runner = Faults(lake, tmp_path_factory.mktemp("s3-faults"))
    points = [p for p in COMMIT_POINTS if p in wanted]
    upload = TESTS[UPLOAD] in wanted
    pool = ThreadPoolExecutor(max_workers=2)
    futures: Crashed = {}
    try:
        if points or upload:
            crash = pool.submit(runner.crash, points, upload)
            futures.update(dict.fromkeys([*points, UPLOAD], crash))
        if TESTS[ENDPOINT] in wanted:
            futures[ENDPOINT] = pool.submit(runner.cut_mid_write)
        yield runner, futures
    finally:
        runner.close()  # a thread still waiting sees its process gone and ends
        pool.shutdown(wait=True)


@pytest.fixture(scope="module", autouse=True)
def _stop_writers(writers) -> Iterator[None]:  # type: ignore[no-untyped-def]
    yield
    writers[0].close()


@pytest.fixture
def crashed(writers) -> Crashed:  # type: ignore[no-untyped-def]
    return writers[1]


def _fault(crashed: Crashed, name: str) -> Fault:
    fault = crashed[name].result()[name]
    initial = fault.result(0)
    assert initial is not None and initial.ok, f"{name}: {initial}\n{fault.process.log_tail()}"
    return fault


# ---- the checks --------------------------------------------------------------------------------
def _reads(spark, lake: Lake, table: str) -> State:  # type: ignore[no-untyped-def]
    """hudi-rs, `pyhudi.read` (Spark, S3A) and `pyhudi.read_arrow` (pyarrow) agree; the state."""
    path = lake.uri(table)
    state = table_state(spark, path)  # hudi-rs == pyhudi.read, no duplicates
    arrow = pyhudi.read_arrow(path, columns=["uuid", "city", "fare"]).to_pylist()
    assert {r["uuid"]: (r["city"], r["fare"]) for r in arrow} == state, "read_arrow differs"
    assert len(arrow) == len(state)
    return state


def _pending(lake: Lake, table: str) -> list[str]:
    timeline = pyhudi.HudiTable(lake.uri(table)).timeline
    return sorted({i.time for i in timeline if not i.is_completed})


def _recover_and_clean(spark, lake: Lake, table: str, dead: str) -> None:  # type: ignore[no-untyped-def]
    """The next write (this process) rolls `dead` back at once; a clean; then no object of
    `dead` is left, and no data file the timeline does not reference."""
    path = lake.uri(table)
    started = time.monotonic()
    result = pyhudi.write(
        rows_frame(spark, RECOVERY), path, {**OPTIONS, **RECOVER_AT_ONCE, **_op("upsert")}
    )
    assert list(result.rolled_back) == [dead], timeline_summary(path)
    assert time.monotonic() - started < 60  # no waiting for a heartbeat to expire
    _clean_leaves_nothing_of(lake, table, dead)


def _clean_leaves_nothing_of(lake: Lake, table: str, dead: str) -> None:
    path = lake.uri(table)
    pyhudi.HudiTable(path).clean({**OPTIONS, **CLEAN})
    assert not _named_after(lake.keys(f"{table}/"), dead), timeline_summary(path)
    assert_no_orphans(path)
    assert not _pending(lake, table), timeline_summary(path)


def test_the_endpoint_gone_mid_write_fails_it_and_once_back_the_next_write_recovers(
    crashed, spark, lake
):  # type: ignore[no-untyped-def]
    fault = _fault(crashed, ENDPOINT)
    failed = fault.failed
    assert failed is not None and not failed.ok, failed
    # Its undo could not reach S3 either: the instant is pending, the table reads as before.
    (dead,) = _pending(lake, fault.table)
    assert failed.error == "WriteError", failed
    assert failed.message.startswith(f"write {dead} failed and could not be undone"), failed
    assert "OSError: " in failed.message and "Could not connect to server" in failed.message
    assert _reads(spark, lake, fault.table) == BEFORE

    # The endpoint is back: the same process's next write rolls the failed write back at once.
    assert fault.barrier is not None
    fault.barrier.touch()
    _until(lambda: fault.result(3) is not None, fault, "recovery", releasing=True)
    recovery = fault.result(3)
    assert recovery is not None and recovery.ok, f"{recovery}\n{fault.process.log_tail()}"
    assert list(recovery.rolled_back) == [dead]
    fault.process.wait(DEADLINE_S)
    _clean_leaves_nothing_of(lake, fault.table, dead)
    assert _reads(spark, lake, fault.table) == apply_writes(BEFORE, [expected_rows(RECOVERY)])


@pytest.mark.parametrize("point", COMMIT_POINTS)
def test_an_upsert_killed_mid_commit_reads_as_before_and_the_next_write_recovers(
    crashed, spark, lake, point
):  # type: ignore[no-untyped-def]
    fault = _fault(crashed, point)
    assert fault.returncode == -9 and fault_marks(fault.mark)[point] == 1, (
        f"{point} not reached (exit {fault.returncode})\n{fault.process.log_tail()}"
    )
    assert _reads(spark, lake, fault.table) == BEFORE
    (dead,) = _pending(lake, fault.table)
    left = _named_after(lake.keys(f"{fault.table}/"), dead)
    data_files = [k for k in left if parse_base_file("", k.rsplit("/", 1)[-1])]
    # After the data files, they are on S3 (complete objects), invisible to every reader.
    assert bool(data_files) == (point != "write.after_inflight"), left
    assert not lake.uploads(f"{fault.table}/"), "a multipart upload left by a commit-point kill"
    _recover_and_clean(spark, lake, fault.table, dead)
    assert _reads(spark, lake, fault.table) == apply_writes(BEFORE, [expected_rows(RECOVERY)])


def test_a_write_killed_mid_upload_leaves_an_incomplete_multipart_upload_no_reader_sees(
    crashed, spark, lake
):  # type: ignore[no-untyped-def]
    fault = _fault(crashed, UPLOAD)
    assert fault.returncode == -9
    (upload,) = fault.uploads
    assert upload.part_sizes, upload
    assert upload.key not in lake.keys(f"{fault.table}/"), "a partial upload became an object"
    assert _reads(spark, lake, fault.table) == BEFORE
    (dead,) = _pending(lake, fault.table)
    name = parse_base_file("", upload.key.rsplit("/", 1)[-1])
    assert name is not None and name.instant_time == dead, upload.key

    _recover_and_clean(spark, lake, fault.table, dead)
    assert _reads(spark, lake, fault.table) == apply_writes(BEFORE, [expected_rows(RECOVERY)])
    # Neither the rollback nor the clean aborts it: it stays, its part stored (and billed), until
    # the bucket's lifecycle rule (AbortIncompleteMultipartUpload) or an operator aborts it.
    assert lake.uploads(f"{fault.table}/") == [upload]
    lake.client.abort_multipart_upload(
        Bucket=lake.bucket, Key=upload.key, UploadId=upload.upload_id
    )
    assert not lake.uploads(f"{fault.table}/")
