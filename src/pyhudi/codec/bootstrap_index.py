"""Hudi's `HFileBootstrapIndex`: where a METADATA_ONLY bootstrap's source files are (§6).

| file                                                              | key                                  | value (Avro container)              |
|-------------------------------------------------------------------|--------------------------------------|-------------------------------------|
| `.hoodie/.aux/.bootstrap/.partitions/<INDEX_NAME>`                | `part=<partitionPath>`               | `HoodieBootstrapPartitionMetadata`  |
| `.hoodie/.aux/.bootstrap/.fileids/<INDEX_NAME>`                   | `part=<partitionPath>;fileid=<fileId>` | `HoodieBootstrapFilePartitionInfo` |

Both HFiles carry the FileInfo entry `INDEX_INFO` = Avro container `HoodieBootstrapIndexInfo`; keys
are sorted; cells have an empty family and qualifier, timestamp LATEST and type Put, and the
comparator is `HFileBootstrapIndex$HoodieKVComparator`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pyhudi.codec import avro_schemas
from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.hfile.writer import HFILE_BOOTSTRAP_COMPARATOR, write_hfile

INDEX_FILE_NAME = "00000000-0000-0000-0000-000000000000-0_1-0-1_00000000000001.hfile"
PARTITIONS_FOLDER = ".hoodie/.aux/.bootstrap/.partitions"
FILEIDS_FOLDER = ".hoodie/.aux/.bootstrap/.fileids"
#: Hudi 0.15 moved the class to the `hfile` package (0.14: `...bootstrap.index.HFileBootstrapIndex`);
#: Hudi 0.15 cannot instantiate the 0.14 name from a table's properties, Hudi 1.2 reads both.
INDEX_CLASS = "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex"
INDEX_INFO_KEY = b"INDEX_INFO"


@dataclass(frozen=True)
class SourceFile:
    """One source file of a METADATA_ONLY bootstrap, and the skeleton file group it backs."""

    partition_path: str  # Hudi partition path
    source_partition_path: str  # partition folder relative to the source base path
    file_id: str
    uri: str  # full URI of the source file
    size_bytes: int
    modification_time_ms: int


def partition_key(partition: str) -> bytes:
    return f"part={partition}".encode()


def file_group_key(partition: str, file_id: str) -> bytes:
    return f"part={partition};fileid={file_id}".encode()


def _file_status(source: SourceFile) -> dict[str, Any]:
    return {
        "version": 1,
        "path": {"version": 1, "uri": source.uri},
        "length": source.size_bytes,
        "isDir": False,
        "blockReplication": 1,
        "blockSize": 32 * 1024 * 1024,
        "modificationTime": source.modification_time_ms,
        "accessTime": 0,
        "permission": {
            "version": 1,
            "userAction": "READ_WRITE",
            "groupAction": "READ",
            "otherAction": "READ",
            "stickyBit": False,
        },
        "owner": "",
        "group": "",
        "symlink": None,
    }


def encode_index(sources: Iterable[SourceFile], bootstrap_base_path: str) -> tuple[bytes, bytes]:
    """(partitions HFile, fileids HFile) bytes for these source files."""
    files = sorted(sources, key=lambda s: (s.partition_path, s.file_id))
    by_partition: dict[str, list[SourceFile]] = {}
    for source in files:
        by_partition.setdefault(source.partition_path, []).append(source)
    partition_items = []
    for partition, members in by_partition.items():
        record = {
            "version": 1,
            "bootstrapPartitionPath": members[0].source_partition_path,
            "partitionPath": partition,
            "fileIdToBootstrapFile": {s.file_id: _file_status(s) for s in members},
        }
        partition_items.append(
            (
                partition_key(partition),
                avro_schemas.encode_container("HoodieBootstrapPartitionMetadata", record),
            )
        )
    file_items = []
    for s in files:
        record = {
            "version": 1,
            "bootstrapPartitionPath": s.source_partition_path,
            "bootstrapFileStatus": _file_status(s),
            "partitionPath": s.partition_path,
        }
        file_items.append(
            (
                file_group_key(s.partition_path, s.file_id),
                avro_schemas.encode_container("HoodieBootstrapFilePartitionInfo", record),
            )
        )
    return (
        _hfile(sorted(partition_items), bootstrap_base_path),
        _hfile(sorted(file_items), bootstrap_base_path),
    )


def _hfile(items: list[tuple[bytes, bytes]], bootstrap_base_path: str) -> bytes:
    info = {
        "version": 1,
        "bootstrapBasePath": bootstrap_base_path,
        "createdTimestamp": int(time.time() * 1000),
        "numKeys": len(items),
    }
    file_info: dict[bytes | str, bytes] = {
        INDEX_INFO_KEY: avro_schemas.encode_container("HoodieBootstrapIndexInfo", info)
    }
    return write_hfile(items, file_info=file_info, comparator_class=HFILE_BOOTSTRAP_COMPARATOR)


def decode_file_index(data: bytes) -> dict[tuple[str, str], str]:
    """(partition path, file id) -> source file URI, from the `.fileids` HFile (keys `part=<p>;fileid=<id>`)."""
    result = {}
    for key, value in HFileReader(data).items():
        text = key.decode()
        partition_part, _, file_part = text.partition(";fileid=")
        record = avro_schemas.decode_container(value, what="bootstrap index entry")
        path = ((record.get("bootstrapFileStatus") or {}).get("path") or {}).get("uri")
        if path:
            result[(partition_part[len("part=") :], file_part)] = path
    return result


def read_index_info(data: bytes) -> dict[str, Any]:
    value = HFileReader(data).file_info.get(INDEX_INFO_KEY)
    return avro_schemas.decode_container(value, what="bootstrap index info") if value else {}
