"""Commit metadata of completed write instants (§2.5, §2.6, §8).

| table version | file                                        | encoding                                   |
|---------------|---------------------------------------------|--------------------------------------------|
| 6             | `.commit` `.deltacommit` `.replacecommit`   | Jackson JSON, fields in `HoodieWriteStat` order |
| 6             | `.inflight` workload profile                | same JSON shape (or empty)                  |
| 8, 9          | same actions under `.hoodie/timeline/`      | Avro container (`Obj\\x01`), one record      |

An empty file is valid and means empty metadata. Enum values are upper-case names.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pyhudi.codec.avro_schemas import decode_container, encode_container_1x
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType

_AVRO_MAGIC = b"Obj\x01"

# (json name, attribute) in Jackson serialization order of HoodieWriteStat.
_STAT_FIELDS = (
    ("fileId", "file_id"),
    ("path", "path"),
    ("cdcStats", "cdc_stats"),
    ("prevCommit", "prev_commit"),
    ("numWrites", "num_writes"),
    ("numDeletes", "num_deletes"),
    ("numUpdateWrites", "num_update_writes"),
    ("numInserts", "num_inserts"),
    ("totalWriteBytes", "total_write_bytes"),
    ("totalWriteErrors", "total_write_errors"),
    ("tempPath", None),
    ("partitionPath", "partition_path"),
    ("totalLogRecords", "total_log_records"),
    ("totalLogFilesCompacted", "total_log_files_compacted"),
    ("totalLogSizeCompacted", "total_log_size_compacted"),
    ("totalUpdatedRecordsCompacted", "total_updated_records_compacted"),
    ("totalLogBlocks", "total_log_blocks"),
    ("totalCorruptLogBlock", "total_corrupt_log_blocks"),
    ("totalRollbackBlocks", "total_rollback_blocks"),
    ("fileSizeInBytes", "file_size_bytes"),
    ("minEventTime", "min_event_time"),
    ("maxEventTime", "max_event_time"),
    ("runtimeStats", "runtime_stats"),
)
_DELTA_FIELDS = (
    ("logVersion", "log_version"),
    ("logOffset", "log_offset"),
    ("baseFile", "base_file"),
    ("logFiles", "log_files"),
)


def stat_to_json(stat: WriteStat) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, attribute in _STAT_FIELDS:
        out[name] = None if attribute is None else _jsonable(getattr(stat, attribute))
    if stat.is_delta:
        for name, attribute in _DELTA_FIELDS:
            out[name] = _jsonable(getattr(stat, attribute))
        out["recordsStats"] = {"val": None}
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def stat_from_json(data: Mapping[str, Any]) -> WriteStat:
    kwargs: dict[str, Any] = {}
    for name, attribute in (*_STAT_FIELDS, *_DELTA_FIELDS):
        if attribute is None or name not in data:
            continue
        value = data[name]
        if attribute == "log_files" and value is not None:
            value = tuple(value)
        kwargs[attribute] = value
    for counter in (
        "num_writes",
        "num_deletes",
        "num_update_writes",
        "num_inserts",
        "total_write_bytes",
    ):
        if kwargs.get(counter) is None:
            kwargs[counter] = 0
    kwargs.setdefault("file_id", data.get("fileId") or "")
    kwargs.setdefault("path", None)
    kwargs.setdefault("partition_path", None)
    if kwargs.get("prev_commit") is None:
        kwargs["prev_commit"] = "null"
    return WriteStat(**kwargs)


def encode_commit_metadata(metadata: CommitMetadata, *, table_version: int = 6) -> bytes:
    """`HoodieCommitMetadata` / `HoodieReplaceCommitMetadata` as the table version stores it:
    Jackson-style JSON (6), or the Avro container Hudi 1.2 writes (8, 9)."""
    if table_version >= 8:
        doc = _document_of(metadata, stat_to_avro)
        # Hudi 1.2 (`convertCommitMetadataToAvro`) leaves `version` null, every stat field set.
        doc["version"] = None
        name = "HoodieCommitMetadata"
        if metadata.partition_to_replace_file_ids is not None:
            name = "HoodieReplaceCommitMetadata"
        return encode_container_1x(name, doc)
    doc = _document_of(metadata, stat_to_json)
    return json.dumps(doc, indent=2, separators=(",", " : ")).encode("utf-8")


def _document_of(
    metadata: CommitMetadata, stat: Callable[[WriteStat], dict[str, Any]]
) -> dict[str, Any]:
    """The fields of `HoodieCommitMetadata` (and `partitionToReplaceFileIds` of a replace)."""
    doc: dict[str, Any] = {
        "partitionToWriteStats": {
            partition: [stat(s) for s in stats]
            for partition, stats in metadata.partition_to_write_stats.items()
        },
        "compacted": metadata.compacted,
        "extraMetadata": dict(metadata.extra_metadata),
        "operationType": metadata.operation_type.value,
    }
    if metadata.partition_to_replace_file_ids is not None:
        doc["partitionToReplaceFileIds"] = {
            p: list(ids) for p, ids in metadata.partition_to_replace_file_ids.items()
        }
    return doc


def stat_to_avro(stat: WriteStat) -> dict[str, Any]:
    """A write stat as Hudi 1.2's Avro `HoodieWriteStat` (table versions 8 and 9)."""
    runtime = stat.runtime_stats
    return {
        "fileId": stat.file_id,
        "path": stat.path,
        "prevCommit": stat.prev_commit,
        "numWrites": stat.num_writes,
        "numDeletes": stat.num_deletes,
        "numUpdateWrites": stat.num_update_writes,
        "totalWriteBytes": stat.total_write_bytes,
        "totalWriteErrors": stat.total_write_errors,
        "partitionPath": stat.partition_path,
        "totalLogRecords": stat.total_log_records,
        "totalLogFiles": None,
        "totalUpdatedRecordsCompacted": stat.total_updated_records_compacted,
        "numInserts": stat.num_inserts,
        "totalLogBlocks": stat.total_log_blocks,
        "totalCorruptLogBlock": stat.total_corrupt_log_blocks,
        "totalRollbackBlocks": stat.total_rollback_blocks,
        "fileSizeInBytes": stat.file_size_bytes,
        "logVersion": stat.log_version,
        "logOffset": stat.log_offset,
        "baseFile": stat.base_file,
        "logFiles": list(stat.log_files) if stat.log_files is not None else None,
        "cdcStats": dict(stat.cdc_stats) if stat.cdc_stats else None,
        "prevBaseFile": None,
        "minEventTime": stat.min_event_time,
        "maxEventTime": stat.max_event_time,
        "runtimeStats": dict(runtime) if runtime is not None else None,
        "totalLogFilesCompacted": stat.total_log_files_compacted,
        "totalLogReadTimeMs": 0,
        "totalLogSizeCompacted": stat.total_log_size_compacted,
        "tempPath": None,
        "numUpdates": 0,
    }


