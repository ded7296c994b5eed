"""One storage contract over `pyarrow.fs`, usable on the driver and in executors (picklable).

Paths given to `Storage` methods are file-system paths (`/data/t/.hoodie/x`), as `pyarrow.fs`
uses them; `uri(path)` turns one into what Spark and other engines take (`file:///data/t/...`).
Timeline files need atomic create-if-absent (`create_new`): on local disks that is a hard link of
a fully written temporary file (fails if the target exists); on S3, GCS and Azure it is one
conditional PUT through obstore (`pyhudi.storage.conditional`), as pyarrow has none. Other
schemes (`hdfs`, `viewfs`) check, then write, which is not atomic (`has_atomic_create` is False):
one writer per table there, as Hudi assumes without a lock provider.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import pyarrow as pa
import pyarrow.fs as pafs

from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.storage.conditional import (
    ObjectVersion,
    create_if_absent,
    put_if_version,
    put_local_if_version,
    read_local_versioned,
    read_versioned,
    supports_conditional_create,
)
from pyhudi.storage.guard import check_inside
from pyhudi.storage.s3conf import S3Settings, settings_for

_S3_ALIASES = ("s3a", "s3n")


@dataclass(frozen=True)
class FileStatus:
    path: str
    size_bytes: int
    is_dir: bool
    mtime_ns: int | None = None

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass(frozen=True)
class Storage:
    fs: pafs.FileSystem
    scheme: str = "file"
    authority: str = ""
    #: When set, every create/delete must resolve inside this folder (`pyhudi.storage.guard`).
    root: str | None = None
    #: The S3A settings an S3 table was opened with (`pyhudi.storage.s3conf`); None: environment.
    s3: S3Settings | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def for_uri(cls, uri: str) -> tuple[Storage, str]:
        """The storage of `uri` and the file-system path of it (local paths made absolute)."""
        if "://" not in uri and not uri.startswith("file:"):
            return cls(pafs.LocalFileSystem()), os.path.abspath(uri).rstrip("/") or "/"
        if uri.startswith("file:"):
            path = uri[len("file:") :]
            while path.startswith("//"):
                path = path[1:]
            return cls(pafs.LocalFileSystem()), os.path.abspath(path).rstrip("/") or "/"
        scheme, rest = uri.split("://", 1)
        # Hadoop's S3 connectors' schemes (Hudi writes through `s3a://`): S3 to pyarrow, while
        # `uri()` keeps the scheme the table was opened with, as Spark's scans spell it.
        is_s3 = scheme.lower() in ("s3", *_S3_ALIASES)
        authority = rest.split("/", 1)[0]
        settings = settings_for(authority) if is_s3 else None
        if settings is not None:
            bucket_path = urllib.parse.unquote(urllib.parse.urlsplit(f"s3://{rest}").path)
            options = settings.pyarrow_options()
            if settings.region is None and "endpoint_override" not in options:
                with contextlib.suppress(OSError):  # on AWS: the bucket's region, as from_uri
                    options["region"] = pafs.resolve_s3_region(authority)
            s3fs = pafs.S3FileSystem(**options)
            return cls(s3fs, scheme, authority, s3=settings), f"{authority}{bucket_path}".rstrip(
                "/"
            )
        fs, path = pafs.FileSystem.from_uri(f"s3://{rest}" if is_s3 else uri)
        return cls(fs, scheme, authority), path.rstrip("/")

    def scoped(self, root: str) -> Storage:
        """This storage, refusing to create or delete anything outside `root`."""
        return dataclasses.replace(self, root=root)

    def _guard(self, path: str, action: str) -> None:
        if self.root is not None:
            check_inside(self.root, path, action=action)

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    @property
    def has_atomic_create(self) -> bool:
        """True when `create_new` is atomic: local disks, and the object stores obstore reaches."""
        return self.is_local or supports_conditional_create(self.scheme)

    @property
    def has_conditional_replace(self) -> bool:
        """True when `read_versioned` + `put_if_version` are a compare-and-swap (the same storages
        as `has_atomic_create`: `pyhudi.storage.conditional` says how)."""
        return self.has_atomic_create

    def uri(self, path: str) -> str:
        if self.is_local:
            return "file://" + path
        # pyarrow's object-store paths start with the bucket (S3, GCS) or container (Azure, whose
        # authority is `container@account...`): it is named once, in the authority.
        container = self.authority.split("@", 1)[0]
        rest = path.lstrip("/")
        if rest == container or rest.startswith(container + "/"):
            rest = rest[len(container) :].lstrip("/")
        return f"{self.scheme}://{self.authority}/{rest}"

    # ---- reads -------------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as stream:
            return stream.readall()

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read_bytes(path).decode(encoding)

    def open_input(self, path: str) -> IO[bytes]:
        return self.fs.open_input_file(path)  # type: ignore[return-value]

    def status(self, path: str) -> FileStatus | None:
        info = self.fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return None
        return _status(info)

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def is_dir(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.Directory

    def list_dir(self, path: str) -> list[FileStatus]:
        """Direct children of a folder; an empty list when it does not exist."""
        selector = pafs.FileSelector(path, allow_not_found=True, recursive=False)
        return [_status(info) for info in self.fs.get_file_info(selector)]

    def walk_files(self, path: str) -> Iterator[FileStatus]:
        selector = pafs.FileSelector(path, allow_not_found=True, recursive=True)
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                yield _status(info)

    # ---- writes ------------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        self._guard(path, "create folder")
        self.fs.create_dir(path, recursive=True)

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write (or replace) a file; via a temporary file and rename on local disks."""
        self._guard(path, "write")
        self.mkdirs(posixpath.dirname(path))
        if not self.is_local:
            with self.fs.open_output_stream(path) as out:
                out.write(data)
            return
        tmp = f"{path}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, path)

    def create_new(self, path: str, data: bytes = b"") -> None:
        """Create a file that must not exist yet; raises `FileExistsError` if it does.

        Atomic when `has_atomic_create`: of concurrent creators of one path, across threads,
        processes and hosts, exactly one succeeds and the file holds its bytes.
        """
        self._guard(path, "create")
        self.mkdirs(posixpath.dirname(path))
        if supports_conditional_create(self.scheme):
            create_if_absent(
                self.scheme, self.authority, path, data, region=self._region, s3=self.s3
            )
            return
        if not self.is_local:
            if self.exists(path):
                raise FileExistsError(path)
            with self.fs.open_output_stream(path) as out:
                out.write(data)
            return
        tmp = posixpath.join(posixpath.dirname(path), f".{uuid.uuid4().hex}.creating")
        with open(tmp, "wb") as out:
            out.write(data)
        try:
            os.link(tmp, path)  # atomic, fails when the target exists
        finally:
            os.unlink(tmp)

    def read_versioned(self, path: str) -> tuple[bytes, ObjectVersion] | None:
        """A file's bytes and the version `put_if_version` compares; None when it does not exist."""
        if supports_conditional_create(self.scheme):
            return read_versioned(
                self.scheme, self.authority, path, region=self._region, s3=self.s3
            )
        self._check_conditional_replace(path)
        return read_local_versioned(path)

    def put_if_version(
        self, path: str, data: bytes, expected: ObjectVersion | None
    ) -> ObjectVersion | None:
        """Write `data` only if the file is still the version `expected` (None: only if it does not
        exist); returns the new version, or None when that precondition failed. Atomic when
        `has_conditional_replace`: of writers expecting one version, at most one succeeds."""
        self._guard(path, "write")
        if supports_conditional_create(self.scheme):
            return put_if_version(
                self.scheme, self.authority, path, data, expected, region=self._region, s3=self.s3
            )
        self._check_conditional_replace(path)
        return put_local_if_version(path, data, expected)

    @property
    def _region(self) -> str | None:
        # S3FileSystem knows the bucket's region (resolved by `from_uri`); obstore would not.
        return getattr(self.fs, "region", None) or None

    def _check_conditional_replace(self, path: str) -> None:
        if not self.is_local:
            raise UnsupportedOperationError(
                f"{self.uri(path)}: no conditional write on scheme {self.scheme!r}"
            )

    def delete(self, path: str) -> bool:
        """Delete a file; False when it was already gone."""
        self._guard(path, "delete")
        try:
            self.fs.delete_file(path)
        except FileNotFoundError:
            return False
        except OSError:
            if not self.exists(path):
                return False
            raise
        return True

    def delete_dir(self, path: str) -> None:
        self._guard(path, "delete folder")
        if self.exists(path):
            self.fs.delete_dir(path)

    def open_output(self, path: str) -> pa.NativeFile:
        """A new output stream (the caller writes and closes it)."""
        self._guard(path, "write")
        return self.fs.open_output_stream(path)

    def rename(self, src: str, dst: str) -> None:
        self._guard(src, "move")
        self._guard(dst, "move into")
        self.fs.move(src, dst)


def _status(info: pafs.FileInfo) -> FileStatus:
    return FileStatus(
        path=info.path,
        size_bytes=info.size if info.size is not None else 0,
        is_dir=info.type == pafs.FileType.Directory,
        mtime_ns=info.mtime_ns,
    )
