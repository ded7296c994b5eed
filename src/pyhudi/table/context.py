"""A Spark-free handle on one table: storage, `hoodie.properties`, timeline and file-system view."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyhudi.codec.bootstrap_index import FILEIDS_FOLDER, INDEX_FILE_NAME, decode_file_index
from pyhudi.codec.properties import (
    dump_table_properties,
    load_properties,
    table_checksum,
)
from pyhudi.config import archival as archival_keys
from pyhudi.config import table as keys
from pyhudi.exceptions import (
    CorruptFileError,
    NotAHudiTableError,
    TableExistsError,
    TableNotFoundError,
)
from pyhudi.fs_view import FileSystemView
from pyhudi.model.instant import InstantTime
from pyhudi.storage import Storage
from pyhudi.table import layout, schema_history
from pyhudi.table.config import TableConfig
from pyhudi.table.layout import TEMP_FOLDER
from pyhudi.timeline import META_FOLDER, ActiveTimeline, new_instant_time

PROPERTIES_FILE = "hoodie.properties"
PROPERTIES_BACKUP = "hoodie.properties.backup"
AUX_FOLDER = ".aux"
#: Folders Hudi's `initTableAndGetMetaClient` creates (mirrored for tools that look for them).
_BOOTSTRAP_INDEXES: dict[tuple[str, int, int], dict[tuple[str, str], str]] = {}
_BOOTSTRAP_INDEXES_MAX = 64
_INIT_FOLDERS = (
    ".schema",
    TEMP_FOLDER,
    AUX_FOLDER,
    ".aux/.bootstrap/.partitions",
    ".aux/.bootstrap/.fileids",
)


@dataclass
class TableContext:
    storage: Storage
    base_path: str
    config: TableConfig
    active: ActiveTimeline = field(repr=False)

    # ---- opening and creating ------------------------------------------------------------------
    @classmethod
    def open(cls, uri: str) -> TableContext:
        storage, base_path = Storage.for_uri(uri)
        return cls.open_at(storage, base_path)

    @classmethod
    def open_at(cls, storage: Storage, base_path: str) -> TableContext:
        storage = storage.scoped(base_path)  # nothing is created or deleted outside the table
        config = TableConfig(_read_properties(storage, base_path))
        config.check_readable(base_path)
        active = ActiveTimeline.load(
            storage, base_path, config.timeline_layout_version, utc=config.timeline_timezone_utc
        )
        return cls(storage, base_path, config, active)

    def check_writable(self, what: str = "write") -> None:
        """pyhudi may run `what` on this table: its version, and no Hudi schema-on-read history."""
        self.config.check_writable(self.base_path, what)
        schema_history.check_writable(self.storage, self.base_path)

    @classmethod
    def exists(cls, uri: str) -> bool:
        return cls.exists_at(*Storage.for_uri(uri))

    @staticmethod
    def exists_at(storage: Storage, base_path: str) -> bool:
        """A table lives at `base_path`: its properties (or their backup) are there."""
        meta = posixpath.join(base_path, META_FOLDER)
        return storage.exists(posixpath.join(meta, PROPERTIES_FILE)) or storage.exists(
            posixpath.join(meta, PROPERTIES_BACKUP)
        )

    @classmethod
    def create(cls, uri: str, props: Mapping[str, str], *, in_folder: bool = False) -> TableContext:
        """Initialise `.hoodie/` and write `hoodie.properties` (with its checksum). The folder
        must be new or empty (a `.hoodie/` without properties, from a creation that stopped, is
        taken up), else `NotAHudiTableError`; `in_folder`: any folder will do (the metadata
        table's, whose leftovers its writer clears)."""
        storage, base_path = Storage.for_uri(uri)
        storage = storage.scoped(base_path)
        meta = posixpath.join(base_path, META_FOLDER)
        if storage.exists(posixpath.join(meta, PROPERTIES_FILE)):
            raise TableExistsError(f"a Hudi table already exists at {uri}")
        if not in_folder:
            _check_no_foreign_entries(storage, base_path, uri)
        entries = dict(props)
        entries[keys.CHECKSUM.key] = str(
            table_checksum(entries[keys.NAME.key], entries.get(keys.DATABASE.key))
        )
        for folder in (*_INIT_FOLDERS, _history_folder(entries)):
            storage.mkdirs(posixpath.join(meta, folder))
        storage.create_new(posixpath.join(meta, PROPERTIES_FILE), dump_table_properties(entries))
        return cls.open_at(storage, base_path)

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def meta_path(self) -> str:
        return posixpath.join(self.base_path, META_FOLDER)

    @property
    def uri(self) -> str:
        return self.storage.uri(self.base_path)

    def path(self, relative: str) -> str:
        return posixpath.join(self.base_path, relative) if relative else self.base_path

    def partition_path(self, partition: str) -> str:
        return self.path(partition)

    def marker_folder(self, instant_time: str) -> str:
        return layout.marker_folder(self.base_path, instant_time)

    # ---- timeline and view --------------------------------------------------------------------
    def reload(self) -> TableContext:
        self.config = TableConfig(_read_properties(self.storage, self.base_path))
        self.active.reload()
        return self

    def view(self) -> FileSystemView:
        """A fresh file-system view (new listing) over the current timeline."""
        extension = self.config.base_file_format.extension
        return FileSystemView(
            self.storage,
            self.base_path,
            self.active,
            extension,
            bootstrap_sources=self.bootstrap_sources(),
        )

    def bootstrap_sources(self) -> dict[tuple[str, str], str]:
        """(partition, file id) -> source file URI of METADATA_ONLY bootstrapped file groups."""
        if not self.config.bootstrap_base_path or not keys.BOOTSTRAP_INDEX_ENABLE.get(
            self.config.props
        ):
            return {}

        path = self.path(f"{FILEIDS_FOLDER}/{INDEX_FILE_NAME}")
        status = self.storage.status(path)
        if status is None:
            return {}
        # The index file is written once (create-new) and never changed in place, so its decoded
        # form is reused while its size and modification time stay the same (reads decode it each
        # time otherwise, CRC-checking every HFile block in Python).
        if status.mtime_ns is None:  # no way to tell a rewritten index: decode it every time
            return decode_file_index(self.storage.read_bytes(path))
        key = (self.storage.uri(path), status.size_bytes, status.mtime_ns)
        if key not in _BOOTSTRAP_INDEXES:
            if len(_BOOTSTRAP_INDEXES) >= _BOOTSTRAP_INDEXES_MAX:
                _BOOTSTRAP_INDEXES.clear()
            _BOOTSTRAP_INDEXES[key] = decode_file_index(self.storage.read_bytes(path))
        return dict(_BOOTSTRAP_INDEXES[key])

    def new_instant_time(self) -> InstantTime:
        return new_instant_time(self.active.timeline.times(), utc=self.config.timeline_timezone_utc)

    # ---- hoodie.properties updates -------------------------------------------------------------
    def update_properties(self, changes: Mapping[str, str | None]) -> None:
        """Hudi's update protocol: backup, delete, rewrite, verify, drop the backup."""
        meta = self.meta_path
        current, backup = (
            posixpath.join(meta, PROPERTIES_FILE),
            posixpath.join(meta, PROPERTIES_BACKUP),
        )
        config = self.config.with_changes(changes)
        entries = dict(config.props)
        entries[keys.CHECKSUM.key] = str(table_checksum(config.name, config.database))
        self.storage.write_bytes(backup, dump_table_properties(self.config.props, updated=True))
        self.storage.delete(current)
        # Hadoop's local file system keeps a `.hoodie.properties.crc` beside a file Hudi wrote
        # and rejects the file once it changes: the stale checksum goes with it, as Hadoop's delete.
        self.storage.delete(posixpath.join(meta, f".{PROPERTIES_FILE}.crc"))
        self.storage.write_bytes(current, dump_table_properties(entries, updated=True))
        verified = TableConfig(load_properties(self.storage.read_bytes(current)))
        if verified.get(keys.CHECKSUM.key) != entries[keys.CHECKSUM.key]:
            raise CorruptFileError(
                f"hoodie.properties of {self.base_path} did not verify after update"
            )
        self.storage.delete(backup)
        self.config = verified

    # ---- partitions ----------------------------------------------------------------------------
    def ensure_partition_metadata(self, partition: str, instant_time: str) -> None:
        """Write `.hoodie_partition_metadata` into a partition that has none yet."""
        layout.ensure_partition_metadata(
            self.storage, self.partition_path(partition), partition, instant_time
        )


def _history_folder(props: Mapping[str, str]) -> str:
    """Where archived instants go: `archived` (layout 1), `timeline/history` (layout 2)."""
    if keys.TIMELINE_LAYOUT_VERSION.get(props) >= 2:
        return posixpath.join(
            archival_keys.TIMELINE_PATH.get(props), archival_keys.TIMELINE_HISTORY_PATH.get(props)
        )
    return keys.ARCHIVELOG_FOLDER.get(props)


def _read_properties(storage: Storage, base_path: str) -> dict[str, str]:
    meta = posixpath.join(base_path, META_FOLDER)
    for name in (PROPERTIES_FILE, PROPERTIES_BACKUP):
        path = posixpath.join(meta, name)
        if storage.exists(path):
            props = load_properties(storage.read_bytes(path))
            _check_checksum(props, path)
            return props
    raise TableNotFoundError(
        f"no Hudi table at {storage.uri(base_path)} (missing .hoodie/{PROPERTIES_FILE})"
    )


def _check_checksum(props: Mapping[str, str], path: str) -> None:
    stored = props.get(keys.CHECKSUM.key)
    name = props.get(keys.NAME.key)
    if stored is None or name is None:
        return  # Hudi >= 0.15 validates only when present
    if str(table_checksum(name, props.get(keys.DATABASE.key))) != stored.strip():
        raise CorruptFileError(f"{path}: hoodie.table.checksum does not match the table name")


#: How many of a folder's foreign entries an error names.
_NAMED_ENTRIES = 5


def _check_no_foreign_entries(storage: Storage, base_path: str, uri: str) -> None:
    """A new table goes into a new or empty folder: a folder holding files that are not a Hudi
    table (a parquet dataset, a mistyped path) is left as it is, and named."""
    names = [s.name for s in storage.list_dir(base_path) if s.name != META_FOLDER]
    foreign = sorted(names, key=lambda name: (name.startswith("."), name))  # hidden ones last
    if not foreign:
        return
    named = ", ".join(foreign[:_NAMED_ENTRIES])
    more = f" and {len(foreign) - _NAMED_ENTRIES} more" if len(foreign) > _NAMED_ENTRIES else ""
    raise NotAHudiTableError(
        f"{uri} is not a Hudi table (no .hoodie/hoodie.properties) but holds {named}{more}: "
        "pyhudi creates a table only in a new or empty folder, and changed nothing. Check the "
        "path; to turn an existing parquet or ORC table into a Hudi table, bootstrap it "
        "(hoodie.datasource.write.operation=bootstrap, docs/bootstrap.md)"
    )
