"""The table lock of a transaction (Hudi's `TransactionManager` + `LockManager`).

`table_transaction(ctx, options)` is held around a conflict check and a commit (never a whole
write): first the in-process lock of the table (threads of this process, `InProcessLockProvider`),
then, under OCC with a cross-process provider, that provider's lock. It is reentrant within one
thread: a service that takes it around its conflict check keeps it through its commit.

Acquisition retries as Hudi's `LockManager`: up to `hoodie.write.lock.client.num_retries` more
attempts, `hoodie.write.lock.client.wait_time_ms_between_retry` apart; each attempt waits up to
`hoodie.write.lock.wait_time_ms` (in-process and storage-based locks; the file lock tries once).
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from typing import Protocol

from pyhudi.config.concurrency import (
    DYNAMODB_LOCK,
    FILE_SYSTEM_LOCK,
    FILESYSTEM_LOCK_PATH,
    LOCK_CLIENT_NUM_RETRIES,
    STORAGE_BASED_LOCK,
    STORAGE_LOCK,
)
from pyhudi.exceptions import LockError
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.lock.config import LockConfig
from pyhudi.table.lock.dynamodb import DynamoDBBasedLockProvider
from pyhudi.table.lock.filesystem import FileSystemBasedLockProvider, lock_file_path
from pyhudi.table.lock.lease import StorageBasedLockProvider
from pyhudi.table.lock.lease import lock_path as storage_lock_path
from pyhudi.table.locks import table_lock


class LockProvider(Protocol):
    current_owner: str

    @property
    def lock_uri(self) -> str: ...

    def try_lock(self, timeout_ms: int) -> bool: ...

    def unlock(self) -> None: ...


_held = threading.local()


def _depths() -> dict[str, int]:
    depths = getattr(_held, "depths", None)
    if depths is None:
        depths = _held.depths = {}
    return depths


def lock_provider(
    storage: Storage, base_path: str, config: LockConfig, table_name: str | None = None
) -> LockProvider | None:
    """The cross-process provider of `config` for a table, or None (single writer, in-process).
    `table_name` is the DynamoDB lock's default partition key (the table's `hoodie.table.name`)."""
    if not config.uses_external_lock:
        return None
    if config.provider == DYNAMODB_LOCK:
        assert config.dynamodb is not None
        settings = config.dynamodb.for_table(table_name) if table_name else config.dynamodb
        return DynamoDBBasedLockProvider(settings, lease_ms=config.wait_time_ms)
    if config.provider == FILE_SYSTEM_LOCK:
        storage, path = lock_file_path(storage, base_path, config.filesystem_path)
        return FileSystemBasedLockProvider(storage, path, config.filesystem_expire_minutes)
    assert config.uses_storage_lock, config.provider
    folder = config.filesystem_path if config.provider == STORAGE_LOCK else None
    if config.provider == STORAGE_BASED_LOCK and config.filesystem_path:
        warnings.warn(
            f"{FILESYSTEM_LOCK_PATH.key} is ignored by {STORAGE_BASED_LOCK}: its lock is always "
            "the table's .hoodie/.locks/table_lock.json, as Hudi writers expect",
            UserWarning,
            stacklevel=2,
        )
    storage, path = storage_lock_path(storage, base_path, folder)
    return StorageBasedLockProvider(
        storage,
        path,
        validity_ms=config.storage_validity_ms,
        renew_interval_ms=config.storage_renew_interval_ms,
        poll_interval_ms=config.retry_wait_ms,
    )


def write_scope_lock(
    table_uri: str, options: Mapping[str, str]
) -> contextlib.AbstractContextManager[object]:
    """The lock a whole write holds: single writer, the in-process lock (async services of this
    process commit between writes); OCC, none (only conflict check + commit are locked).
    Checks the lock options first, so a bad provider fails before anything is written."""
    config = LockConfig.from_options(options)
    if config.is_multi_writer and config.provider != DYNAMODB_LOCK:
        lock_provider(*Storage.for_uri(table_uri), config)  # an unusable lock path fails here
        return contextlib.nullcontext()
    return table_lock(table_uri)


def is_multi_writer(options: Mapping[str, str]) -> bool:
    return LockConfig.from_options(options).is_multi_writer


def holds_table_lock(ctx: TableContext) -> bool:
    return _depths().get(ctx.uri, 0) > 0


@contextlib.contextmanager
def table_transaction(ctx: TableContext, options: Mapping[str, str] | None) -> Iterator[None]:
    """Hold the table lock (reentrant per thread) for a conflict check and commit."""
    depths = _depths()
    if depths.get(ctx.uri, 0):
        depths[ctx.uri] += 1
        try:
            yield
        finally:
            depths[ctx.uri] -= 1
        return
    config = LockConfig.from_options(options)
    local = table_lock(ctx.uri)
    _acquire_local(local, ctx, config)
    provider = None
    try:
        provider = lock_provider(ctx.storage, ctx.base_path, config, ctx.config.name)
        if provider is not None:
            acquire(provider, config)
        depths[ctx.uri] = 1
        try:
            yield
        finally:
            depths[ctx.uri] = 0
            if provider is not None:
                provider.unlock()
    finally:
        local.release()


def _acquire_local(local: threading.RLock, ctx: TableContext, config: LockConfig) -> None:
    for _ in range(config.client_num_retries + 1):
        if local.acquire(timeout=config.wait_time_ms / 1000):
            return
    raise LockError(
        f"could not acquire the in-process lock of {ctx.uri} within "
        f"{config.client_num_retries + 1} x {config.wait_time_ms} ms"
    )


def acquire(provider: LockProvider, config: LockConfig) -> None:
    """Hudi's `LockManager.lock`: retry the provider, sleeping between attempts."""
    attempts = config.client_num_retries + 1
    for attempt in range(attempts):
        if provider.try_lock(config.wait_time_ms):
            return
        if attempt + 1 < attempts:
            time.sleep(config.client_retry_wait_ms / 1000)
    owner = provider.current_owner.strip().replace("\n", " ") or "unknown"
    raise LockError(
        f"could not acquire the table lock {provider.lock_uri} after {attempts} attempts "
        f"({LOCK_CLIENT_NUM_RETRIES.key}); held by: {owner}"
    )
