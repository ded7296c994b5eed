"""Hudi 1.x's `StorageBasedLockProvider` (RFC-91): a lease in one JSON object, taken, renewed and
released by conditional writes, so pyhudi and Hudi 1.x writers on one table exclude each other.

| what    | value (Hudi 1.2.0)                                                                      |
|---------|-----------------------------------------------------------------------------------------|
| path    | `<base path>/.hoodie/.locks/table_lock.json`, whatever `hoodie.write.lock.filesystem.path` |
|         | says (pyhudi's earlier name `pyhudi.StorageBasedLockProvider` still honours that folder)  |
| content | Jackson's compact JSON of `StorageLockData`, in this order: `expired` (boolean),          |
|         | `validUntil` (epoch ms, long), `owner` (string; Hudi writes a random UUID per provider)   |
| live    | `expired` is false and `now <= validUntil + 500 ms` (Hudi's clock-drift buffer)          |
| take    | read the object and its ETag; no object: create it (`If-None-Match: *`); a dead lease:   |
|         | replace it (`If-Match: <ETag read>`); either write with `expired: false`,                |
|         | `validUntil = now + validity`; a failed precondition means another writer won          |
| renew   | every renew interval, the same write with a new `validUntil`, `If-Match` the ETag of the |
|         | holder's last write; a failed precondition means the lease was lost to another writer   |
| release | the object stays: rewritten with `expired: true` (and the last `validUntil`), `If-Match` |

Where the bytes live decides the compare-and-swap (`pyhudi.storage.conditional`): a conditional
PUT on S3, GCS and Azure, as Hudi's `S3StorageLockClient`, `GCSStorageLockClient` and
`AzureStorageLockClient` send; on local disks a `flock`-guarded replace, which only pyhudi writers
use (Hudi 1.2 has no storage lock client for `file:`). Timing is the holder's alone (contenders
only read `validUntil`), so writers with different settings share the lock safely.

A failed precondition can hide our own write, landed and then resent by the client after a lost
response: every failed write reads the object back, and bytes equal to what we wrote are ours.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field

from pyhudi.config.concurrency import STORAGE_BASED_LOCK
from pyhudi.exceptions import ConfigError, CorruptFileError, LockError
from pyhudi.storage import Storage
from pyhudi.storage.conditional import ObjectVersion

log = logging.getLogger(__name__)

LOCKS_FOLDER = ".locks"
LOCK_FILE_NAME = "table_lock.json"
#: Hudi's `CLOCK_DRIFT_BUFFER_MS`: a lease counts as dead this long after its `validUntil`.
CLOCK_DRIFT_BUFFER_MS = 500
#: Hudi retries a release that failed (throttled) 3 times, after 1 s, 2 s and 4 s.
RELEASE_RETRIES = 3
RELEASE_FIRST_BACKOFF_S = 1.0


def lock_path(storage: Storage, base_path: str, lock_folder: str | None) -> tuple[Storage, str]:
    """The lock object: Hudi's place in the table, or `<lock_folder>/.locks/` when given."""
    if not lock_folder:
        return storage, posixpath.join(base_path, ".hoodie", LOCKS_FOLDER, LOCK_FILE_NAME)
    # An unscoped storage on purpose: the configured folder may lie outside the table root.
    folder_storage, folder = Storage.for_uri(lock_folder)
    return folder_storage, posixpath.join(folder, LOCKS_FOLDER, LOCK_FILE_NAME)


@dataclass(frozen=True)
class StorageLockData:
    """Hudi's `StorageLockData`: the whole content of the lock object."""

    expired: bool
    valid_until_ms: int
    owner: str | None

    def is_live(self, now_ms: int) -> bool:
        """Held by `owner`: not released and not past its validity (plus the drift buffer)."""
        return not self.expired and now_ms <= self.valid_until_ms + CLOCK_DRIFT_BUFFER_MS


def encode_lock(data: StorageLockData) -> bytes:
    """Jackson's compact form, fields in Hudi's creator order."""
    record = {"expired": data.expired, "validUntil": data.valid_until_ms, "owner": data.owner}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode_lock(content: bytes, where: str) -> StorageLockData:
    """As Hudi's reader: unknown fields ignored, a missing one its Java default, null refused."""
    try:
        record = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CorruptFileError(f"{where}: not a storage lock JSON object ({err})") from err
    if not isinstance(record, dict):
        raise CorruptFileError(f"{where}: not a storage lock JSON object")
    expired, valid_until, owner = (
        record.get("expired", False),
        record.get("validUntil", 0),
        record.get("owner"),
    )
    if (
        not isinstance(expired, bool)
        or not isinstance(valid_until, int)
        or isinstance(valid_until, bool)
        or not (owner is None or isinstance(owner, str))
    ):
        raise CorruptFileError(f"{where}: bad expired/validUntil/owner in {record!r}")
    return StorageLockData(expired, valid_until, owner)


