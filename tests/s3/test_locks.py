"""Hudi 1.x's storage-based lock on S3 (moto's server, which enforces `If-None-Match` and
`If-Match` as S3 does) and on local disk, and hudi-aws's DynamoDB lock (moto serves DynamoDB at
the same endpoint): each lock in Hudi's exact format, renewal, release and takeover as Hudi's
provider does them, and real OS processes contending for it (mutual exclusion; a SIGKILLed
holder's lease taken over once it lapsed). No Spark, but the tests that write."""

from __future__ import annotations

import json
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

import pyhudi
from pyhudi.config.concurrency import (
    DYNAMODB_LOCK,
    FILE_SYSTEM_LOCK,
    STORAGE_BASED_LOCK,
    STORAGE_LOCK,
)
from pyhudi.exceptions import ConfigError, LockError
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.lock import LockConfig, lock_provider
from pyhudi.table.lock.dynamodb import DynamoDBBasedLockProvider
from pyhudi.table.lock.lease import CLOCK_DRIFT_BUFFER_MS, StorageBasedLockProvider
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.timeline_builder import table_props

LOCK_KEY = ".hoodie/.locks/table_lock.json"
#: Hudi's shortest allowed lease (10 s, renewed every second), for the tests that must see a
#: renewal or outlive a lease; the others keep Hudi's defaults.
FAST_HUDI = {
    "hoodie.write.lock.storage.validity.timeout.secs": "10",
    "hoodie.write.lock.storage.renew.interval.secs": "1",
}
#: pyhudi's earlier name with its earlier timing: a 600 ms lease renewed every 300 ms.
FAST_PYHUDI = {"hoodie.write.lock.heartbeat_interval_ms": "300"}
PROCESS_TIMEOUT_S = 120


def occ(provider: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": provider,
        "hoodie.write.lock.wait_time_ms_between_retry": "50",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "50",
        "hoodie.write.lock.client.num_retries": "100",
        **extra,
    }


#: The DynamoDB lock's lease is `hoodie.write.lock.wait_time_ms` (Hudi's default 60 s): 1.5 s here.
DYNAMODB_LEASE_MS = 1_500


def dynamodb(**extra: str) -> dict[str, str]:
    """OCC with the DynamoDB lock in a lock table of its own, at the tests' endpoint."""
    return occ(
        DYNAMODB_LOCK,
        **{
            "hoodie.write.lock.dynamodb.table": f"locks-{uuid.uuid4().hex[:8]}",
            "hoodie.write.lock.dynamodb.endpoint_url": os.environ["AWS_ENDPOINT_URL"],
            "hoodie.write.lock.wait_time_ms": str(DYNAMODB_LEASE_MS),
            **extra,
        },
    )


def _provider(table_uri: str, options: dict[str, str]) -> StorageBasedLockProvider:
    storage, base = Storage.for_uri(table_uri)
    provider = lock_provider(storage, base, LockConfig.from_options(options))
    assert isinstance(provider, StorageBasedLockProvider)
    return provider


class S3Object:
    """The lock object as any S3 client sees it (boto3, not pyhudi's code)."""

    def __init__(self, table_uri: str) -> None:
        bucket, _, prefix = table_uri.removeprefix("s3://").partition("/")
        self.bucket, self.key = bucket, f"{prefix}/{LOCK_KEY}"
        self.client = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])

    def get(self) -> tuple[bytes, str]:
        answer = self.client.get_object(Bucket=self.bucket, Key=self.key)
        return answer["Body"].read(), answer["ETag"]

    def record(self) -> dict[str, Any]:
        return json.loads(self.get()[0])

    def put(self, record: dict[str, Any]) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.key, Body=json.dumps(record).encode())


def _now_ms() -> int:
    return int(time.time() * 1000)


# ---- the lock object, in Hudi's format -------------------------------------------------------


