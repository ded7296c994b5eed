"""`HoodieMetadataRecord`: the values of the metadata table (reference `avro/HoodieMetadata.avsc`).

Every metadata-table record, in every metadata partition, is one Avro `HoodieMetadataRecord`
stored as the value of an HFile cell (base files and HFILE_DATA_BLOCK contents); the HFile row is
the record key, and Hudi blanks the `key` field inside the value, so the key is taken from the row.
Values are decoded with the writer schema (the HFile FileInfo `schema` entry, or the log block's
SCHEMA header), so the 0.14 schema (table version 6) and the 1.x one (versions 8/9: leading
`_hoodie_*` meta fields, `SecondaryIndexMetadata`, column stats `isTightBound`/`valueType`, record
index `fileId`/`fileIdEncoding`) both decode.

| field                 | type                                   | used by `type`                       |
|-----------------------|----------------------------------------|--------------------------------------|
| `key`                 | string (blank in the value)            | all                                  |
| `type`                | int: 1 partition list, 2 file list, 3 column stats, 4 bloom filter, 5 record index, 6 partition stats, 7 secondary index | all |
| `filesystemMetadata`  | null or map<name, {size: long, isDeleted: boolean}> | 1 (names = partitions, size 0), 2 (file names) |
| `BloomFilterMetadata` | null or {type, timestamp, bloomFilter: bytes, isDeleted} | 4                   |
| `ColumnStatsMetadata` | null or {fileName, columnName, minValue, maxValue (unions of `*Wrapper{value}`), valueCount, nullCount, totalSize, totalUncompressedSize, isDeleted, ...} | 3, 6 |
| `recordIndexMetadata` | null or {partitionName, fileIdHighBits, fileIdLowBits, fileIndex, instantTime (epoch ms), [fileId, fileIdEncoding]} | 5 |
| `SecondaryIndexMetadata` | null or {isDeleted}                 | 7                                    |

Keys: the partition list is `__all_partitions__`; a file list is keyed by its data partition path,
with `.` for a non-partitioned table (also inside the partition list).

Merging (Hudi `HoodieMetadataPayload.preCombine`, newer over older) is in `merge_records`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import IntEnum
from functools import lru_cache
from typing import Any

import fastavro
import numpy as np
import pyarrow.compute as pc

from pyhudi.codec.hfile import HFileReader
from pyhudi.exceptions import CorruptFileError

ALL_PARTITIONS_KEY = "__all_partitions__"
#: How the `files` partition names the partition of a non-partitioned table.
NON_PARTITIONED_NAME = "."
#: `fileIndex` of a record-index entry whose file id is a bare UUID (no `-<n>` suffix).
MISSING_FILE_INDEX = -1
#: `fileIdEncoding` 1: the file id is stored as a string in `fileId` (Hudi 1.x).
FILE_ID_ENCODING_RAW = 1


class MetadataRecordType(IntEnum):
    """The `type` field of `HoodieMetadataRecord`."""

    PARTITION_LIST = 1
    FILE_LIST = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5
    PARTITION_STATS = 6
    SECONDARY_INDEX = 7


@dataclass(frozen=True)
class MetadataFileInfo:
    """One entry of `filesystemMetadata`: a file (or a partition, in the partition list)."""

    size_bytes: int
    is_deleted: bool = False


@dataclass(frozen=True)
class ColumnStats:
    """`HoodieMetadataColumnStats`: min/max are plain Python values (wrappers unwrapped)."""

    file_name: str | None
    column_name: str | None
    min_value: Any
    max_value: Any
    value_count: int
    null_count: int
    total_size_bytes: int
    total_uncompressed_size_bytes: int
    is_deleted: bool
    #: The Avro wrapper min/max were stored in (`LongWrapper`, ...; None: inferred when written).
    value_wrapper: str | None = field(default=None, compare=False)
    #: Hudi 1.x `valueType`: (`ValueType` ordinal, additional info such as `"12,3"` for a
    #: decimal); None: derived from the wrapper when a 1.x record is written.
    value_type: tuple[int, str | None] | None = field(default=None, compare=False)
    #: Hudi 1.x `isTightBound`: the range is exact over its files (`partition_stats`), so a newer
    #: record replaces an older one instead of widening it.
    is_tight_bound: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class BloomFilterEntry:
    """`HoodieMetadataBloomFilter`: a base file's serialized bloom filter."""

    type_code: str
    instant_time: str
    bloom_filter: bytes
    is_deleted: bool


