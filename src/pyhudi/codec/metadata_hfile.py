"""Metadata records -> HFile bytes: the metadata table's base files and HFILE_DATA_BLOCK contents.

What Hudi's `HoodieAvroHFileWriter` writes (checked byte for byte by re-encoding the `files`
partition HFiles of the v8 fixture, which Hudi 1.0 wrote through HBase's writer):

| part                  | base file (`<fileId>_<token>_<instant>.hfile`) | HFILE_DATA_BLOCK content |
|-----------------------|-----------------------------------------------|--------------------------|
| cells                 | row = record key (UTF-8), value = the record in the writer schema with `key` blanked (`""`); sorted by key, unique | same |
| data blocks           | GZ, 1 MiB (`hoodie.metadata...` HFile block size) | same                     |
| comparator            | `org.apache.hudi.io.storage.HoodieHBaseKVComparator` | same              |
| FileInfo (user)       | `schema`, `minRecordKey`, `maxRecordKey`, `bloomFilterTypeCode` (`DYNAMIC_V0`) | `schema` |
| meta block            | `bloomFilter`: the Base64 text of a dynamic bloom filter of the keys (Hudi's defaults: 60000 entries, fpp 1e-9, max 100000) | none |

`METADATA_SCHEMA_JSON` is Hudi 0.14's `HoodieMetadataRecord` (table version 6) with the five
`_hoodie_*` meta fields first, nullable, as Hudi's write handles add them (the v8 files carry the
same prefix on the 1.0 schema). Its strings and maps carry `"avro.java.string": "String"`, as the
generated `HoodieMetadataRecord.getClassSchema()` Hudi writes does: Hudi 0.15 reads some log blocks
with their header schema as reader schema, and `HoodieMetadataPayload` casts the `filesystemMetadata`
keys to `String` (a `ClassCastException` on Avro's `Utf8` without the property). Avro maps are written in the order given; Hudi writes Java
`HashMap` order, which no reader depends on. Column stats min/max go in Hudi 0.14's `*Wrapper`
records (`column_stats_datum`; checked byte for byte against the v8 fixture's column stats HFiles,
whose 1.0 schema adds `isTightBound`, written false as Hudi 1.0 does).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from decimal import Decimal
from functools import cache
from typing import Any

import fastavro

from pyhudi.codec.avro_schemas import raw_schema, written_schema
from pyhudi.codec.bloom import new_bloom_filter
from pyhudi.codec.hfile import HFILE_MDT_COMPARATOR, write_hfile
from pyhudi.codec.metadata_records import (
    ALL_PARTITIONS_KEY,
    FILE_ID_ENCODING_RAW,
    MISSING_FILE_INDEX,
    NON_PARTITIONED_NAME,
    V1_VALUE_TYPE,
    ColumnStats,
    MetadataFileInfo,
    MetadataRecord,
    MetadataRecordType,
    RecordLocation,
)
from pyhudi.exceptions import UnsupportedOperationError

#: Hudi's metadata-table HFile block size (`hoodie.hfile.block.size` for the metadata table).
METADATA_HFILE_BLOCK_SIZE = 1024 * 1024
JAVA_STRING = "avro.java.string"
META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)


@cache
def metadata_schema_json() -> str:
    """The writer schema text pyhudi puts in metadata HFiles and log block SCHEMA headers."""
    schema = java_strings(raw_schema("HoodieMetadata.avsc"))
    meta = [
        {"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in META_FIELDS
    ]
    schema["fields"] = meta + list(schema["fields"])
    return json.dumps(schema, separators=(",", ":"))


def written_metadata_schema(table_version: int, *, meta_fields: bool = True) -> str:
    """The record schema text of a metadata table at `table_version`: in its HFiles and log block
    SCHEMA headers (`meta_fields`), or in its commits' `schema` entry (without the meta fields).
    Versions 8 and 9: Hudi 1.2's `HoodieMetadataRecord` verbatim (`avsc/written-1.2`, taken from
    files Hudi 1.2 wrote); version 6: `metadata_schema_json()` for both."""
    if table_version < 8:
        return metadata_schema_json()
    name = "HoodieMetadataRecordWithMetaFields" if meta_fields else "HoodieMetadataRecord"
    return written_schema(name)[0]


def java_strings(schema: Any) -> Any:
    """`schema` with `"avro.java.string": "String"` on every string and map type (avro-maven-plugin's
    `stringType=String`, which Hudi's generated Avro classes are compiled with)."""
    if schema == "string":
        return {"type": "string", JAVA_STRING: "String"}
    if isinstance(schema, list):  # a union
        return [java_strings(branch) for branch in schema]
    if not isinstance(schema, dict):  # another primitive, or a named type's reference
        return schema
    kind = schema.get("type")
    if kind in ("string", "map"):
        schema = {**schema, JAVA_STRING: "String"}
    if kind == "record":
        fields = [{**f, "type": java_strings(f["type"])} for f in schema["fields"]]
        return {**schema, "fields": fields}
    if kind == "array":
        return {**schema, "items": java_strings(schema["items"])}
    if kind == "map":
        return {**schema, "values": java_strings(schema["values"])}
    return schema


@cache
def _parsed(schema_json: str) -> tuple[Any, tuple[str, ...]]:
    parsed = json.loads(schema_json)
    return fastavro.parse_schema(parsed), tuple(f["name"] for f in parsed["fields"])


# ---- records of the `files` partition ----------------------------------------------------------


def partition_list_record(added: Iterable[str] = (), deleted: Iterable[str] = ()) -> MetadataRecord:
    """`__all_partitions__`: partitions added and deleted ('' = the non-partitioned table's `.`)."""
    files = {_partition_key(p): MetadataFileInfo(0, False) for p in added}
    files |= {_partition_key(p): MetadataFileInfo(0, True) for p in deleted}
    return MetadataRecord(ALL_PARTITIONS_KEY, MetadataRecordType.PARTITION_LIST, files)


def file_list_record(
    partition: str, added: Mapping[str, int] | None = None, deleted: Iterable[str] = ()
) -> MetadataRecord:
    """One data partition's files added (name -> size, > 0 as Hudi checks) and deleted."""
    files: dict[str, MetadataFileInfo] = {}
    for name, size in (added or {}).items():
        if size <= 0:
            raise ValueError(
                f"file {name!r} of partition {partition!r} has size {size}; must be > 0"
            )
        files[name] = MetadataFileInfo(size, False)
    files |= {name: MetadataFileInfo(0, True) for name in deleted}
    return MetadataRecord(_partition_key(partition), MetadataRecordType.FILE_LIST, files)


def _partition_key(partition: str) -> str:
    return partition or NON_PARTITIONED_NAME


# ---- encoding -----------------------------------------------------------------------------------


def encode_value(
    record: MetadataRecord, schema_json: str | None = None, *, file_name: str | None = None
) -> bytes:
    """The HFile cell value of `record` (schemaless Avro, `key` blanked; `_hoodie_file_name` set
    to `file_name` in base files, as Hudi's base-file writer does)."""
    schema, names = _parsed(schema_json or metadata_schema_json())
    datum = to_avro(record, names)
    if file_name is not None and "_hoodie_file_name" in datum:
        datum["_hoodie_file_name"] = file_name
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, datum)
    return out.getvalue()


