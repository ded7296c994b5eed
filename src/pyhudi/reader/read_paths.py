"""Reading part of a table, as Hudi 0.15 reads a glob load path (`load(base + "/*/*")`) or
`hoodie.datasource.read.paths` (comma-separated paths inside the table).

The table is the nearest folder above the paths' fixed part that holds a Hudi table. The paths
become globs relative to it, matched one path component at a time (`*` never crosses `/`, as
in Hadoop's globs): a file slice is read when a glob names its partition folder or a folder
above it, or one of its files.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping

from pyhudi.config import read as rkeys
from pyhudi.exceptions import ConfigError, TableNotFoundError
from pyhudi.model.file import FileSlice
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

GLOB_CHARACTERS = frozenset("*?[")


def is_glob(path: str) -> bool:
    return any(c in GLOB_CHARACTERS for c in path)


def split_load_path(path: str, options: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """(the table's URI, the options with the paths to read as `hoodie.datasource.read.paths`)
    for a load path that may be a glob or a folder inside the table."""
    given = [path] if path else []
    given += [p.strip() for p in (rkeys.READ_PATHS.get(options) or "").split(",") if p.strip()]
    if not given:
        raise ConfigError(f"a read needs a path, or {rkeys.READ_PATHS.key}")
    base = _table_above(given[0])
    # As Hudi: the load path is one of the paths read (the table's own folder: all of it).
    return base, {**options, rkeys.READ_PATHS.key: ",".join(given)}


def _table_above(path: str) -> str:
    """The URI of the Hudi table at or above the fixed part of `path`."""
    fixed = path.rstrip("/")
    while is_glob(fixed):
        fixed = fixed.rsplit("/", 1)[0]
    storage, folder = Storage.for_uri(fixed)
    while True:
        if TableContext.exists_at(storage, folder):
            return storage.uri(folder)
        parent = posixpath.dirname(folder)
        if parent == folder or not parent:
            raise TableNotFoundError(f"no Hudi table at or above {path}")
        folder = parent


def _relative(base: str, path: str) -> str:
    """`path` relative to the table's URI `base` ("" for the table itself)."""
    _, base_folder = Storage.for_uri(base)
    _, folder = Storage.for_uri(path.rstrip("/")) if not is_glob(path) else _split_glob(path)
    if folder.rstrip("/") == base_folder.rstrip("/"):
        return ""
    prefix = base_folder.rstrip("/") + "/"
    if not folder.startswith(prefix):
        raise ConfigError(f"{rkeys.READ_PATHS.key}: {path} is not inside the table at {base}")
    return folder[len(prefix) :]


def _split_glob(path: str) -> tuple[Storage, str]:
    """Storage.for_uri of a glob: its fixed folder resolved, the glob part kept as written."""
    fixed, rest = path.rstrip("/"), ""
    while is_glob(fixed):
        fixed, tail = fixed.rsplit("/", 1)
        rest = f"{tail}/{rest}" if rest else tail
    storage, folder = Storage.for_uri(fixed)
    return storage, f"{folder}/{rest}"


def read_patterns(ctx: TableContext, options: Mapping[str, str]) -> tuple[str, ...]:
    """The globs (relative to the table) of `hoodie.datasource.read.paths`; () to read it all."""
    given = [p.strip() for p in (rkeys.READ_PATHS.get(options) or "").split(",") if p.strip()]
    patterns = [_relative(ctx.uri, p) for p in given]
    return () if not patterns or "" in patterns else tuple(patterns)


def _matches(path: str, pattern: str) -> bool:
    parts, wanted = path.split("/"), pattern.split("/")
    return len(parts) == len(wanted) and all(
        fnmatch.fnmatchcase(p, w) for p, w in zip(parts, wanted, strict=True)
    )


def partition_in_scope(partition: str, patterns: Iterable[str]) -> bool:
    """A glob could name the partition, a folder above it, or files in it."""
    folders = partition.split("/") if partition else []
    for pattern in patterns:
        wanted = pattern.split("/")
        shared = min(len(folders), len(wanted))
        if all(fnmatch.fnmatchcase(folders[i], wanted[i]) for i in range(shared)):
            return True
    return False


def slice_in_scope(file_slice: FileSlice, patterns: Iterable[str]) -> bool:
    partition = file_slice.partition_path
    files = [f.relative_path for f in file_slice.log_files]
    if file_slice.base_file is not None:
        files.append(file_slice.base_file.relative_path)
    for pattern in patterns:
        folders = partition.split("/") if partition else []
        if any(_matches("/".join(folders[:n]), pattern) for n in range(1, len(folders) + 1)):
            return True
        if any(_matches(f, pattern) for f in files):
            return True
    return False
