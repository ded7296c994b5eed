"""`pyhudi.StorageBasedLockProvider`: a lease file that expires when its holder dies.

| what    | value                                                                                  |
|---------|----------------------------------------------------------------------------------------|
| path    | `<hoodie.write.lock.filesystem.path or base path/.hoodie>/.locks/table.lease`           |
| content | JSON `{"owner", "acquiredMs", "renewedMs", "expiresMs"}` (epoch milliseconds)           |
| taken   | by atomic create-if-absent; renewed every `hoodie.write.lock.heartbeat_interval_ms`   |
| expiry  | two renew intervals after the last renewal: a SIGKILLed holder blocks the table at most  |
|         | that long (Hudi's file lock, with expiry 0, blocks until someone deletes the file)     |

A stale lease is broken by renaming it to a unique name first (only one contender's rename
succeeds), checking that the renamed file is the stale one seen, and restoring it otherwise.
"""

from __future__ import annotations

import json
import posixpath
import threading
import time
import uuid
from dataclasses import dataclass, field

from pyhudi.config.concurrency import STORAGE_LOCK
from pyhudi.storage import Storage
from pyhudi.table.lock.files import check_atomic_create, create_if_absent, read_if_present
from pyhudi.table.lock.filesystem import owner_description

LEASE_FOLDER = ".locks"
LEASE_FILE_NAME = "table.lease"
#: A lease lasts this many renew intervals.
LEASE_INTERVALS = 2


def lease_path(storage: Storage, base_path: str, lock_folder: str | None) -> tuple[Storage, str]:
    if not lock_folder:
        return storage, posixpath.join(base_path, ".hoodie", LEASE_FOLDER, LEASE_FILE_NAME)
    # An unscoped storage on purpose: the configured folder may lie outside the table root.
    folder_storage, folder = Storage.for_uri(lock_folder)
    return folder_storage, posixpath.join(folder, LEASE_FOLDER, LEASE_FILE_NAME)


def _now_ms() -> int:
    return int(time.time() * 1000)


def parse_lease(content: bytes) -> dict | None:
    try:
        lease = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return lease if isinstance(lease, dict) and "expiresMs" in lease else None


@dataclass
class StorageBasedLockProvider:
    storage: Storage
    path: str
    renew_interval_ms: int = 60_000
    poll_interval_ms: int = 1_000
    current_owner: str = ""
    _owner: str = ""
    _acquired_ms: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _renewer: threading.Thread | None = None

    def __post_init__(self) -> None:
        check_atomic_create(self.storage, STORAGE_LOCK)

    @property
    def lock_uri(self) -> str:
        return self.storage.uri(self.path)

    def try_lock(self, timeout_ms: int) -> bool:
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            if self._attempt():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(self.poll_interval_ms / 1000, max(0.0, deadline - time.monotonic())))

    def _attempt(self) -> bool:
        owner = f"{owner_description()} {threading.current_thread().name} {uuid.uuid4().hex[:12]}"
        now = _now_ms()
        if create_if_absent(self.storage, self.path, self._content(owner, now, now)):
            self._owner, self._acquired_ms = owner, now
            self._start_renewing()
            return True
        seen = read_if_present(self.storage, self.path)
        if seen is None:
            return False  # released meanwhile: the next attempt takes it
        lease = parse_lease(seen)
        self.current_owner = seen.decode("utf-8", "replace")
        if lease is not None and int(lease["expiresMs"]) >= _now_ms():
            return False
        self._break(seen)
        return False

    def _break(self, stale: bytes) -> None:
        """Remove a stale lease, unless someone renewed or replaced it in between."""
        moved = f"{self.path}.{uuid.uuid4().hex}.stale"
        try:
            self.storage.rename(self.path, moved)
        except OSError:
            return  # another contender broke it first
        taken = read_if_present(self.storage, moved)
        if taken is not None and taken != stale:  # a fresh lease: put it back where it was
            create_if_absent(self.storage, self.path, taken)
        self.storage.delete(moved)

    def _content(self, owner: str, acquired_ms: int, renewed_ms: int) -> bytes:
        expires = renewed_ms + LEASE_INTERVALS * self.renew_interval_ms
        record = {
            "owner": owner,
            "acquiredMs": acquired_ms,
            "renewedMs": renewed_ms,
            "expiresMs": expires,
        }
        return json.dumps(record).encode("utf-8")

    def _start_renewing(self) -> None:
        self._stop = threading.Event()
        self._renewer = threading.Thread(
            target=self._renew_loop, name="pyhudi-lock-lease", daemon=True
        )
        self._renewer.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew_interval_ms / 1000):
            current = parse_lease(read_if_present(self.storage, self.path) or b"")
            if current is None or current.get("owner") != self._owner:
                return  # lost: the holder finds out at unlock
            self.storage.write_bytes(
                self.path, self._content(self._owner, self._acquired_ms, _now_ms())
            )

    def unlock(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        current = parse_lease(read_if_present(self.storage, self.path) or b"")
        if current is not None and current.get("owner") == self._owner:
            self.storage.delete(self.path)
        self._owner = ""