def to_avro(record: MetadataRecord, field_names: Iterable[str]) -> dict[str, Any]:
    """The Avro datum of `record` for a writer schema with `field_names` (nested fields a schema
    lacks are ignored, so one datum fits the 0.14 and the 1.x schemas)."""
    datum: dict[str, Any] = dict.fromkeys(field_names)
    datum["key"] = ""  # Hudi keeps the key in the HFile row only
    datum["type"] = int(record.type)
    if record.files is not None:
        datum["filesystemMetadata"] = {
            name: {"size": info.size_bytes, "isDeleted": info.is_deleted}
            for name, info in record.files.items()
        }
    if record.bloom_filter is not None:
        bloom = record.bloom_filter
        datum["BloomFilterMetadata"] = {
            "type": bloom.type_code,
            "timestamp": bloom.instant_time,
            "bloomFilter": bloom.bloom_filter,
            "isDeleted": bloom.is_deleted,
        }
    if record.column_stats is not None:
        if "SecondaryIndexMetadata" in datum:  # the 1.x schemas: wrappers with a value type
            tight = record.type is MetadataRecordType.PARTITION_STATS
            datum["ColumnStatsMetadata"] = column_stats_datum_1x(
                record.key, record.column_stats, tight_bound=tight
            )
        else:
            datum["ColumnStatsMetadata"] = column_stats_datum(record.key, record.column_stats)
    if record.location is not None:
        datum["recordIndexMetadata"] = _location_datum(record.location)
    if record.secondary_is_deleted is not None:
        datum["SecondaryIndexMetadata"] = {"isDeleted": record.secondary_is_deleted}
    return datum


