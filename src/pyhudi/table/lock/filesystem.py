"""`FileSystemBasedLockProvider`: Hudi's lock file, so JVM Hudi writers and pyhudi exclude each other.

| what      | value (Hudi 0.14/0.15)                                                               |
|-----------|--------------------------------------------------------------------------------------|
| path      | `<hoodie.write.lock.filesystem.path>/lock`, default `<base path>/.hoodie/lock`       |
| content   | `LockInfo` as Jackson's pretty-printed JSON: `lockCreateTime`                         |
|           | (`yyyy-MM-dd HH:mm:ss.SSS`, local time), `lockThreadName`, `lockStacksInfo` (strings) |
| held      | while the file exists; released by deleting it                                       |
| expiry    | `hoodie.write.lock.filesystem.expire` minutes after the file's modification time     |
|           | (0, the default: never; a crashed holder's file must then be deleted by hand)        |

Only the file's existence and modification time matter: neither Hudi nor pyhudi parses the content
(it is shown as the holder). Hudi 0.15's own lock file is in fact empty on local storage: its
`acquireLock` writes the `LockInfo` only `if (!fs.exists(lockFile))` right after `fs.create`, and
through Hadoop's `LocalFileSystem` it has a `.lock.crc` sibling, removed by Hudi's delete.

Hudi 0.15's `close()` deletes the lock file whoever wrote it. Its `LockManager.unlock()` closes
the provider right after unlocking, and a Hudi write whose `lock()` gave up closes it as well: that
writer removes the holder's file (the judge test shows it), so a third writer can then take it. pyhudi cannot prevent that; it
never deletes a file it did not write. tests/judge/test_mixed_writers.py runs pyhudi and Hudi 0.15
under OCC on one lock file and shows both.

One attempt per `try_lock`, as in Hudi; the lock manager retries. pyhudi creates the file with an
atomic create-if-absent (Hudi checks, then creates) and deletes only a file it wrote itself.
"""

from __future__ import annotations

import json
import os
import posixpath
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime

from pyhudi.config.concurrency import FILE_SYSTEM_LOCK
from pyhudi.storage import Storage
from pyhudi.table.lock.files import check_atomic_create, create_if_absent, read_if_present

LOCK_FILE_NAME = "lock"


def lock_file_path(
    storage: Storage, base_path: str, lock_folder: str | None
) -> tuple[Storage, str]:
    """Where the lock file lives: the configured folder (a path or URI) or the table's `.hoodie`."""
    if not lock_folder:
        return storage, posixpath.join(base_path, ".hoodie", LOCK_FILE_NAME)
    # Deliberately not the table's storage: Hudi allows the lock folder outside the table, and the
    # table storage is scoped to the table root (`Storage.scoped`), so it gets an unscoped one.
    folder_storage, folder = Storage.for_uri(lock_folder)
    return folder_storage, posixpath.join(folder, LOCK_FILE_NAME)


def lock_info_json(thread_name: str, stack: list[str], created: datetime) -> str:
    """Jackson's default pretty printer layout of Hudi's `LockInfo`."""
    stamp = created.strftime("%Y-%m-%d %H:%M:%S.") + f"{created.microsecond // 1000:03d}"
    frames = ", ".join(json.dumps(s) for s in stack)
    return (
        "{\n"
        f'  "lockCreateTime" : {json.dumps(stamp)},\n'
        f'  "lockThreadName" : {json.dumps(thread_name)},\n'
        f'  "lockStacksInfo" : [ {frames} ]\n'
        "}"
    )


def owner_description() -> str:
    return f"pyhudi pid {os.getpid()} on {socket.gethostname()}"


@dataclass
class FileSystemBasedLockProvider:
    storage: Storage
    path: str
    expire_minutes: int = 0
    _written: bytes | None = None
    current_owner: str = ""

    def __post_init__(self) -> None:
        check_atomic_create(self.storage, FILE_SYSTEM_LOCK)

    @property
    def lock_uri(self) -> str:
        return self.storage.uri(self.path)

    def try_lock(self, timeout_ms: int) -> bool:
        existing = read_if_present(self.storage, self.path)
        if existing is not None:
            if not self._expired():
                self.current_owner = existing.decode("utf-8", "replace")
                return False
            # Hudi: "Delete expired lock file"; only the one we judged (not a newer holder's).
            if read_if_present(self.storage, self.path) == existing:
                self.storage.delete(self.path)
        content = lock_info_json(
            threading.current_thread().name, [owner_description()], datetime.now()
        ).encode("utf-8")
        if not create_if_absent(self.storage, self.path, content):
            self.current_owner = (read_if_present(self.storage, self.path) or b"").decode(
                "utf-8", "replace"
            )
            return False
        self._written = content
        return True

    def _expired(self) -> bool:
        if self.expire_minutes <= 0:
            return False
        status = self.storage.status(self.path)
        if status is None or status.mtime_ns is None:
            return False
        age_ms = time.time() * 1000 - status.mtime_ns / 1_000_000
        return age_ms > self.expire_minutes * 60_000

    def unlock(self) -> None:
        """Delete the lock file, unless it is no longer ours (expired and taken over)."""
        if self._written is None:
            return
        if read_if_present(self.storage, self.path) == self._written:
            self.storage.delete(self.path)
        self._written = None