@dataclass(frozen=True)
class RecordLocation:
    """`HoodieRecordIndexInfo`: where a record key lives (partition, file id, instant in epoch ms)."""

    partition_path: str
    file_id: str
    instant_time_ms: int


@dataclass(frozen=True)
class MetadataRecord:
    """One decoded `HoodieMetadataRecord` (only the member its `type` uses is set)."""

    key: str
    type: MetadataRecordType
    files: Mapping[str, MetadataFileInfo] | None = None
    column_stats: ColumnStats | None = None
    bloom_filter: BloomFilterEntry | None = None
    location: RecordLocation | None = None
    secondary_is_deleted: bool | None = None

    @property
    def live_files(self) -> dict[str, int]:
        """Names (files, or partitions in the partition list) not marked deleted -> size."""
        return {n: i.size_bytes for n, i in (self.files or {}).items() if not i.is_deleted}


# ---- decoding ----------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _schema(schema_json: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as err:
        raise CorruptFileError(f"metadata record schema is not usable Avro: {err}") from err


def decode_value(key: str, value: bytes, schema_json: str) -> MetadataRecord:
    """The record stored under HFile row `key` (its value in the writer schema `schema_json`)."""
    try:
        raw: Any = fastavro.schemaless_reader(
            io.BytesIO(value),
            _schema(schema_json),
            None,
            return_record_name=True,
            return_record_name_override=True,
        )
        return from_avro(key, raw)
    except (EOFError, ValueError, IndexError, KeyError, TypeError) as err:
        raise CorruptFileError(f"metadata record {key!r} does not decode: {err}") from err


def iter_hfile_records(
    data: bytes, schema_json: str | None = None, prefixes: Sequence[str] | None = None
) -> Iterator[MetadataRecord]:
    """Every record of a metadata HFile (a base file or an HFILE_DATA_BLOCK content), in key order;
    with `prefixes`, only those whose key starts with one of them (only the data blocks that may
    hold them are read, and only the matching values decoded).

    The writer schema is `schema_json` (a log block's SCHEMA header) or the FileInfo `schema`."""
    reader = HFileReader(data)
    schema = schema_json or reader.file_info.text("schema")
    if not schema:
        raise CorruptFileError("metadata HFile has no Avro schema (FileInfo 'schema')")
    if prefixes is None:
        for row, value in reader.items():
            yield decode_value(row.decode("utf-8", "surrogateescape"), value, schema)
        return
    probes = sorted({p.encode("utf-8") for p in prefixes})
    blocks = sorted({i for p in probes for i in reader.blocks_with_prefix(p)})
    for index in blocks:
        cells = reader.cell_columns(index)
        rows = cells.rows()
        hits = np.zeros(len(cells), bool)
        for probe in probes:
            hits |= pc.starts_with(rows, pattern=probe).to_numpy(zero_copy_only=False)
        for position in np.flatnonzero(hits).tolist():
            key = cells.row(position).decode("utf-8", "surrogateescape")
            yield decode_value(key, cells.value(position), schema)


def from_avro(key: str, raw: Mapping[str, Any]) -> MetadataRecord:
    """A `MetadataRecord` from a decoded Avro dict (the row key wins over a blank `key` field)."""
    record_key = key or raw.get("key") or ""
    kind = MetadataRecordType(raw["type"])
    files = raw.get("filesystemMetadata")
    stats = raw.get("ColumnStatsMetadata")
    bloom = raw.get("BloomFilterMetadata")
    location = raw.get("recordIndexMetadata")
    secondary = raw.get("SecondaryIndexMetadata")
    return MetadataRecord(
        key=record_key,
        type=kind,
        files=None if files is None else _file_infos(files),
        column_stats=None if stats is None else _column_stats(stats),
        bloom_filter=None if bloom is None else _bloom(bloom),
        location=None if location is None else _location(location),
        secondary_is_deleted=None if secondary is None else bool(secondary["isDeleted"]),
    )


def _file_infos(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, MetadataFileInfo]:
    return {
        name: MetadataFileInfo(int(info["size"]), bool(info["isDeleted"]))
        for name, info in entries.items()
    }


