"""The lock settings of one writer or service run, parsed and checked once (`HoodieLockConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config import concurrency as ckeys
from pyhudi.config.concurrency import ConcurrencyMode
from pyhudi.exceptions import ConfigError


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
    lease_renew_interval_ms: int = 60_000

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
            lease_renew_interval_ms=ckeys.LOCK_HEARTBEAT_INTERVAL_MS.get(o),
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
        if self.lease_renew_interval_ms < 1:
            raise ConfigError(f"{ckeys.LOCK_HEARTBEAT_INTERVAL_MS.key} must be at least 1")


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