def test_storage_lock_on_s3_writes_hudis_lock_object_renews_and_releases_it(bucket):
    table = f"{bucket}/t"
    provider = _provider(table, occ(STORAGE_BASED_LOCK, **FAST_HUDI))
    lock = S3Object(table)
    before_ms = _now_ms()
    assert provider.try_lock(0)
    content, etag = lock.get()
    # Jackson's compact JSON of Hudi's StorageLockData, in its creator's field order.
    match = re.fullmatch(rb'\{"expired":false,"validUntil":(\d+),"owner":"([^"]+)"\}', content)
    assert match, content
    valid_until = int(match.group(1))
    assert before_ms + 10_000 <= valid_until <= _now_ms() + 10_000
    assert match.group(2).decode() == provider.owner

    deadline = time.monotonic() + 30  # the renewal (every 1 s) is awaited, not assumed
    renewed = lock.record()
    while renewed["validUntil"] == valid_until and time.monotonic() < deadline:
        time.sleep(0.1)
        renewed = lock.record()
    assert renewed["validUntil"] > valid_until
    assert (renewed["expired"], renewed["owner"]) == (False, provider.owner)
    assert lock.get()[1] != etag  # a new object version, written If-Match the previous one

    provider.unlock()
    released = lock.record()  # Hudi keeps the object, marked expired, validUntil as last written
    assert released["expired"] is True and released["owner"] == provider.owner
    assert released["validUntil"] >= renewed["validUntil"]
    assert list(released) == ["expired", "validUntil", "owner"]


def test_storage_lock_on_s3_respects_a_live_lease_and_takes_over_dead_ones(bucket):
    table = f"{bucket}/t"
    lock = S3Object(table)
    provider = _provider(table, occ(STORAGE_BASED_LOCK))
    live = {"expired": False, "validUntil": _now_ms() + 60_000, "owner": "hudi-writer-uuid"}
    lock.put(live)
    _, etag = lock.get()
    assert not provider.try_lock(200)
    assert "hudi-writer-uuid" in provider.current_owner
    assert lock.get()[1] == etag  # untouched

    for dead in (
        {"expired": False, "validUntil": _now_ms() - CLOCK_DRIFT_BUFFER_MS - 100, "owner": "a"},
        {"expired": True, "validUntil": _now_ms() + 60_000, "owner": "b"},  # released
    ):
        lock.put(dead)
        taker = _provider(table, occ(STORAGE_BASED_LOCK))
        assert taker.try_lock(0)
        assert lock.record()["owner"] == taker.owner
        taker.unlock()


def test_storage_lock_within_the_clock_drift_buffer_is_still_live(bucket):
    table = f"{bucket}/t"
    S3Object(table).put({"expired": False, "validUntil": _now_ms() - 100, "owner": "late"})
    assert not _provider(table, occ(STORAGE_BASED_LOCK)).try_lock(0)


def test_storage_conditional_replace_on_s3_fails_on_a_stale_version(bucket):
    storage, root = Storage.for_uri(f"{bucket}/t")
    storage = pickle.loads(pickle.dumps(storage))  # picklable, stores built on use
    path = f"{root}/x.json"
    first = storage.put_if_version(path, b"1", None)
    assert first is not None and storage.put_if_version(path, b"2", None) is None
    second = storage.put_if_version(path, b"2", first)
    assert second is not None and second != first
    assert storage.put_if_version(path, b"3", first) is None  # stale: If-Match fails (412)
    assert storage.read_versioned(path) == (b"2", second)
    assert storage.put_if_version(f"{root}/absent", b"x", first) is None
    assert storage.read_versioned(f"{root}/absent") is None


def test_file_system_lock_on_s3_is_refused_naming_the_storage_based_lock(bucket):
    with pytest.raises(ConfigError, match=re.escape(STORAGE_BASED_LOCK)):
        lock_provider(
            *Storage.for_uri(f"{bucket}/t"), LockConfig.from_options(occ(FILE_SYSTEM_LOCK))
        )


# ---- real processes --------------------------------------------------------------------------

