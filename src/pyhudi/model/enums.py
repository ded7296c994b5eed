"""Closed sets of Hudi's vocabulary. Each value is the string (or ordinal) Hudi puts on the wire."""

from __future__ import annotations

from enum import Enum, IntEnum


class TableType(str, Enum):
    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"

    @property
    def is_merge_on_read(self) -> bool:
        return self is TableType.MERGE_ON_READ


class WriteOperationType(str, Enum):
    """`WriteOperationType` names as they appear in commit metadata (`operationType`)."""

    INSERT = "INSERT"
    INSERT_PREPPED = "INSERT_PREPPED"
    UPSERT = "UPSERT"
    UPSERT_PREPPED = "UPSERT_PREPPED"
    BULK_INSERT = "BULK_INSERT"
    BULK_INSERT_PREPPED = "BULK_INSERT_PREPPED"
    DELETE = "DELETE"
    DELETE_PREPPED = "DELETE_PREPPED"
    BOOTSTRAP = "BOOTSTRAP"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    CLUSTER = "CLUSTER"
    DELETE_PARTITION = "DELETE_PARTITION"
    INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
    COMPACT = "COMPACT"
    INDEX = "INDEX"
    ALTER_SCHEMA = "ALTER_SCHEMA"
    LOG_COMPACT = "LOG_COMPACT"
    UNKNOWN = "UNKNOWN"

    @property
    def is_replace(self) -> bool:
        return self in _REPLACE_OPERATIONS


_REPLACE_OPERATIONS = frozenset(
    {
        WriteOperationType.INSERT_OVERWRITE,
        WriteOperationType.INSERT_OVERWRITE_TABLE,
        WriteOperationType.DELETE_PARTITION,
        WriteOperationType.CLUSTER,
    }
)


class LogBlockType(IntEnum):
    """`HoodieLogBlockType`, written as its ordinal (reference §5.2)."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6

    @property
    def is_data_block(self) -> bool:
        return self in (
            LogBlockType.AVRO_DATA_BLOCK,
            LogBlockType.HFILE_DATA_BLOCK,
            LogBlockType.PARQUET_DATA_BLOCK,
            LogBlockType.CDC_DATA_BLOCK,
        )


class HeaderMetadataType(IntEnum):
    """`HeaderMetadataType` ordinals of table version 6 (reference §5.3)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    # Table version 8 additions; a v6 reader rejects them, a v6 writer never emits them.
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandBlockType(IntEnum):
    ROLLBACK_BLOCK = 0


class IOType(str, Enum):
    """Marker suffixes (`<file>.marker.<IOType>`)."""

    CREATE = "CREATE"
    MERGE = "MERGE"
    APPEND = "APPEND"


class BaseFileFormat(str, Enum):
    PARQUET = "PARQUET"
    ORC = "ORC"
    HFILE = "HFILE"
    #: Hudi 1.1 (table version 9): Lance columnar files, read with the optional `pylance` package.
    LANCE = "LANCE"

    @property
    def extension(self) -> str:
        return "." + self.value.lower()


class BootstrapMode(str, Enum):
    METADATA_ONLY = "METADATA_ONLY"
    FULL_RECORD = "FULL_RECORD"

    @property
    def other(self) -> BootstrapMode:
        return (
            BootstrapMode.FULL_RECORD
            if self is BootstrapMode.METADATA_ONLY
            else BootstrapMode.METADATA_ONLY
        )