def column_stats_datum(key: str, stats: ColumnStats) -> dict[str, Any]:
    """`HoodieMetadataColumnStats` with min/max in Hudi 0.14's wrappers (`isTightBound` false for
    the 1.x schemas that have it)."""
    wrapper = stats.value_wrapper
    if wrapper is None:
        probe = stats.min_value if stats.min_value is not None else stats.max_value
        wrapper = None if probe is None else wrapper_for(probe)
    return {
        "fileName": stats.file_name,
        "columnName": stats.column_name,
        "minValue": _wrap(key, wrapper, stats.min_value),
        "maxValue": _wrap(key, wrapper, stats.max_value),
        "valueCount": stats.value_count,
        "nullCount": stats.null_count,
        "totalSize": stats.total_size_bytes,
        "totalUncompressedSize": stats.total_uncompressed_size_bytes,
        "isDeleted": stats.is_deleted,
        "isTightBound": False,
    }


def column_stats_datum_1x(key: str, stats: ColumnStats, *, tight_bound: bool) -> dict[str, Any]:
    """`HoodieMetadataColumnStats` as Hudi 1.2 writes it: each value in the wrapper of its
    primitive (`IntWrapper` days for a date, `LongWrapper` for a timestamp in its unit,
    `BytesWrapper` unscaled for a decimal) and `valueType` naming what it means; `isTightBound`
    true for `partition_stats` (its ranges are recomputed over the partition's latest files)."""
    if stats.value_type == V1_VALUE_TYPE:  # an index of version V1: Hudi 0.14's values
        return {**column_stats_datum(key, stats), "isTightBound": tight_bound, "valueType": None}
    if stats.min_value is None and stats.max_value is None:
        ordinal, info = _NULL_VALUE_TYPE, None  # a stub or no values: `ValueType.NULL`
    else:
        ordinal, info = stats.value_type or _value_type_of(stats)
    return {
        "fileName": stats.file_name,
        "columnName": stats.column_name,
        "minValue": _wrap_1x(key, ordinal, info, stats.min_value),
        "maxValue": _wrap_1x(key, ordinal, info, stats.max_value),
        "valueCount": stats.value_count,
        "nullCount": stats.null_count,
        "totalSize": stats.total_size_bytes,
        "totalUncompressedSize": stats.total_uncompressed_size_bytes,
        "isDeleted": stats.is_deleted,
        "isTightBound": tight_bound,
        "valueType": (
            "org.apache.hudi.avro.model.HoodieValueTypeInfo",
            {"typeOrdinal": ordinal, "additionalInfo": info},
        ),
    }