def new_owner_id() -> str:
    """Unique per provider, like Hudi's UUID, and saying which process holds the lock."""
    return f"pyhudi-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4()}"


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class StorageBasedLockProvider:
    """One writer's handle on the lease (not shared between writers; the lock manager makes one
    per transaction). `try_lock` starts a daemon thread renewing the lease; `unlock` stops it and
    releases, raising `LockError` when the lease had been lost to another writer meanwhile."""

    storage: Storage
    path: str
    validity_ms: int = 300_000
    renew_interval_ms: int = 30_000
    poll_interval_ms: int = 1_000
    owner: str = field(default_factory=new_owner_id)
    current_owner: str = ""
    _held: tuple[StorageLockData, ObjectVersion] | None = None
    _lost_to: str | None = None
    _mutex: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _renewer: threading.Thread | None = None

    def __post_init__(self) -> None:
        if not self.storage.has_conditional_replace:
            raise ConfigError(
                f"lock provider {STORAGE_BASED_LOCK} needs conditional writes, which scheme "
                f"{self.storage.scheme!r} does not offer (Hudi has no storage lock client for it "
                "either); keep the table on local disk or S3/GCS/Azure, or use "
                "InProcessLockProvider for writers in one process"
            )

    @property
    def lock_uri(self) -> str:
        return self.storage.uri(self.path)

    def try_lock(self, timeout_ms: int) -> bool:
        """Attempt until `timeout_ms` passed (at least once), `poll_interval_ms` apart."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            if self._attempt():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(self.poll_interval_ms / 1000, remaining))

    def _attempt(self) -> bool:
        with self._mutex:
            if self._held is not None and self._held[0].is_live(_now_ms()):
                return True  # reentrant, as Hudi's
            try:
                seen = self.storage.read_versioned(self.path)
            except OSError as err:
                self.current_owner = f"unknown: reading the lock failed ({err})"
                return False
            expected = None
            if seen is not None:
                current = decode_lock(seen[0], self.lock_uri)
                if current.is_live(_now_ms()):
                    self.current_owner = _describe(current)
                    return False
                expected = seen[1]
            mine = StorageLockData(False, _now_ms() + self.validity_ms, self.owner)
            try:
                version = self._write(mine, expected)
            except OSError as err:
                self.current_owner = f"unknown: writing the lock failed ({err})"
                return False
            if version is None:
                self.current_owner = "another writer that took it at the same moment"
                return False
            self._held, self._lost_to = (mine, version), None
            self._start_renewing()
            return True

    def _write(self, data: StorageLockData, expected: ObjectVersion | None) -> ObjectVersion | None:
        content = encode_lock(data)
        version = self.storage.put_if_version(self.path, content, expected)
        if version is None:
            seen = self.storage.read_versioned(self.path)
            if seen is not None and seen[0] == content:
                return seen[1]  # our own write, landed before the precondition failed
        return version

    def _start_renewing(self) -> None:
        self._stop.set()  # a renewer of a lapsed earlier hold, if any, ends at its next beat
        self._stop = threading.Event()
        self._renewer = threading.Thread(
            target=self._renew_loop,
            args=(threading.current_thread(), self._stop),
            name="pyhudi-storage-lock-renewal",
            daemon=True,
        )
        self._renewer.start()

    def _renew_loop(self, holder: threading.Thread, stop: threading.Event) -> None:
        while not stop.wait(self.renew_interval_ms / 1000):
            if not holder.is_alive():
                return  # as Hudi's heartbeat: a lease outliving its thread expires by itself
            with self._mutex:
                if stop.is_set() or not self._renew():
                    return

    def _renew(self) -> bool:
        """One renewal; False when there is nothing left to renew (lost or released)."""
        if self._held is None:
            return False
        renewed = StorageLockData(False, _now_ms() + self.validity_ms, self.owner)
        try:
            version = self._write(renewed, self._held[1])
        except OSError as err:
            log.warning("renewing the lock %s failed, retrying next beat: %s", self.lock_uri, err)
            return True  # Hudi's UNKNOWN_ERROR: the next beat tries again
        if version is None:
            self._lost_to = self._holder_now()
            log.error("lost the lock %s to %s", self.lock_uri, self._lost_to)
            self._held = None
            return False
        self._held = (renewed, version)
        return True

    def unlock(self) -> None:
        """Stop renewing and release (Hudi: rewrite as expired); the object stays."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        with self._mutex:
            lost_to, self._lost_to = self._lost_to, None
            if lost_to is not None:
                raise self._lost_error(lost_to)
            if self._held is not None:
                self._release(*self._held)

    def _release(self, held: StorageLockData, version: ObjectVersion) -> None:
        released = StorageLockData(True, held.valid_until_ms, self.owner)
        backoff_s, failure = RELEASE_FIRST_BACKOFF_S, None
        for attempt in range(RELEASE_RETRIES + 1):
            if attempt:
                time.sleep(backoff_s)
                backoff_s *= 2
            try:
                outcome = self._write(released, version)
            except OSError as err:
                failure = err
                continue
            self._held = None
            if outcome is None:
                raise self._lost_error(self._holder_now())
            return
        self._held = None
        raise LockError(
            f"could not release the table lock {self.lock_uri}: {failure}; it stays held until "
            f"{_iso(held.valid_until_ms)}, when other writers take it over"
        ) from failure

    def _holder_now(self) -> str:
        try:
            seen = self.storage.read_versioned(self.path)
            return "nobody" if seen is None else _describe(decode_lock(seen[0], self.lock_uri))
        except (OSError, CorruptFileError):
            return "another writer"

    def _lost_error(self, holder: str) -> LockError:
        return LockError(
            f"lost the table lock {self.lock_uri} while holding it: its lease lapsed unrenewed "
            f"(renew interval {self.renew_interval_ms} ms, validity {self.validity_ms} ms) and "
            f"now {holder} has it; what was done under the lock may have overlapped with them"
        )


def _describe(data: StorageLockData) -> str:
    state = "released" if data.expired else f"until {_iso(data.valid_until_ms)}"
    return f"{data.owner or 'unknown owner'} ({state})"


def _iso(epoch_ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_ms / 1000)) + (
        f".{epoch_ms % 1000:03d}Z"
    )