def decode_commit_metadata(data: bytes, *, what: str = "commit metadata") -> CommitMetadata:
    """JSON (v6) or Avro (v8) commit metadata; an empty file is empty metadata."""
    doc = _document(data, what)
    return _from_document(doc) if doc is not None else CommitMetadata()


def decode_commit_schema(data: bytes, *, what: str = "commit metadata") -> str | None:
    """The writer schema (`extraMetadata.schema`) of commit metadata, its write stats not decoded
    (a commit of a 2,000-partition table holds 2,000 of them)."""
    doc = _document(data, what)
    extra = (doc or {}).get("extraMetadata") or {}
    return extra.get("schema") or None


def _document(data: bytes, what: str) -> Mapping[str, Any] | None:
    if not data.strip():
        return None
    if data.startswith(_AVRO_MAGIC):
        doc = decode_container(data, what=what)
    else:
        try:
            doc = json.loads(data)
        except ValueError as err:
            raise CorruptFileError(f"cannot parse {what} as JSON: {err}") from err
    if not isinstance(doc, dict):
        raise CorruptFileError(f"{what} is not a JSON object")
    return doc


def _from_document(doc: Mapping[str, Any]) -> CommitMetadata:
    partition_stats = {
        partition: tuple(stat_from_json(s) for s in (stats or []))
        for partition, stats in (doc.get("partitionToWriteStats") or {}).items()
    }
    operation = doc.get("operationType") or "UNKNOWN"
    try:
        operation_type = WriteOperationType(str(operation).upper())
    except ValueError:
        operation_type = WriteOperationType.UNKNOWN
    replaced = doc.get("partitionToReplaceFileIds")
    return CommitMetadata(
        partition_to_write_stats=partition_stats,
        operation_type=operation_type,
        extra_metadata={k: v for k, v in (doc.get("extraMetadata") or {}).items() if v is not None},
        compacted=bool(doc.get("compacted") or False),
        partition_to_replace_file_ids=(
            {p: tuple(ids or ()) for p, ids in replaced.items()} if replaced is not None else None
        ),
    )