_NULL_VALUE_TYPE = 1
#: Hudi 1.x `ValueType` ordinals of the 0.14 wrappers (a wrapper says no more than this).
VALUE_TYPE_OF_WRAPPER = {
    "BooleanWrapper": 2,
    "IntWrapper": 3,
    "LongWrapper": 4,
    "FloatWrapper": 5,
    "DoubleWrapper": 6,
    "StringWrapper": 7,
    "BytesWrapper": 8,
    "DecimalWrapper": 10,
    "DateWrapper": 12,
    "TimestampMicrosWrapper": 16,
}
#: The wrapper record holding a 1.x value of each `ValueType` ordinal.
_WRAPPER_OF_VALUE_TYPE = {
    2: "BooleanWrapper",
    3: "IntWrapper",
    4: "LongWrapper",
    5: "FloatWrapper",
    6: "DoubleWrapper",
    7: "StringWrapper",
    8: "BytesWrapper",
    9: "BytesWrapper",
    10: "BytesWrapper",
    11: "StringWrapper",
    12: "IntWrapper",
    13: "IntWrapper",
    14: "LongWrapper",
    **dict.fromkeys(range(15, 21), "LongWrapper"),
}
#: Timestamp ordinals -> units per second (millis, micros, nanos; local ones 18-20).
_TIMESTAMP_UNITS = {15: 1000, 16: 10**6, 17: 10**9, 18: 1000, 19: 10**6, 20: 10**9}


def _value_type_of(stats: ColumnStats) -> tuple[int, str | None]:
    wrapper = stats.value_wrapper
    if wrapper is None:
        probe = stats.min_value if stats.min_value is not None else stats.max_value
        wrapper = "StringWrapper" if probe is None else wrapper_for(probe)
    ordinal = VALUE_TYPE_OF_WRAPPER.get(wrapper, 7)
    if ordinal == 10:
        values = [v for v in (stats.min_value, stats.max_value) if v is not None]
        scale = max((-int(Decimal(v).as_tuple().exponent) for v in values), default=0)
        return ordinal, f"{DECIMAL_WRAPPER_SCALE * 2},{scale}"
    return ordinal, None


def _wrap_1x(key: str, ordinal: int, info: str | None, value: Any) -> Any:
    if value is None:
        return None
    wrapper = _WRAPPER_OF_VALUE_TYPE.get(ordinal)
    if wrapper is None:
        raise ValueError(f"metadata record {key!r}: no wrapper for value type {ordinal}")
    if ordinal == 10:  # unscaled, big-endian two's complement (Java's BigInteger bytes)
        scale = int((info or "0,0").split(",")[1])
        unscaled = int(Decimal(value).scaleb(scale).to_integral_value())
        value = unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)
    elif ordinal == 12 and isinstance(value, dt.date):
        value = (value - dt.date(1970, 1, 1)).days
    elif ordinal in _TIMESTAMP_UNITS and isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        micros = (moment - _EPOCH) // dt.timedelta(microseconds=1)
        value = micros * _TIMESTAMP_UNITS[ordinal] // 10**6
    elif ordinal == 11:
        value = str(value)
    elif wrapper == "BytesWrapper":
        value = bytes(value)
    return f"org.apache.hudi.avro.model.{wrapper}", {"value": value}


def wrapper_for(value: Any) -> str:
    """The wrapper Hudi 0.14's `wrapValueIntoAvro` picks for a Python value of that Java type
    (ints as `LongWrapper`: pass `value_wrapper="IntWrapper"` for 32-bit columns)."""
    for kind, name in _WRAPPERS:
        if isinstance(value, kind):
            return name
    raise UnsupportedOperationError(
        f"column stats value {value!r} of type {type(value).__name__} has no Hudi wrapper"
    )


_WRAPPERS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "BooleanWrapper"),
    (int, "LongWrapper"),
    (float, "DoubleWrapper"),
    (str, "StringWrapper"),
    ((bytes, bytearray), "BytesWrapper"),
    (Decimal, "DecimalWrapper"),
    (dt.datetime, "TimestampMicrosWrapper"),
    (dt.date, "DateWrapper"),
)
#: `DecimalWrapper.value` is decimal(30, 15): values are stored rescaled to 15 places.
DECIMAL_WRAPPER_SCALE = 15
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _wrap(key: str, wrapper: str | None, value: Any) -> tuple[str, dict[str, Any]] | None:
    if value is None:
        return None
    if wrapper is None:
        raise ValueError(f"metadata record {key!r}: a column stats value needs a wrapper")
    if wrapper == "DateWrapper":
        value = (value - dt.date(1970, 1, 1)).days
    elif wrapper == "TimestampMicrosWrapper":
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        value = (moment - _EPOCH) // dt.timedelta(microseconds=1)
    elif wrapper == "DecimalWrapper":
        value = Decimal(value).quantize(Decimal(1).scaleb(-DECIMAL_WRAPPER_SCALE))
    elif wrapper == "BytesWrapper":
        value = bytes(value)
    return f"org.apache.hudi.avro.model.{wrapper}", {"value": value}