#: One writer process: opens the table, says ready, waits for the go file, then either counts
#: (`rounds` read-modify-writes of the counter object, each under `table_transaction`) or takes
#: the lock and holds it until killed (`rounds` = 0).
WORKER = """
import json, os, sys, time
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.lock import table_transaction
table_uri, rounds, options, ready, go = sys.argv[1:6]
rounds, options = int(rounds), json.loads(options)
ctx = TableContext.open(table_uri)
storage, counter = Storage.for_uri(table_uri + "/counter")
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.01)
if rounds == 0:
    with table_transaction(ctx, options):
        print("holding", flush=True)
        time.sleep(3600)
for _ in range(rounds):
    with table_transaction(ctx, options):
        value = int(storage.read_bytes(counter))
        time.sleep(0.02)  # widen the read-modify-write window
        storage.write_bytes(counter, str(value + 1).encode())
print("done", flush=True)
"""


def _table(location: str, bucket: str, tmp_path: Path) -> str:
    table = f"{bucket}/t" if location == "s3" else str(tmp_path / "t")
    TableContext.create(table, table_props())
    storage, counter = Storage.for_uri(f"{table}/counter")
    storage.write_bytes(counter, b"0")
    return table


def _start(
    table: str, rounds: int, options: dict[str, str], tmp_path: Path, name: str
) -> subprocess.Popen[str]:
    args = [table, str(rounds), json.dumps(options), str(tmp_path / f"{name}.ready")]
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, *args, str(tmp_path / "go")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _go(tmp_path: Path, names: list[str]) -> None:
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    while not all((tmp_path / f"{n}.ready").exists() for n in names):
        assert time.monotonic() < deadline, "workers did not start"
        time.sleep(0.05)
    (tmp_path / "go").touch()


@pytest.fixture
def workers():  # type: ignore[no-untyped-def]
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(
    ("location", "options"),
    [
        ("s3", occ(STORAGE_BASED_LOCK, **FAST_HUDI)),
        ("local", occ(STORAGE_LOCK, **FAST_PYHUDI)),
        ("s3", dynamodb()),
    ],
    ids=["storage-s3", "storage-local", "dynamodb-s3"],
)
def test_lock_excludes_three_processes(bucket, tmp_path, workers, location, options):
    table, rounds, names = _table(location, bucket, tmp_path), 6, ["w0", "w1", "w2"]
    workers.extend(_start(table, rounds, options, tmp_path, name) for name in names)
    _go(tmp_path, names)
    for process in workers:
        out, err = process.communicate(timeout=PROCESS_TIMEOUT_S)
        assert process.returncode == 0 and out.strip() == "done", err
    storage, counter = Storage.for_uri(f"{table}/counter")
    assert storage.read_bytes(counter) == str(len(names) * rounds).encode()  # no lost update


#: The takeover waits out the dead holder's lease: the 600 ms one of pyhudi's earlier name (the
#: same object and rules) rather than Hudi's shortest allowed, 10 s, on S3 as on disk.
@pytest.mark.parametrize(
    ("location", "options"),
    [("s3", occ(STORAGE_LOCK, **FAST_PYHUDI)), ("local", occ(STORAGE_LOCK, **FAST_PYHUDI))],
)
def test_storage_lock_of_a_sigkilled_holder_is_taken_over_once_its_lease_lapsed(
    bucket, tmp_path, workers, location, options
):
    table = _table(location, bucket, tmp_path)
    holder = _start(table, 0, options, tmp_path, "holder")
    workers.append(holder)
    _go(tmp_path, ["holder"])
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    holder.send_signal(signal.SIGKILL)
    assert holder.wait(PROCESS_TIMEOUT_S) == -signal.SIGKILL

    contender = _provider(table, options)
    storage, path = Storage.for_uri(f"{table}/{LOCK_KEY}")
    seen = storage.read_versioned(path)
    assert seen is not None
    dead = json.loads(seen[0])
    assert dead["expired"] is False  # nobody released it
    if dead["validUntil"] + CLOCK_DRIFT_BUFFER_MS > _now_ms() + 300:
        assert not contender.try_lock(0)  # still within its lease
    assert contender.try_lock(60_000)
    taken_ms = _now_ms()
    assert taken_ms > dead["validUntil"] + CLOCK_DRIFT_BUFFER_MS  # never before it lapsed
    assert taken_ms < dead["validUntil"] + CLOCK_DRIFT_BUFFER_MS + 10_000  # and soon after
    assert json.loads(storage.read_bytes(path))["owner"] == contender.owner
    contender.unlock()


