"""Atomic create-if-absent for Hudi's lock file, and which storages Hudi lets it run on.

| storage        | `FileSystemBasedLockProvider`                                              |
|----------------|----------------------------------------------------------------------------|
| local (`file`) | yes: `Storage.create_new` hard-links a fully written file (fails if taken) |
| HDFS           | no: pyarrow's HDFS client has no create-if-absent (HDFS itself has          |
|                | `create(overwrite=false)`, reachable from the JVM only)                    |
| object stores  | refused, as Hudi refuses them: Hudi 1.2's `StorageSchemes` grants atomic    |
|                | creation to `file`, `hdfs`, `viewfs`, `dfs` and `hopsfs` only, so a Hudi    |
|                | writer does not start with this lock on S3, GCS or Azure, although          |
|                | `create_new` is atomic there (a conditional PUT). Hudi's lock for them is   |
|                | `StorageBasedLockProvider` (`pyhudi.table.lock.lease`).                     |

A lock folder elsewhere can be put on a shared local/NFS-with-`link` mount with
`hoodie.write.lock.filesystem.path`.
"""

from __future__ import annotations

from pyhudi.config.concurrency import FILESYSTEM_LOCK_PATH, STORAGE_BASED_LOCK
from pyhudi.exceptions import ConfigError
from pyhudi.storage import Storage

ATOMIC_CREATE_SCHEMES = ("file",)


def check_atomic_create(storage: Storage, provider: str) -> None:
    if storage.scheme in ATOMIC_CREATE_SCHEMES:
        return
    if storage.has_atomic_create:
        raise ConfigError(
            f"lock provider {provider} is not for object stores (scheme {storage.scheme!r}): "
            f"Apache Hudi refuses it there too; use {STORAGE_BASED_LOCK}, Hudi 1.x's lock "
            "for object stores, which pyhudi and Hudi writers share"
        )
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
