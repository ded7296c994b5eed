"""Hudi 1.2's own classes judge pyhudi's storage-based lock object: Hudi's serializer writes the
same bytes as pyhudi, and Hudi's reader reads pyhudi's lock (held, then released) as pyhudi
wrote it. A pyhudi-vs-Hudi writer race on this lock cannot run here: Hudi 1.2 has no storage lock
client for local tables (the last test pins that), and its S3 client (hudi-aws) is not served."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyhudi.config.concurrency import STORAGE_BASED_LOCK
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.lock import LockConfig, lock_provider
from pyhudi.table.lock.lease import StorageLockData, encode_lock
from tests.helpers.timeline_builder import table_props
from tests.judge.client import Judge

HUDI_SERIALIZES = """
models = spark._jvm.org.apache.hudi.client.transaction.lock.models
data = models.StorageLockData(expired, valid_until, owner)
result = bytes(models.StorageLockFile.toByteArray(data)).decode("utf-8")
"""
HUDI_READS = """
jvm = spark._jvm
stream = jvm.java.io.FileInputStream(path)
try:
    lock = jvm.org.apache.hudi.client.transaction.lock.models.StorageLockFile.createFromStream(
        stream, "any-version"
    )
finally:
    stream.close()
result = [lock.isExpired(), lock.getValidUntilMs(), lock.getOwner()]
"""
HUDI_BUILDS_ITS_PROVIDER = """
jvm = spark._jvm
props = jvm.java.util.Properties()
props.setProperty("hoodie.base.path", path)
try:
    jvm.org.apache.hudi.client.transaction.lock.StorageBasedLockProvider(
        jvm.org.apache.hudi.common.config.LockConfiguration(props), None
    )
    result = "built"
except Exception as err:
    result = str(err)
"""


@pytest.mark.parametrize(
    "data",
    [
        StorageLockData(False, 1_767_225_600_123, "1f0e6c1c-4d2e-4c55-9b1a-9a3c2f1e0d11"),
        StorageLockData(True, 42, 'pyhudi-host-7-"quoted"/owner'),
    ],
)
def test_hudi_serializes_a_lock_to_pyhudis_bytes(hudi_1_2: Judge, data: StorageLockData) -> None:
    hudi = hudi_1_2.run(
        HUDI_SERIALIZES, expired=data.expired, valid_until=data.valid_until_ms, owner=data.owner
    )
    assert hudi.encode("utf-8") == encode_lock(data)


def test_hudi_reads_pyhudis_held_and_released_lock(hudi_1_2: Judge, tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    TableContext.create(table, table_props())
    options = {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": STORAGE_BASED_LOCK,
    }
    provider = lock_provider(*Storage.for_uri(table), LockConfig.from_options(options))
    assert provider is not None and provider.try_lock(0)
    lock_file = Path(table) / ".hoodie" / ".locks" / "table_lock.json"
    expired, valid_until, owner = hudi_1_2.run(HUDI_READS, path=str(lock_file))
    assert (expired, owner) == (False, provider.owner)
    provider.unlock()
    assert hudi_1_2.run(HUDI_READS, path=str(lock_file)) == [True, valid_until, provider.owner]


def test_hudi_1_2_has_no_storage_lock_client_for_local_tables(
    hudi_1_2: Judge, tmp_path: Path
) -> None:
    """StorageSchemes.FILE names no lock client: Hudi refuses its provider on a local table (when
    this fails, Hudi gained one, and pyhudi and Hudi writers can race on a local table)."""
    refusal = hudi_1_2.run(HUDI_BUILDS_ITS_PROVIDER, path=f"file://{tmp_path}/t")
    assert "No implementation of StorageLock supports this scheme: file" in refusal
