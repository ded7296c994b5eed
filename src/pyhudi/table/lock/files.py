"""Atomic create-if-absent for lock files, and which storages have it.

| storage        | atomic create-if-absent                                                   |
|----------------|---------------------------------------------------------------------------|
| local (`file`) | yes: `Storage.create_new` hard-links a fully written file (fails if taken) |
| HDFS           | not through pyarrow: no create-if-absent in its API (HDFS itself has       |
|                | `create(overwrite=false)`, reachable from the JVM only)                    |
| object stores  | not through pyarrow: needs a conditional PUT (`If-None-Match: *`)           |

Hudi's `FileSystemBasedLockProvider` refuses schemes without atomic creation too
(`StorageSchemes.isAtomicCreationSupported`). A lock folder elsewhere can be put on a shared
local/NFS-with-`link` mount with `hoodie.write.lock.filesystem.path`.
"""

from __future__ import annotations

from pyhudi.config.concurrency import FILESYSTEM_LOCK_PATH
from pyhudi.exceptions import ConfigError
from pyhudi.storage import Storage

ATOMIC_CREATE_SCHEMES = ("file",)


def check_atomic_create(storage: Storage, provider: str) -> None:
    if storage.scheme not in ATOMIC_CREATE_SCHEMES:
        raise ConfigError(
            f"lock provider {provider} needs atomic create-if-absent, which scheme "
            f"{storage.scheme!r} does not offer through pyarrow; put the lock on a local path "
            f"shared by every writer ({FILESYSTEM_LOCK_PATH.key}) or use "
            "InProcessLockProvider for writers in one process"
        )


def create_if_absent(storage: Storage, path: str, data: bytes) -> bool:
    """Create `path` holding `data`; False when the file already exists."""
    try:
        storage.create_new(path, data)
    except FileExistsError:
        return False
    return True


def read_if_present(storage: Storage, path: str) -> bytes | None:
    try:
        return storage.read_bytes(path)
    except FileNotFoundError:
        return None