def _location_datum(location: RecordLocation) -> dict[str, Any]:
    file_id, _, suffix = location.file_id.rpartition("-")
    if not suffix.isdigit() or len(file_id) != 36:
        file_id, suffix = location.file_id, ""
    try:
        value = uuid.UUID(file_id).int
    except ValueError:
        return {  # Hudi's raw encoding: the UUID parts are -1
            "partitionName": location.partition_path,
            "fileIdHighBits": -1,
            "fileIdLowBits": -1,
            "fileIndex": -1,
            "fileId": location.file_id,
            "fileIdEncoding": FILE_ID_ENCODING_RAW,
            "instantTime": location.instant_time_ms,
        }
    high, low = value >> 64, value & (2**64 - 1)
    return {
        "partitionName": location.partition_path,
        "fileIdHighBits": high - 2**64 if high >= 2**63 else high,
        "fileIdLowBits": low - 2**64 if low >= 2**63 else low,
        "fileIndex": int(suffix) if suffix else MISSING_FILE_INDEX,
        "fileId": "",  # Hudi 1.x schemas: encoding 0, the id is in the UUID halves
        "instantTime": location.instant_time_ms,
        "fileIdEncoding": 0,
    }


def write_metadata_hfile(
    records: Iterable[MetadataRecord],
    *,
    base_file_name: str | None = None,
    schema_json: str | None = None,
    hudi_io: bool = False,
) -> bytes:
    """A metadata base file named `base_file_name`, or (None) an HFILE_DATA_BLOCK content, holding
    `records`. `hudi_io`: in the layout of Hudi 1.2's own HFile writer (table versions 8 and 9,
    `hfile.CREATE_TIME_TS` the time of writing), else HBase's (version 6)."""
    base_file = base_file_name is not None
    schema = schema_json or metadata_schema_json()
    ordered = sorted(records, key=lambda r: r.key.encode("utf-8"))
    keys = [r.key for r in ordered]
    if len(set(keys)) != len(keys):
        raise ValueError("metadata records must have unique keys within one HFile")
    encoded: dict[RecordLocation, bytes] = {}  # record index values repeat per file group

    def value(record: MetadataRecord) -> bytes:
        location = record.location
        if location is None or record.type is not MetadataRecordType.RECORD_INDEX:
            return encode_value(record, schema, file_name=base_file_name)
        if location not in encoded:
            encoded[location] = encode_value(record, schema, file_name=base_file_name)
        return encoded[location]

    items = [(r.key.encode("utf-8"), value(r)) for r in ordered]
    info: dict[bytes | str, bytes] = {"schema": schema.encode("utf-8")}
    metas: dict[bytes | str, bytes] = {}
    if base_file:
        bloom = new_bloom_filter()
        bloom.add_keys(keys)  # in key order, one vectorised pass
        metas["bloomFilter"] = bloom.serialize().encode("utf-8")
        info["bloomFilterTypeCode"] = bloom.type_code.value.encode("utf-8")
        info["minRecordKey"] = (keys[0] if keys else "").encode("utf-8")
        info["maxRecordKey"] = (keys[-1] if keys else "").encode("utf-8")
    return write_hfile(
        items,
        file_info=info,
        meta_blocks=metas,
        comparator_class=HFILE_MDT_COMPARATOR,
        block_size=METADATA_HFILE_BLOCK_SIZE,
        compression="GZ",
        hudi_io=hudi_io,
        create_time_ms=int(time.time() * 1000) if hudi_io else 0,
    )
