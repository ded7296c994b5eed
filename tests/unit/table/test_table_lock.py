"""Lock providers and the transaction lock: Hudi's lock file, Hudi's storage-based lease on local
disk, retries, errors (the storage-based lock on S3 and across processes: tests/s3/test_locks.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
from pathlib import Path

import pytest
from tests.helpers.timeline_builder import TimelineBuilder

from pyhudi.config.concurrency import (
    FILE_SYSTEM_LOCK,
    IN_PROCESS_LOCK,
    STORAGE_BASED_LOCK,
    STORAGE_LOCK,
)
from pyhudi.exceptions import ConfigError, CorruptFileError, LockError
from pyhudi.storage import Storage
from pyhudi.table.lock import LockConfig, lock_provider, table_transaction
from pyhudi.table.lock.filesystem import FileSystemBasedLockProvider
from pyhudi.table.lock.lease import StorageBasedLockProvider, StorageLockData, decode_lock

OCC = "optimistic_concurrency_control"


def occ(provider: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.write.concurrency.mode": OCC,
        "hoodie.write.lock.provider": provider,
        "hoodie.write.lock.client.num_retries": "2",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "10",
        "hoodie.write.lock.wait_time_ms": "50",
        "hoodie.write.lock.wait_time_ms_between_retry": "10",
        **extra,
    }


def _provider(root: Path, options: dict[str, str]):  # type: ignore[no-untyped-def]
    storage, base = Storage.for_uri(str(root))
    return lock_provider(storage, base, LockConfig.from_options(options))


# ---- configuration ---------------------------------------------------------------------------


def test_lock_config_unknown_provider_is_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"hoodie\.write\.lock\.provider"):
        LockConfig.from_options(
            occ("org.apache.hudi.client.transaction.lock.DynamoDBBasedLockProvider")
        )


def test_lock_config_occ_without_provider_is_config_error_naming_both_keys():
    with pytest.raises(
        ConfigError, match=r"hoodie\.write\.concurrency\.mode=.*hoodie\.write\.lock\.provider"
    ):
        LockConfig.from_options({"hoodie.write.concurrency.mode": OCC})


def test_lock_config_unknown_concurrency_mode_is_config_error():
    with pytest.raises(ConfigError, match=r"hoodie\.write\.concurrency\.mode"):
        LockConfig.from_options(
            {"hoodie.write.concurrency.mode": "non_blocking_concurrency_control"}
        )


def test_lock_config_unknown_conflict_strategy_is_config_error():
    options = occ(IN_PROCESS_LOCK, **{"hoodie.write.lock.conflict.resolution.strategy": "x.Custom"})
    with pytest.raises(ConfigError, match=r"conflict\.resolution\.strategy"):
        LockConfig.from_options(options)


def test_lock_config_defaults_are_hudis():
    config = LockConfig.from_options({})
    assert not config.is_multi_writer
    assert (config.wait_time_ms, config.num_retries, config.retry_wait_ms) == (60_000, 15, 1_000)
    assert (config.client_num_retries, config.client_retry_wait_ms) == (50, 5_000)
    assert config.filesystem_expire_minutes == 0


def test_file_lock_on_object_store_is_config_error():
    with pytest.raises(ConfigError, match="atomic create-if-absent"):
        FileSystemBasedLockProvider(Storage.for_uri("mock://bucket/t")[0], "bucket/t/.hoodie/lock")


# ---- Hudi's FileSystemBasedLockProvider -------------------------------------------------------


def test_file_lock_uses_hudis_path_and_lock_info_json(tmp_path):
    provider = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    assert provider.try_lock(0)
    lock_file = tmp_path / ".hoodie" / "lock"
    info = json.loads(lock_file.read_text())
    assert list(info) == ["lockCreateTime", "lockThreadName", "lockStacksInfo"]
    assert time.strptime(info["lockCreateTime"][:19], "%Y-%m-%d %H:%M:%S")
    assert info["lockThreadName"] == threading.current_thread().name
    assert f"pid {os.getpid()}" in info["lockStacksInfo"][0]
    provider.unlock()
    assert not lock_file.exists()


def test_file_lock_excludes_a_second_holder_and_reports_the_owner(tmp_path):
    first = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    second = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    assert first.try_lock(0)
    assert not second.try_lock(0)
    assert "lockCreateTime" in second.current_owner
    first.unlock()
    assert second.try_lock(0)
    second.unlock()


def test_file_lock_written_by_a_jvm_writer_is_respected(tmp_path):
    lock_file = tmp_path / ".hoodie" / "lock"
    lock_file.parent.mkdir(parents=True)
    lock_file.write_text('{\n  "lockCreateTime" : "2024-01-01 00:00:00.000"\n}')
    provider = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    assert not provider.try_lock(0)
    assert lock_file.exists()


def test_file_lock_expired_after_configured_minutes_is_taken_over(tmp_path):
    lock_file = tmp_path / ".hoodie" / "lock"
    lock_file.parent.mkdir(parents=True)
    lock_file.write_text("{}")
    old = time.time() - 120
    os.utime(lock_file, (old, old))
    never = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    assert not never.try_lock(0)  # expire 0 (default): never
    expiring = _provider(
        tmp_path, occ(FILE_SYSTEM_LOCK, **{"hoodie.write.lock.filesystem.expire": "1"})
    )
    assert expiring.try_lock(0)
    assert "lockThreadName" in lock_file.read_text()
    expiring.unlock()


def test_file_lock_unlock_leaves_a_file_taken_over_by_another_holder(tmp_path):
    provider = _provider(tmp_path, occ(FILE_SYSTEM_LOCK))
    assert provider.try_lock(0)
    lock_file = tmp_path / ".hoodie" / "lock"
    lock_file.write_text("someone else")
    provider.unlock()
    assert lock_file.read_text() == "someone else"


def test_file_lock_folder_option_moves_the_lock_file(tmp_path):
    folder = tmp_path / "locks"
    provider = _provider(
        tmp_path / "t", occ(FILE_SYSTEM_LOCK, **{"hoodie.write.lock.filesystem.path": str(folder)})
    )
    assert provider.try_lock(0)
    assert (folder / "lock").exists()
    provider.unlock()


# ---- the storage-based lock on local disk ------------------------------------------------------


def _lock_data(path: Path) -> StorageLockData:
    return decode_lock(path.read_bytes(), str(path))


def test_storage_lock_config_is_hudis_with_its_checks():
    config = LockConfig.from_options(occ(STORAGE_BASED_LOCK))
    assert (config.storage_validity_ms, config.storage_renew_interval_ms) == (300_000, 30_000)
    poll = {"hoodie.write.lock.storage.heartbeat.poll.secs": "2"}  # Hudi's older key
    assert (
        LockConfig.from_options(occ(STORAGE_BASED_LOCK, **poll)).storage_renew_interval_ms == 2000
    )
    for bad, key in [
        ({"hoodie.write.lock.storage.validity.timeout.secs": "9"}, "validity"),
        ({"hoodie.write.lock.storage.renew.interval.secs": "0"}, "renew"),
        ({"hoodie.write.lock.storage.renew.interval.secs": "31"}, "10 x"),
    ]:
        with pytest.raises(ConfigError, match=key):
            LockConfig.from_options(occ(STORAGE_BASED_LOCK, **bad))


def test_storage_lock_earlier_pyhudi_name_keeps_its_heartbeat_interval_key():
    legacy = {"hoodie.write.lock.heartbeat_interval_ms": "300"}
    config = LockConfig.from_options(occ(STORAGE_LOCK, **legacy))
    assert (config.storage_validity_ms, config.storage_renew_interval_ms) == (600, 300)
    hudi = LockConfig.from_options(occ(STORAGE_BASED_LOCK, **legacy))  # Hudi ignores that key
    assert (hudi.storage_validity_ms, hudi.storage_renew_interval_ms) == (300_000, 30_000)


def test_storage_lock_excludes_renews_and_releases_as_hudi(tmp_path):
    # A 1 s renewal keeps the lease valid for 2 s; the renewal itself is awaited (polled).
    options = occ(STORAGE_LOCK, **{"hoodie.write.lock.heartbeat_interval_ms": "1000"})
    first, second = _provider(tmp_path, options), _provider(tmp_path, options)
    assert isinstance(first, StorageBasedLockProvider)
    assert first.try_lock(0)
    lock_file = Path(first.path)
    assert lock_file == tmp_path / ".hoodie" / ".locks" / "table_lock.json"
    before = _lock_data(lock_file)
    assert (before.expired, before.owner) == (False, first.owner)
    after = before
    deadline = time.monotonic() + 30
    while after.valid_until_ms == before.valid_until_ms and time.monotonic() < deadline:
        time.sleep(0.05)
        after = _lock_data(lock_file)
    assert after.valid_until_ms > before.valid_until_ms and after.owner == first.owner
    assert not second.try_lock(100)
    assert first.owner in second.current_owner
    first.unlock()
    released = _lock_data(lock_file)
    assert released.expired and released.owner == first.owner  # the object stays
    assert second.try_lock(0)
    taken = _lock_data(lock_file)
    assert (taken.expired, taken.owner) == (False, second.owner)
    second.unlock()


def test_storage_lock_of_a_dead_holder_is_taken_over_once_past_validity(tmp_path):
    provider = _provider(tmp_path, occ(STORAGE_BASED_LOCK))
    lock_file = Path(provider.path)
    lock_file.parent.mkdir(parents=True)
    now_ms = int(time.time() * 1000)
    lock_file.write_text(
        json.dumps({"expired": False, "validUntil": now_ms + 60_000, "owner": "x"})
    )
    assert not provider.try_lock(0)  # live
    lock_file.write_text(json.dumps({"expired": False, "validUntil": now_ms - 600, "owner": "x"}))
    assert provider.try_lock(0)  # past validUntil + Hudi's 500 ms drift buffer
    assert _lock_data(lock_file).owner == provider.owner
    provider.unlock()


def test_storage_lock_corrupt_file_is_corrupt_file_error_naming_it(tmp_path):
    provider = _provider(tmp_path, occ(STORAGE_BASED_LOCK))
    lock_file = Path(provider.path)
    lock_file.parent.mkdir(parents=True)
    lock_file.write_text('{"expired": null, "validUntil": 1}')
    with pytest.raises(CorruptFileError, match=r"table_lock\.json"):
        provider.try_lock(0)


def test_storage_lock_lost_to_another_writer_is_lock_error_at_unlock(tmp_path):
    provider = _provider(tmp_path, occ(STORAGE_BASED_LOCK))
    assert provider.try_lock(0)
    lock_file = Path(provider.path)
    lock_file.write_text(json.dumps({"expired": False, "validUntil": 1, "owner": "thief"}))
    with pytest.raises(LockError, match=r"lost the table lock .* thief"):
        provider.unlock()
    assert _lock_data(lock_file).owner == "thief"  # never overwritten by the loser


def test_storage_lock_with_hudis_name_ignores_the_lock_folder_as_hudi(tmp_path):
    options = occ(STORAGE_BASED_LOCK, **{"hoodie.write.lock.filesystem.path": str(tmp_path / "x")})
    with pytest.warns(UserWarning, match="ignored"):
        provider = _provider(tmp_path / "t", options)
    assert provider.path == str(tmp_path / "t" / ".hoodie" / ".locks" / "table_lock.json")


# ---- the transaction lock ---------------------------------------------------------------------


def test_transaction_lock_holds_the_file_lock_reentrantly(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    lock_file = Path(tb.ctx.meta_path) / "lock"
    with table_transaction(tb.ctx, occ(FILE_SYSTEM_LOCK)):
        assert lock_file.exists()
        with table_transaction(tb.ctx, occ(FILE_SYSTEM_LOCK)):
            assert lock_file.exists()
        assert lock_file.exists()
    assert not lock_file.exists()


def test_transaction_lock_held_elsewhere_raises_lock_error_naming_holder(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    lock_file = Path(tb.ctx.meta_path) / "lock"
    lock_file.write_text('{"lockThreadName" : "jvm-writer"}')
    started = time.monotonic()
    with (
        pytest.raises(LockError, match="jvm-writer") as err,
        table_transaction(tb.ctx, occ(FILE_SYSTEM_LOCK)),
    ):
        pytest.fail("the lock was held by another writer")
    assert "3 attempts" in str(err.value)
    assert time.monotonic() - started < 5
    assert lock_file.read_text() == '{"lockThreadName" : "jvm-writer"}'


@pytest.mark.parametrize(
    ("provider", "lock_file"),
    [(FILE_SYSTEM_LOCK, "lock"), (STORAGE_LOCK, ".locks/table_lock.json")],
)
def test_transaction_lock_folder_outside_the_table_root(tmp_path, provider, lock_file):
    """The table's storage refuses paths outside the table root; a lock folder elsewhere (Hudi
    allows it) is reached through its own unscoped storage."""
    tb = TimelineBuilder.create(tmp_path / "t")
    assert tb.ctx.storage.root is not None  # the table storage is scoped
    folder = tmp_path / "locks"
    options = occ(provider, **{"hoodie.write.lock.filesystem.path": str(folder)})
    with table_transaction(tb.ctx, options):
        assert (folder / lock_file).exists()
        assert not (Path(tb.ctx.meta_path) / "lock").exists()
    if provider == FILE_SYSTEM_LOCK:
        assert not (folder / lock_file).exists()
    else:  # released as Hudi releases: marked expired, kept
        assert _lock_data(folder / lock_file).expired


def test_transaction_lock_single_writer_takes_no_file_lock(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    with table_transaction(tb.ctx, {}):
        assert not (Path(tb.ctx.meta_path) / "lock").exists()


def test_in_process_lock_excludes_other_threads(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    options = occ(IN_PROCESS_LOCK)
    inside: list[int] = []
    overlaps: list[int] = []

    def critical() -> None:
        for _ in range(20):
            with table_transaction(tb.ctx, options | {"hoodie.write.lock.wait_time_ms": "5000"}):
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(1)
                time.sleep(0.001)
                inside.pop()

    threads = [threading.Thread(target=critical) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not overlaps


def _count_under_lock(root: str, provider: str, rounds: int) -> None:
    from pyhudi.table.context import TableContext

    ctx = TableContext.open(root)
    options = occ(provider, **{"hoodie.write.lock.client.num_retries": "1000"})
    counter = Path(root) / "counter"
    for _ in range(rounds):
        with table_transaction(ctx, options):
            value = int(counter.read_text())
            time.sleep(0.001)  # widen the read-modify-write window
            counter.write_text(str(value + 1))


@pytest.mark.parametrize("provider", [FILE_SYSTEM_LOCK, STORAGE_BASED_LOCK])
def test_lock_excludes_other_processes(tmp_path, provider):
    tb = TimelineBuilder.create(tmp_path / "t")
    root = tb.ctx.base_path
    (Path(root) / "counter").write_text("0")
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_count_under_lock, args=(root, provider, 25)) for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    assert (Path(root) / "counter").read_text() == "75"