# ---- through a write ---------------------------------------------------------------------------


def test_two_occ_writes_on_s3_commit_under_the_storage_based_lock(spark, bucket):
    path = f"{bucket}/trips"
    options = {**trips_options("locked"), **occ(STORAGE_BASED_LOCK)}
    for batch in (trips(0, 10), trips(10, 10, ts=2)):
        pyhudi.write(
            df_of(spark, batch), path, {**options, "hoodie.datasource.write.operation": "insert"}
        )
    assert pyhudi.read(spark, path).count() == 20
    released = S3Object(path).record()
    assert released["expired"] is True and released["owner"].startswith("pyhudi-")


# ---- the DynamoDB lock -------------------------------------------------------------------------


class LockItem:
    """The lock's item as any DynamoDB client sees it (boto3, not pyhudi's code)."""

    def __init__(self, options: dict[str, str], key: str) -> None:
        self.table, self.key = options["hoodie.write.lock.dynamodb.table"], key
        self.client = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL"])

    def get(self) -> dict[str, Any] | None:
        answer = self.client.get_item(
            TableName=self.table, Key={"key": {"S": self.key}}, ConsistentRead=True
        )
        item = answer.get("Item")
        return None if item is None else {name: value["S"] for name, value in item.items()}

    def put(self, **attributes: str) -> None:
        item = {"key": self.key, **attributes}
        self.client.put_item(
            TableName=self.table, Item={name: {"S": value} for name, value in item.items()}
        )


def _dynamodb_provider(options: dict[str, str], key: str = "t") -> DynamoDBBasedLockProvider:
    storage, base = Storage.for_uri("/unused")
    provider = lock_provider(storage, base, LockConfig.from_options(options), key)
    assert isinstance(provider, DynamoDBBasedLockProvider)
    return provider