def _unwrap(wrapped: Any, value_type: Mapping[str, Any] | None) -> Any:
    """A `*Wrapper{value}` (as `(record name, dict)`) -> a plain Python value.

    Hudi 0.14 (table version 6) picks the wrapper by type (`DateWrapper` days, `DecimalWrapper`,
    `TimestampMicrosWrapper`); Hudi 1.x stores primitives and says what they mean in `valueType`
    (`HoodieValueTypeInfo{typeOrdinal, additionalInfo}`, Hudi's `ValueType` ordinals)."""
    name = ""
    if isinstance(wrapped, tuple):
        name, wrapped = wrapped
    value = wrapped.get("value") if isinstance(wrapped, Mapping) else wrapped
    if value is None:
        return None
    if value_type is not None:
        return typed_stat_value(
            value, int(value_type["typeOrdinal"]), value_type.get("additionalInfo")
        )
    if name.endswith("DateWrapper"):
        return _EPOCH_DAY + dt.timedelta(days=value)
    if name.endswith("TimestampMicrosWrapper"):
        return _EPOCH + dt.timedelta(microseconds=value)
    return value


def typed_stat_value(value: Any, ordinal: int, info: str | None) -> Any:
    """A Hudi 1.x primitive column-stat value as the Python value of its `ValueType` ordinal."""
    if ordinal == _DECIMAL and isinstance(value, bytes | bytearray):
        scale = int((info or "0,0").split(",")[1])
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    if ordinal == _UUID:
        return uuid.UUID(str(value))
    if ordinal == _DATE:
        return _EPOCH_DAY + dt.timedelta(days=value)
    if ordinal in _TIMES:
        return (dt.datetime.min + dt.timedelta(microseconds=value * _TIMES[ordinal])).time()
    if ordinal in _INSTANTS:
        micros = value * _INSTANTS[ordinal][0] / _INSTANTS[ordinal][1]
        moment = _EPOCH + dt.timedelta(microseconds=micros)
        return moment.replace(tzinfo=None) if ordinal in _LOCAL_INSTANTS else moment
    return value


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DAY = dt.date(1970, 1, 1)
#: Hudi `ValueType` ordinals (1.x): 0 V1 (pre-1.x meaning), 1 NULL, 2 BOOLEAN, 3 INT, 4 LONG,
#: 5 FLOAT, 6 DOUBLE, 7 STRING, 8 BYTES, 9 FIXED, 10 DECIMAL, 11 UUID, 12 DATE, 13 TIME_MILLIS,
#: 14 TIME_MICROS, 15-17 TIMESTAMP_{MILLIS,MICROS,NANOS}, 18-20 LOCAL_TIMESTAMP_{MILLIS,...}.
_DECIMAL, _UUID, _DATE = 10, 11, 12
_TIMES = {13: 1000, 14: 1}
#: ordinal -> (multiplier, divisor) to microseconds
_INSTANTS = {15: (1000, 1), 16: (1, 1), 17: (1, 1000), 18: (1000, 1), 19: (1, 1), 20: (1, 1000)}
_LOCAL_INSTANTS = (18, 19, 20)


def _column_stats(raw: Mapping[str, Any]) -> ColumnStats:
    value_type = raw.get("valueType")
    if isinstance(value_type, tuple):
        value_type = value_type[1]
    if value_type is not None and int(value_type.get("typeOrdinal", 0)) == 0:
        value_type = None  # V1: the wrapper says it
    return ColumnStats(
        file_name=raw.get("fileName"),
        column_name=raw.get("columnName"),
        min_value=_unwrap(raw.get("minValue"), value_type),
        max_value=_unwrap(raw.get("maxValue"), value_type),
        value_count=int(raw.get("valueCount") or 0),
        null_count=int(raw.get("nullCount") or 0),
        total_size_bytes=int(raw.get("totalSize") or 0),
        total_uncompressed_size_bytes=int(raw.get("totalUncompressedSize") or 0),
        is_deleted=bool(raw.get("isDeleted")),
        value_wrapper=_wrapper_name(raw.get("minValue")) or _wrapper_name(raw.get("maxValue")),
        value_type=_value_type_of(raw, value_type),
        is_tight_bound=bool(raw.get("isTightBound")),
    )


#: `value_type` of a Hudi 1.x record of the V1 index version (no value type, or ordinal 0): its
#: values are in Hudi 0.14's wrappers and mean what they meant there.
V1_VALUE_TYPE: tuple[int, str | None] = (0, None)


def _value_type_of(
    raw: Mapping[str, Any], value_type: Mapping[str, Any] | None
) -> tuple[int, str | None] | None:
    if value_type is not None:
        return int(value_type["typeOrdinal"]), value_type.get("additionalInfo")
    return V1_VALUE_TYPE if "valueType" in raw else None  # a 1.x schema without one: V1


