"""Conditional writes: create-if-absent and compare-and-swap, on object stores and local disks.

pyarrow's file systems have no conditional write, so `Storage.create_new` hands the paths of the
stores below to `create_if_absent`, which writes the whole object only if no object has the key:

| `Storage.scheme`         | obstore store | precondition sent                                |
|--------------------------|---------------|--------------------------------------------------|
| `s3` (`s3a`)             | `S3Store`     | `If-None-Match: *`                               |
| `gs`, `gcs`              | `GCSStore`    | `x-goog-if-generation-match: 0`                  |
| `abfs`, `abfss`          | `AzureStore`  | `If-None-Match: *`                               |
| other (`hdfs`, `viewfs`) | none          | none: `Storage` checks, then writes (not atomic) |

obstore reports both "exists" and S3's `409 ConditionalRequestConflict` (a competing write was in
flight; AWS says to retry) as `AlreadyExistsError`; a HEAD tells them apart, and the PUT is sent
again only while the key is still absent. Never two winners; but a PUT that obstore resent after a
lost response can meet its own object and report it as existing (a spurious conflict).

Compare-and-swap (`read_versioned` + `put_if_version`, what lock files need): a write that
lands only if the object is still the version read, else reports a failed precondition.

| storage      | version token (`ObjectVersion`)        | replace sent / done                        |
|--------------|----------------------------------------|--------------------------------------------|
| S3, Azure    | the ETag of the GET or PUT response    | PUT `If-Match: <ETag>`                     |
| GCS          | ETag and generation                    | PUT `x-goog-if-generation-match`           |
| local disk   | SHA-256 of the bytes                   | under an exclusive `flock` of the sidecar  |
|              |                                        | `.<name>.cas`: re-read, compare, write a   |
|              |                                        | temporary file, `os.replace` it            |

On local disks every conditional writer of a path takes the sidecar's `flock` (released by the
kernel when its process dies), so compare and replace are one step for them; readers take no lock,
as `os.replace` swaps whole files. A content hash, like S3's ETag (the MD5 of a single-part PUT),
names equal bytes alike: a replace expecting bytes that were rewritten identically succeeds, which
is harmless when writers put their own identity in the bytes (lock files do).

Configuration comes from where pyarrow takes it, the environment. obstore reads the `AWS_*`,
`GOOGLE_*` and `AZURE_*` variables itself (S3 keys, session token, `AWS_REGION` over
`AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL[_S3]`); this module adds what it would miss or do
differently: the region pyarrow resolved for the bucket, plain HTTP when the endpoint URL is
`http://`, and pyarrow's addressing (path-style with a custom endpoint, virtual-hosted on AWS).
No credential passes through this module. Credentials in `~/.aws` profiles are not read by obstore.

A store is built on first use in each process, once per (scheme, bucket) and never pickled:
`Storage` ships only its pyarrow file system to executors, and a forked process builds its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import posixpath
import random
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyhudi.storage.s3conf import env_endpoint

if TYPE_CHECKING:
    from obstore import UpdateVersion
    from obstore.store import ObjectStore

    from pyhudi.storage.s3conf import S3Settings

#: `Storage.scheme` -> the scheme of obstore's `from_url`, for the stores with a conditional PUT.
CONDITIONAL_SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfss",
}
#: PUTs sent while a 409 left the key absent (a competing write that did not land).
CONFLICT_ATTEMPTS = 6
_CONFLICT_BACKOFF_S = 0.05


def supports_conditional_create(scheme: str) -> bool:
    """True when `create_if_absent` is atomic for storages of `scheme`."""
    return scheme in CONDITIONAL_SCHEMES


@dataclass(frozen=True)
class ObjectVersion:
    """What a compare-and-swap compares: the ETag (on local disks, the bytes' SHA-256) and, on
    stores that version objects by number (GCS generations), that number too."""

    e_tag: str | None
    version: str | None = None


def create_if_absent(
    scheme: str,
    authority: str,
    path: str,
    data: bytes,
    *,
    region: str | None = None,
    s3: S3Settings | None = None,
) -> ObjectVersion:
    """Write `data` to the pyarrow path `path` (`bucket/key`) only if no object has that key.

    Returns the new object's version. Raises `FileExistsError(path)` when the object exists;
    `PermissionError` or `OSError` naming the path when the store refuses or fails. `region` is the
    S3 region pyarrow uses, if known; `s3` the S3A settings the table was opened with.
    """
    import obstore  # lazily: local tables never load the Rust client
    from obstore.exceptions import AlreadyExistsError

    store_url, key = _store_location(scheme, authority, path)
    store = _STORES.get(store_url, region, s3)
    for attempt in range(CONFLICT_ATTEMPTS):
        try:
            result = obstore.put(store, key, data, mode="create", use_multipart=False)
            return ObjectVersion(result.get("e_tag"), result.get("version"))
        except AlreadyExistsError as err:
            if _exists(store, key, path):
                raise FileExistsError(path) from err
            conflict = err
        except Exception as err:
            raise _os_error(path, "conditional create of", err) from err
        time.sleep(_CONFLICT_BACKOFF_S * 2**attempt * (1 + random.random()))
    raise OSError(
        f"conditional create of {path}: still conflicting with concurrent writes after "
        f"{CONFLICT_ATTEMPTS} attempts, and the object is absent"
    ) from conflict


def read_versioned(
    scheme: str,
    authority: str,
    path: str,
    *,
    region: str | None = None,
    s3: S3Settings | None = None,
) -> tuple[bytes, ObjectVersion] | None:
    """The object's bytes and version from one GET, or None when there is no such object."""
    import obstore

    store_url, key = _store_location(scheme, authority, path)
    store = _STORES.get(store_url, region, s3)
    try:
        result = obstore.get(store, key)
        data = bytes(result.bytes())
    except FileNotFoundError:
        return None
    except Exception as err:
        raise _os_error(path, "versioned read of", err) from err
    meta = result.meta
    return data, ObjectVersion(meta.get("e_tag"), meta.get("version"))


def put_if_version(
    scheme: str,
    authority: str,
    path: str,
    data: bytes,
    expected: ObjectVersion | None,
    *,
    region: str | None = None,
    s3: S3Settings | None = None,
) -> ObjectVersion | None:
    """Write `data` only if the object is still `expected` (None: only if there is no object).

    Returns the new version, or None when the precondition failed (the object changed, appeared
    or vanished). A write the client resent after a lost response can meet its own first landing
    and report a failed precondition: callers that must know re-read and compare the bytes.
    """
    if expected is None:
        try:
            return create_if_absent(scheme, authority, path, data, region=region, s3=s3)
        except FileExistsError:
            return None
    import obstore
    from obstore.exceptions import PreconditionError

    store_url, key = _store_location(scheme, authority, path)
    store = _STORES.get(store_url, region, s3)
    mode: UpdateVersion = {}  # obstore refuses None values: send what the store gave
    if expected.e_tag:
        mode["e_tag"] = expected.e_tag
    if expected.version:
        mode["version"] = expected.version
    try:
        result = obstore.put(store, key, data, mode=mode, use_multipart=False)
    except PreconditionError:
        return None  # also S3's answer (404) when the object is gone
    except Exception as err:
        raise _os_error(path, "conditional replace of", err) from err
    return ObjectVersion(result.get("e_tag"), result.get("version"))


def read_local_versioned(path: str) -> tuple[bytes, ObjectVersion] | None:
    """A local file's bytes and their SHA-256 as its version, or None when it does not exist."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    return data, _local_version(data)


def put_local_if_version(
    path: str, data: bytes, expected: ObjectVersion | None
) -> ObjectVersion | None:
    """`put_if_version` on a local disk: compare and replace under the sidecar's `flock`."""
    folder, name = posixpath.split(path)
    os.makedirs(folder, exist_ok=True)
    with open(posixpath.join(folder, f".{name}.cas"), "a+b") as sidecar:
        fcntl.flock(sidecar.fileno(), fcntl.LOCK_EX)  # released when the file closes
        current = read_local_versioned(path)
        if (current[1] if current else None) != expected:
            return None
        tmp = posixpath.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return _local_version(data)


def _local_version(data: bytes) -> ObjectVersion:
    return ObjectVersion(hashlib.sha256(data).hexdigest())


def forget_stores() -> None:
    """Drop this process's stores; the next create builds them again (after the environment changed)."""
    _STORES.clear()


def _exists(store: ObjectStore, key: str, path: str) -> bool:
    import obstore

    try:
        obstore.head(store, key)
    except FileNotFoundError:
        return False
    except Exception as err:
        raise _os_error(path, "checking after a refused create of", err) from err
    return True


def _store_location(scheme: str, authority: str, path: str) -> tuple[str, str]:
    """obstore's store URL for `path`'s bucket (container on Azure), and the key inside it."""
    target = CONDITIONAL_SCHEMES.get(scheme)
    if target is None:
        raise ValueError(f"{scheme}://{authority}: no conditional create for scheme {scheme!r}")
    bucket, _, key = path.lstrip("/").partition("/")
    if not bucket or not key:
        raise ValueError(f"{path}: not an object path (bucket/key)")
    if target in ("abfs", "abfss"):
        # pyarrow's Azure paths start with the container; the account is the URI's host.
        host = authority.rpartition("@")[2]
        if not host:
            raise ValueError(f"{scheme}://{authority}: no storage account in the URI")
        return f"{target}://{bucket}@{host}", key
    return f"{target}://{bucket}", key


def _os_error(path: str, action: str, err: Exception) -> OSError:
    """A builtin error naming `path`; obstore's first line says why (it never holds credentials)."""
    from obstore.exceptions import PermissionDeniedError, UnauthenticatedError

    reason = (str(err).strip().splitlines() or [""])[0]
    message = f"{action} {path} failed: {type(err).__name__}: {reason}"
    if isinstance(err, PermissionDeniedError | UnauthenticatedError):
        return PermissionError(message)
    if isinstance(err, FileNotFoundError):  # obstore's "not found" (here: no such bucket)
        return FileNotFoundError(message)
    return OSError(message)


def _s3_options(bucket: str, region: str | None, s3: S3Settings | None) -> dict[str, Any]:
    """What pyarrow's S3 file system would use and obstore does not infer from the environment;
    with S3A settings (`pyhudi.storage.s3conf`), what they set over that."""
    if s3 is not None:
        return {**_s3_options(bucket, region, None), **s3.obstore_options()}
    env = os.environ
    options: dict[str, Any] = {}
    if region:
        options["region"] = region
    endpoint = env_endpoint()
    if endpoint:
        options["endpoint"] = endpoint
        if endpoint.lower().startswith("http://"):
            options["client_options"] = {"allow_http": True}
    if "AWS_VIRTUAL_HOSTED_STYLE_REQUEST" not in env:
        # pyarrow: virtual-hosted on AWS, path-style at a custom endpoint (MinIO, moto, ...);
        # bucket names with dots do not match S3's TLS certificate as host names.
        options["virtual_hosted_style_request"] = not endpoint and "." not in bucket
    return options


class _StoreCache:
    """This process's obstore stores by store URL; emptied when the process id changes (fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stores: dict[tuple[str, S3Settings | None], ObjectStore] = {}
        self._pid = os.getpid()

    def get(self, store_url: str, region: str | None, s3: S3Settings | None) -> ObjectStore:
        with self._lock:
            if self._pid != os.getpid():
                self._stores.clear()
                self._pid = os.getpid()
            store = self._stores.get((store_url, s3))
            if store is None:
                store = _build(store_url, region, s3)
                self._stores[(store_url, s3)] = store
            return store

    def clear(self) -> None:
        with self._lock:
            self._stores.clear()


def _build(store_url: str, region: str | None, s3: S3Settings | None) -> ObjectStore:
    from obstore.store import from_url

    options: dict[str, Any] = {}
    if store_url.startswith("s3://"):
        options = _s3_options(store_url[len("s3://") :], region, s3)
    try:
        return from_url(store_url, **options)
    except Exception as err:
        raise _os_error(store_url, "opening the object store of", err) from err


_STORES = _StoreCache()
