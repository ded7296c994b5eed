"""The lock settings of one writer or service run, parsed and checked once (`HoodieLockConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config import concurrency as ckeys
from pyhudi.config.concurrency import ConcurrencyMode
from pyhudi.exceptions import ConfigError
from pyhudi.table.lock.dynamodb import DynamoDBLockSettings


@dataclass(frozen=True)
class LockConfig:
    mode: ConcurrencyMode = ConcurrencyMode.SINGLE_WRITER
    provider: str | None = None
    wait_time_ms: int = 60_000
    num_retries: int = 15
    retry_wait_ms: int = 1_000
    client_num_retries: int = 50
    client_retry_wait_ms: int = 5_000
    filesystem_path: str | None = None
    filesystem_expire_minutes: int = 0
    #: The storage-based lock: how long an acquisition or renewal keeps the lease, how often the
    #: holder renews it (Hudi's defaults: 300 s and 30 s).
    storage_validity_ms: int = 300_000
    storage_renew_interval_ms: int = 30_000
    #: The DynamoDB lock's table, key, region and credentials (only with that provider).
    dynamodb: DynamoDBLockSettings | None = None

    @property
    def uses_storage_lock(self) -> bool:
        return self.provider in ckeys.STORAGE_LOCKS

    @property
    def is_multi_writer(self) -> bool:
        return self.mode.supports_multi_writer

    @property
    def uses_external_lock(self) -> bool:
        """A lock other processes see (not only this process's threads)."""
        return self.is_multi_writer and self.provider != ckeys.IN_PROCESS_LOCK

    @classmethod
    def from_options(cls, options: Mapping[str, str] | None) -> LockConfig:
        o = options or {}
        mode = ckeys.concurrency_mode(o)
        provider = ckeys.LOCK_PROVIDER.get(o)
        if provider is not None:
            provider = provider.strip()
        if mode.supports_multi_writer or provider is not None:
            _check_provider(provider, mode)
        _check_strategy(ckeys.CONFLICT_RESOLUTION_STRATEGY.get(o))
        validity_ms, renew_ms = _storage_lock_timing(o, provider)
        config = cls(
            mode=mode,
            provider=provider,
            wait_time_ms=ckeys.LOCK_WAIT_TIME_MS.get(o),
            num_retries=ckeys.LOCK_NUM_RETRIES.get(o),
            retry_wait_ms=ckeys.LOCK_RETRY_WAIT_MS.get(o),
            client_num_retries=ckeys.LOCK_CLIENT_NUM_RETRIES.get(o),
            client_retry_wait_ms=ckeys.LOCK_CLIENT_RETRY_WAIT_MS.get(o),
            filesystem_path=ckeys.FILESYSTEM_LOCK_PATH.get(o),
            filesystem_expire_minutes=ckeys.FILESYSTEM_LOCK_EXPIRE.get(o),
            storage_validity_ms=validity_ms,
            storage_renew_interval_ms=renew_ms,
            dynamodb=(
                DynamoDBLockSettings.from_options(o)
                if mode.supports_multi_writer and provider == ckeys.DYNAMODB_LOCK
                else None
            ),
        )
        config.check()
        return config

    def check(self) -> None:
        for option, value in (
            (ckeys.LOCK_WAIT_TIME_MS, self.wait_time_ms),
            (ckeys.LOCK_NUM_RETRIES, self.num_retries),
            (ckeys.LOCK_RETRY_WAIT_MS, self.retry_wait_ms),
            (ckeys.LOCK_CLIENT_NUM_RETRIES, self.client_num_retries),
            (ckeys.LOCK_CLIENT_RETRY_WAIT_MS, self.client_retry_wait_ms),
            (ckeys.FILESYSTEM_LOCK_EXPIRE, self.filesystem_expire_minutes),
        ):
            if value < 0:
                raise ConfigError(f"{option.key} must not be negative, got {value}")
        if self.storage_renew_interval_ms < 1:
            raise ConfigError(f"{ckeys.LOCK_HEARTBEAT_INTERVAL_MS.key} must be at least 1")


def _storage_lock_timing(options: Mapping[str, str], provider: str | None) -> tuple[int, int]:
    """(validity ms, renew interval ms) of the storage-based lock, checked as Hudi's
    `StorageBasedLockConfig` checks them. pyhudi's earlier name keeps its earlier key: a renewal
    every `heartbeat_interval_ms`, valid for two of them (only when no Hudi key is set)."""
    validity, renew = ckeys.STORAGE_LOCK_VALIDITY_S, ckeys.STORAGE_LOCK_RENEW_INTERVAL_S
    legacy = ckeys.LOCK_HEARTBEAT_INTERVAL_MS
    if (
        provider == ckeys.STORAGE_LOCK
        and legacy.is_set(options)
        and not (validity.is_set(options) or renew.is_set(options))
    ):
        interval_ms = legacy.get(options)
        return 2 * interval_ms, interval_ms
    validity_s, renew_s = validity.get(options), renew.get(options)
    if provider in ckeys.STORAGE_LOCKS:
        if renew_s < 1:
            raise ConfigError(f"{renew.key} must be at least 1 second, got {renew_s}")
        if validity_s < 10:
            raise ConfigError(f"{validity.key} must be at least 10 seconds, got {validity_s}")
        if validity_s < 10 * renew_s:
            raise ConfigError(
                f"{validity.key}={validity_s} must be at least 10 x {renew.key}={renew_s}"
            )
    return validity_s * 1000, renew_s * 1000


def _check_provider(provider: str | None, mode: ConcurrencyMode) -> None:
    known = ", ".join(ckeys.KNOWN_LOCK_PROVIDERS)
    if provider is None:
        raise ConfigError(
            f"{ckeys.CONCURRENCY_MODE.key}={mode.value} needs {ckeys.LOCK_PROVIDER.key} "
            f"(Hudi's default, ZooKeeper, is not available in pyhudi); use one of {known}"
        )
    if provider not in ckeys.KNOWN_LOCK_PROVIDERS:
        raise ConfigError(
            f"unknown lock provider {provider!r} in {ckeys.LOCK_PROVIDER.key}; "
            f"pyhudi implements {known}"
        )


def _check_strategy(strategy: str | None) -> None:
    if strategy is not None and strategy.strip() not in ckeys.KNOWN_CONFLICT_STRATEGIES:
        raise ConfigError(
            f"unknown conflict resolution strategy {strategy!r} in "
            f"{ckeys.CONFLICT_RESOLUTION_STRATEGY.key}; pyhudi implements "
            + ", ".join(ckeys.KNOWN_CONFLICT_STRATEGIES)
        )