def _wrapper_name(wrapped: Any) -> str | None:
    if isinstance(wrapped, tuple) and isinstance(wrapped[0], str):
        return wrapped[0].rsplit(".", 1)[-1]
    return None


def _bloom(raw: Mapping[str, Any]) -> BloomFilterEntry:
    return BloomFilterEntry(
        type_code=raw["type"],
        instant_time=raw["timestamp"],
        bloom_filter=bytes(raw["bloomFilter"]),
        is_deleted=bool(raw["isDeleted"]),
    )


def _location(raw: Mapping[str, Any]) -> RecordLocation:
    partition = raw.get("partitionName", raw.get("partition")) or ""
    if raw.get("fileIdEncoding") == FILE_ID_ENCODING_RAW:
        file_id = raw.get("fileId") or ""
    else:
        file_id = record_index_file_id(
            int(raw["fileIdHighBits"]), int(raw["fileIdLowBits"]), int(raw["fileIndex"])
        )
    return RecordLocation(partition, file_id, int(raw["instantTime"]))


def record_index_file_id(high_bits: int, low_bits: int, file_index: int) -> str:
    """Hudi's file id from the record index's UUID halves (signed Java longs) and file index."""
    value = ((high_bits & (2**64 - 1)) << 64) | (low_bits & (2**64 - 1))
    text = str(uuid.UUID(int=value))
    return text if file_index == MISSING_FILE_INDEX else f"{text}-{file_index}"


# ---- merging (HoodieMetadataPayload.preCombine) ------------------------------------------------


def merge_records(older: MetadataRecord, newer: MetadataRecord) -> MetadataRecord:
    """`newer` combined over `older`, as Hudi's metadata payload does.

    * partition and file lists: union of entries; a newer `isDeleted` entry removes the name (and
      is kept as a tombstone when the older side did not have it, so a base file merged later still
      loses it); otherwise the larger size wins (sizes only grow: appended log files).
    * column and partition stats: a tombstone on either side, or a newer tight bound (Hudi 1.x
      `partition_stats`) -> the newer record; else min of mins, max of maxes, sums of counts
      and sizes.
    * bloom filters, record index, secondary index: the newer record.
    """
    if older.type is not newer.type:
        raise CorruptFileError(
            f"metadata record {newer.key!r}: cannot merge type {newer.type.name} "
            f"over {older.type.name}"
        )
    if newer.type in (MetadataRecordType.PARTITION_LIST, MetadataRecordType.FILE_LIST):
        return replace(newer, files=merge_file_lists(older.files or {}, newer.files or {}))
    if newer.type in (MetadataRecordType.COLUMN_STATS, MetadataRecordType.PARTITION_STATS):
        if older.column_stats is None or newer.column_stats is None:
            return newer
        return replace(newer, column_stats=_merge_stats(older.column_stats, newer.column_stats))
    return newer


def merge_file_lists(
    older: Mapping[str, MetadataFileInfo], newer: Mapping[str, MetadataFileInfo]
) -> dict[str, MetadataFileInfo]:
    merged = dict(older)
    for name, info in newer.items():
        previous = merged.get(name)
        if previous is None:
            merged[name] = info
        elif info.is_deleted:
            del merged[name]
        else:
            merged[name] = MetadataFileInfo(max(info.size_bytes, previous.size_bytes), False)
    return merged


def _merge_stats(older: ColumnStats, newer: ColumnStats) -> ColumnStats:
    if older.is_deleted or newer.is_deleted or newer.is_tight_bound:
        return newer
    mins = [v for v in (older.min_value, newer.min_value) if v is not None]
    maxes = [v for v in (older.max_value, newer.max_value) if v is not None]
    return replace(
        newer,
        min_value=min(mins) if mins else None,
        max_value=max(maxes) if maxes else None,
        value_count=older.value_count + newer.value_count,
        null_count=older.null_count + newer.null_count,
        total_size_bytes=older.total_size_bytes + newer.total_size_bytes,
        total_uncompressed_size_bytes=(
            older.total_uncompressed_size_bytes + newer.total_uncompressed_size_bytes
        ),
    )


def data_partition(name: str) -> str:
    """A `files` partition key or partition-list entry -> the data partition path ('' = none)."""
    return "" if name == NON_PARTITIONED_NAME else name
