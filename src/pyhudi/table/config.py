"""`hoodie.properties` as a typed value (Hudi's `HoodieTableConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pyhudi.config import merge as mkeys
from pyhudi.config import table as keys
from pyhudi.exceptions import UnsupportedVersionError
from pyhudi.model.enums import BaseFileFormat, TableType

WRITABLE_VERSIONS = (6, 8, 9)
READABLE_VERSIONS = (6, 8, 9)


@dataclass(frozen=True)
class TableConfig:
    props: Mapping[str, str]

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.props.get(key, default)

    def with_changes(self, changes: Mapping[str, str | None]) -> TableConfig:
        merged = dict(self.props)
        for key, value in changes.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return replace(self, props=merged)

    @property
    def name(self) -> str:
        return keys.NAME.get(self.props) or ""

    @property
    def database(self) -> str | None:
        return keys.DATABASE.get(self.props)

    @property
    def table_type(self) -> TableType:
        return TableType(keys.TYPE.get(self.props))

    @property
    def is_merge_on_read(self) -> bool:
        return self.table_type is TableType.MERGE_ON_READ

    @property
    def version(self) -> int:
        return keys.VERSION.get(self.props)

    @property
    def timeline_layout_version(self) -> int:
        if keys.TIMELINE_LAYOUT_VERSION.is_set(self.props):
            return keys.TIMELINE_LAYOUT_VERSION.get(self.props)
        return 2 if self.version >= 8 else 1

    @property
    def base_file_format(self) -> BaseFileFormat:
        return BaseFileFormat(keys.BASE_FILE_FORMAT.get(self.props))

    @property
    def record_key_fields(self) -> tuple[str, ...]:
        return _fields(keys.RECORD_KEY_FIELDS.get(self.props))

    @property
    def partition_fields(self) -> tuple[str, ...]:
        return _fields(keys.PARTITION_FIELDS.get(self.props))

    @property
    def ordering_fields(self) -> tuple[str, ...]:
        """Ordering fields: `hoodie.table.ordering.fields` (v9, several allowed), else precombine."""
        return _fields(
            mkeys.ORDERING_FIELDS.get(self.props) or keys.PRECOMBINE_FIELD.get(self.props)
        )

    @property
    def precombine_field(self) -> str | None:
        """The ordering fields as written in the table (comma-separated when several)."""
        return ",".join(self.ordering_fields) or None

    @property
    def key_generator_class(self) -> str | None:
        """A class name (`hoodie.table.keygenerator.class`) or, from v8, a type name."""
        return keys.KEY_GENERATOR_CLASS.get(self.props) or mkeys.KEY_GENERATOR_TYPE.get(self.props)

    @property
    def hive_style_partitioning(self) -> bool:
        return keys.HIVE_STYLE_PARTITIONING.get(self.props)

    @property
    def url_encode_partitioning(self) -> bool:
        return keys.URL_ENCODE_PARTITIONING.get(self.props)

    @property
    def populate_meta_fields(self) -> bool:
        return keys.POPULATE_META_FIELDS.get(self.props)

    @property
    def drop_partition_columns(self) -> bool:
        return keys.DROP_PARTITION_COLUMNS.get(self.props)

    @property
    def payload_class(self) -> str:
        return keys.PAYLOAD_CLASS.get(self.props)

    @property
    def timeline_timezone_utc(self) -> bool:
        return keys.TIMELINE_TIMEZONE.get(self.props) == "UTC"

    @property
    def archivelog_folder(self) -> str:
        return keys.ARCHIVELOG_FOLDER.get(self.props)

    @property
    def create_schema(self) -> str | None:
        return keys.CREATE_SCHEMA.get(self.props)

    @property
    def bootstrap_base_path(self) -> str | None:
        return keys.BOOTSTRAP_BASE_PATH.get(self.props)

    @property
    def metadata_partitions(self) -> tuple[str, ...]:
        return _fields(keys.METADATA_PARTITIONS.get(self.props))

    def check_readable(self, path: str) -> None:
        if self.version not in READABLE_VERSIONS:
            raise UnsupportedVersionError(
                f"table {path} has hoodie.table.version={self.version} (written by "
                f"{hudi_release(self.version)}); pyhudi reads versions {_supported()}"
            )
        table_format = keys.TABLE_FORMAT.get(self.props)
        if table_format.strip().lower() != "native":
            raise UnsupportedVersionError(
                f"table {path} has {keys.TABLE_FORMAT.key}={table_format}; pyhudi reads the native "
                "Hudi table format only"
            )

    def check_writable(self, path: str, what: str = "write") -> None:
        """pyhudi may run `what` (a write, or a service: "compaction", "clean", ...) here: it
        writes and runs every service on versions 6, 8 and 9 (`what` names it in errors)."""
        self.check_readable(path)
        if self.version not in WRITABLE_VERSIONS:
            raise UnsupportedVersionError(
                f"table {path} has hoodie.table.version={self.version} (written by "
                f"{hudi_release(self.version)}); pyhudi writes versions "
                f"{', '.join(map(str, WRITABLE_VERSIONS))}. It reads versions {_supported()}; "
                f"run {what} on this table with Hudi "
                f"{_RELEASES.get(self.version, '1.x').removeprefix('Hudi ')}."
            )


#: Table version -> the Hudi releases that write it (Hudi's `HoodieTableVersion`).
_RELEASES = {
    0: "Hudi 0.3-0.5",
    1: "Hudi 0.6-0.8",
    2: "Hudi 0.9",
    3: "Hudi 0.10",
    4: "Hudi 0.11",
    5: "Hudi 0.12/0.13",
    6: "Hudi 0.14/0.15",
    7: "Hudi 0.16",
    8: "Hudi 1.0",
    9: "Hudi 1.1",
}


def hudi_release(version: int) -> str:
    """The Hudi release that writes table `version` (a newer, unknown version says so)."""
    if version in _RELEASES:
        return _RELEASES[version]
    return (
        "a Hudi release newer than 1.1" if version > 9 else f"an unknown Hudi release ({version})"
    )


def _supported() -> str:
    return ", ".join(f"{v} ({_RELEASES[v]})" for v in READABLE_VERSIONS)


def _fields(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(part.strip() for part in value.split(",") if part.strip())