def _until(predicate: Any, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_dynamodb_lock_creates_hudis_table_and_keeps_the_lock_clients_item(s3_server):
    options = dynamodb()
    provider, item = _dynamodb_provider(options), LockItem(options, "t")
    assert provider.try_lock(0)
    table = item.client.describe_table(TableName=item.table)["Table"]
    assert table["KeySchema"] == [{"AttributeName": "key", "KeyType": "HASH"}]
    assert table["AttributeDefinitions"] == [{"AttributeName": "key", "AttributeType": "S"}]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    held = item.get()
    assert held is not None
    assert set(held) == {"key", "ownerName", "leaseDuration", "recordVersionNumber"}
    assert (held["key"], held["ownerName"]) == ("t", provider.owner)
    assert held["leaseDuration"] == str(DYNAMODB_LEASE_MS)
    assert uuid.UUID(held["recordVersionNumber"])
    # The heartbeat (every third of the lease) gives the item a new version, same owner.
    _until(lambda: (item.get() or {}).get("recordVersionNumber") != held["recordVersionNumber"])
    assert (item.get() or {})["ownerName"] == provider.owner
    provider.unlock()
    assert item.get() is None  # released: deleted, as Hudi's lock client does by default


def test_dynamodb_lock_waits_while_the_holder_beats_and_takes_over_once_it_stops(s3_server):
    options = dynamodb()
    item = LockItem(options, "t")
    _dynamodb_provider(options)._dynamodb()  # the lock table
    stop = threading.Event()

    def beat() -> None:  # a live holder: a new version every 300 ms
        while not stop.is_set():
            item.put(
                ownerName="jvm-writer", leaseDuration="1500", recordVersionNumber=str(uuid.uuid4())
            )
            time.sleep(0.3)

    holder = threading.Thread(target=beat, daemon=True)
    holder.start()
    try:
        waiter = _dynamodb_provider(options)
        assert not waiter.try_lock(500)  # tried 0.5 s + one lease, never took a live lock
        assert "jvm-writer" in waiter.current_owner
        assert (item.get() or {})["ownerName"] == "jvm-writer"
    finally:
        stop.set()
        holder.join()
    stopped = time.monotonic()
    taker = _dynamodb_provider(options)
    assert taker.try_lock(10_000)
    assert time.monotonic() - stopped >= DYNAMODB_LEASE_MS / 1000  # a whole unchanged lease
    assert (item.get() or {})["ownerName"] == taker.owner
    taker.unlock()

    item.put(ownerName="x", leaseDuration="60000", recordVersionNumber="v1", isReleased="1")
    released = _dynamodb_provider(options)
    assert released.try_lock(0)  # released (kept with isReleased): taken at once
    assert (item.get() or {})["ownerName"] == released.owner
    released.unlock()


def test_dynamodb_lock_of_a_sigkilled_holder_is_taken_over_after_one_lease(
    bucket, tmp_path, workers
):
    options = dynamodb()
    table = _table("s3", bucket, tmp_path)
    holder = _start(table, 0, options, tmp_path, "holder")
    workers.append(holder)
    _go(tmp_path, ["holder"])
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    key = TableContext.open(table).config.name  # the default partition key: the table's name
    item = LockItem(options, key)
    dead = item.get()
    assert dead is not None and dead["ownerName"].startswith("pyhudi-")
    holder.send_signal(signal.SIGKILL)
    assert holder.wait(PROCESS_TIMEOUT_S) == -signal.SIGKILL

    contender = _dynamodb_provider(options, key)
    started = time.monotonic()
    assert contender.try_lock(30_000)
    assert time.monotonic() - started >= DYNAMODB_LEASE_MS / 1000
    assert time.monotonic() - started < DYNAMODB_LEASE_MS / 1000 + 10
    assert (item.get() or {})["ownerName"] == contender.owner
    contender.unlock()


def test_two_occ_writes_on_s3_commit_under_the_dynamodb_lock(spark, bucket):
    path = f"{bucket}/trips"
    options = {**trips_options("dynamo_locked"), **dynamodb()}
    for batch in (trips(0, 10), trips(10, 10, ts=2)):
        pyhudi.write(
            df_of(spark, batch), path, {**options, "hoodie.datasource.write.operation": "insert"}
        )
    assert pyhudi.read(spark, path).count() == 20
    assert LockItem(options, "dynamo_locked").get() is None  # the table name's lock, released


def test_dynamodb_lock_options_are_checked_and_secrets_never_printed(s3_server, caplog):
    with pytest.raises(ConfigError, match=re.escape("hoodie.write.lock.dynamodb.table")):
        LockConfig.from_options(occ(DYNAMODB_LOCK))
    with pytest.raises(ConfigError, match="give both or neither"):
        LockConfig.from_options(dynamodb(**{"hoodie.aws.access.key": "AKIA"}))
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    unreachable = dynamodb(
        **{
            "hoodie.write.lock.dynamodb.endpoint_url": "http://127.0.0.1:9",  # nothing listens
            "hoodie.aws.access.key": "AKIAEXAMPLE",
            "hoodie.aws.secret.key": secret,
            "hoodie.write.lock.client.num_retries": "0",
            "hoodie.write.lock.wait_time_ms": "10",
        }
    )
    config = LockConfig.from_options(unreachable)
    assert secret not in repr(config)
    with pytest.raises(LockError) as failure:
        from pyhudi.table.lock.manager import acquire

        acquire(_dynamodb_provider(unreachable), config)
    assert "127.0.0.1:9" in str(failure.value)  # says where it failed
    assert secret not in str(failure.value) and secret not in caplog.text
