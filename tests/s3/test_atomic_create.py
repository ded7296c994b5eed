"""`Storage.create_new` on S3 (moto's server, which enforces `If-None-Match: *` as S3 does): one
conditional PUT through obstore, so of any number of creators of one key, in threads and in
separate OS processes, exactly one succeeds and the object holds its bytes. No Spark."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import traceback
import uuid
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from pyhudi.exceptions import CommitConflictError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.storage import Storage
from pyhudi.storage.conditional import create_if_absent, forget_stores
from pyhudi.timeline.active import ActiveTimeline
from tests.helpers.s3 import SECRET_KEY

THREADS = 8
PROCESSES = 2
#: Waits for contenders to get ready; generous, as the machine may be busy.
READY_TIMEOUT_S = 120

#: One contender in its own OS process: builds its store and connections on a key of its own,
#: says "ready", waits for the go file, then races on the shared key and prints its outcome.
CONTENDER = """
import os, sys, time
from pyhudi.storage import Storage
table_uri, key, name, go = sys.argv[1:5]
storage, root = Storage.for_uri(table_uri)
storage.create_new(f"{root}/warm/{name}", b"")
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
try:
    storage.create_new(key, name.encode())
    print("won", flush=True)
except FileExistsError:
    print("lost", flush=True)
"""


def test_create_new_twice_on_s3_raises_and_keeps_the_first_bytes(bucket) -> None:  # type: ignore[no-untyped-def]
    storage, root = Storage.for_uri(f"{bucket}/t")
    path = f"{root}/.hoodie/20240101000000000.commit"
    storage.create_new(path, b"first")
    shipped = pickle.loads(pickle.dumps(storage))  # as executors get it: no store inside

    with pytest.raises(FileExistsError) as caught:
        shipped.create_new(path, b"second")

    assert str(caught.value) == path
    assert storage.read_bytes(path) == b"first"
    assert storage.has_atomic_create


def test_create_new_race_of_threads_and_processes_has_one_winner(bucket, tmp_path) -> None:  # type: ignore[no-untyped-def]
    table_uri = f"{bucket}/race"
    storage, root = Storage.for_uri(table_uri)
    key, go = f"{root}/.hoodie/20240101000000000.commit", tmp_path / "go"
    processes = [_start_contender(table_uri, key, f"process-{i}", go) for i in range(PROCESSES)]
    outcomes: dict[str, str] = {}
    ready, start = threading.Barrier(THREADS + 1), threading.Event()
    threads = [
        threading.Thread(
            target=_thread_contender,
            args=(storage, root, key, f"thread-{i}", (ready, start), outcomes),
        )
        for i in range(THREADS)
    ]
    for thread in threads:
        thread.start()
    ready.wait(READY_TIMEOUT_S)

    go.touch()  # the processes and the threads leave together
    start.set()
    for thread in threads:
        thread.join(READY_TIMEOUT_S)
    for name, process in processes:
        out, err = process.communicate(timeout=READY_TIMEOUT_S)
        assert process.returncode == 0, err
        outcomes[name] = out.split()[-1]

    assert len(outcomes) == THREADS + PROCESSES, outcomes
    winners = [name for name, outcome in outcomes.items() if outcome == "won"]
    assert len(winners) == 1, outcomes
    assert sorted(set(outcomes.values())) == ["lost", "won"], outcomes
    assert storage.read_bytes(key) == winners[0].encode()


def test_two_timeline_writers_completing_one_instant_on_s3_complete_it_once(bucket) -> None:  # type: ignore[no-untyped-def]
    storage, root = Storage.for_uri(f"{bucket}/table")
    first = ActiveTimeline(storage, root)
    inflight = first.transition_to_inflight(
        first.create_requested("20240101000000000", Action.COMMIT)
    )
    second = ActiveTimeline.load(*Storage.for_uri(f"{bucket}/table"))
    assert second.timeline.filter(lambda i: i.is_inflight)  # both see the same pending instant
    results: dict[str, object] = {}
    barrier = threading.Barrier(2)

    def complete(name: str, timeline: ActiveTimeline) -> None:
        barrier.wait()
        try:
            results[name] = timeline.complete(inflight, name.encode())
        except CommitConflictError as err:
            results[name] = err

    threads = [
        threading.Thread(target=complete, args=item)
        for item in (("first", first), ("second", second))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(READY_TIMEOUT_S)

    completed = [name for name, result in results.items() if isinstance(result, Instant)]
    conflicts = [r for r in results.values() if isinstance(r, CommitConflictError)]
    assert len(completed) == 1 and len(conflicts) == 1, results
    assert "timeline file already exists" in str(conflicts[0])
    reloaded = ActiveTimeline.load(storage, root)
    (instant,) = reloaded.timeline
    assert instant.state == State.COMPLETED
    assert reloaded.read_content(instant) == completed[0].encode()


def test_create_new_reaches_an_http_endpoint_without_allow_http_or_region(
    bucket, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """pyhudi itself allows plain HTTP for an `http://` AWS_ENDPOINT_URL and takes the region
    pyarrow resolved; obstore alone would refuse the scheme."""
    for name in ("AWS_ALLOW_HTTP", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    forget_stores()
    try:
        storage, root = Storage.for_uri(f"{bucket}/plain")
        storage.create_new(f"{root}/x", b"one")
        with pytest.raises(FileExistsError):
            storage.create_new(f"{root}/x", b"two")
    finally:
        forget_stores()
    assert storage.read_bytes(f"{root}/x") == b"one"


def test_a_failed_create_names_the_path_and_shows_no_secret(s3_server) -> None:  # type: ignore[no-untyped-def]
    missing = f"lake-missing-{uuid.uuid4().hex[:12]}"
    path = f"{missing}/t/.hoodie/hoodie.properties"

    with pytest.raises(FileNotFoundError) as caught:
        create_if_absent("s3", missing, path, b"x")

    shown = "".join(traceback.format_exception(caught.value))
    assert path in str(caught.value)
    assert SECRET_KEY not in shown


def test_atomic_create_is_claimed_for_object_stores_and_local_disks_only() -> None:
    schemes = {"s3": True, "gs": True, "abfss": True, "hdfs": False, "viewfs": False}
    for scheme, atomic in schemes.items():
        storage = Storage(pafs.LocalFileSystem(), scheme=scheme, authority="bucket")
        assert storage.has_atomic_create is atomic, scheme
    assert Storage(pafs.LocalFileSystem()).has_atomic_create


def _thread_contender(
    storage: Storage,
    root: str,
    key: str,
    name: str,
    signals: tuple[threading.Barrier, threading.Event],
    outcomes: dict[str, str],
) -> None:
    ready, start = signals
    storage.create_new(f"{root}/warm/{name}", b"")  # connections open before the race
    ready.wait(READY_TIMEOUT_S)
    start.wait(READY_TIMEOUT_S)
    try:
        storage.create_new(key, name.encode())
        outcomes[name] = "won"
    except FileExistsError:
        outcomes[name] = "lost"


def _start_contender(
    table_uri: str, key: str, name: str, go: Path
) -> tuple[str, subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-c", CONTENDER, table_uri, key, name, str(go)],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()  # blocks until the contender is ready (or dies)
    if line != "ready":
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"contender {name} did not start: {line!r}\n{err}")
    return name, process
