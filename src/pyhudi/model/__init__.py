"""Frozen value types of Hudi's vocabulary (layer 1)."""

from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import (
    BaseFileFormat,
    CommandBlockType,
    HeaderMetadataType,
    IOType,
    LogBlockType,
    TableType,
    WriteOperationType,
)
from pyhudi.model.file import BaseFile, FileGroup, FileGroupId, FileSlice, LogFile, join_partition
from pyhudi.model.instant import (
    FULL_BOOTSTRAP_INSTANT,
    INIT_INSTANT,
    METADATA_BOOTSTRAP_INSTANT,
    Action,
    Instant,
    InstantTime,
    State,
)

__all__ = [
    "FULL_BOOTSTRAP_INSTANT",
    "INIT_INSTANT",
    "METADATA_BOOTSTRAP_INSTANT",
    "Action",
    "BaseFile",
    "BaseFileFormat",
    "CommandBlockType",
    "CommitMetadata",
    "FileGroup",
    "FileGroupId",
    "FileSlice",
    "HeaderMetadataType",
    "IOType",
    "Instant",
    "InstantTime",
    "LogBlockType",
    "LogFile",
    "State",
    "TableType",
    "WriteOperationType",
    "WriteStat",
    "join_partition",
]
