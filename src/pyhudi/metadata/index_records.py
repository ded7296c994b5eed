"""`bloom_filters` and `record_index` records, as Hudi 0.14 builds them.

* bloom filters (`convertMetadataToBloomFilterRecords`, `createBloomFilterMetadataRecord`): one
  record per written base file, key `PartitionIndexID + FileIndexID`, holding the footer's bloom
  filter as the UTF-8 bytes of its serialized (Base64) text, its type code and the writing instant;
  a deleted base file gets a tombstone (type '', no bytes, `isDeleted`).
* record index (`createRecordIndexUpdate`): one record per inserted key (key = the record key)
  with the partition, the file id as UUID high/low bits + file index (`-N` suffix; -1 when absent;
  a non-UUID id is stored raw, encoding 1) and the instant as epoch ms (the timeline's time zone);
  deleted keys go into a DELETE block (`createRecordIndexDelete` is an empty payload). A key goes to
  file group `file_group_index(key, n)` (`record-index-NNNN-0`), n from
  `record_index_file_group_count` when the partition is initialised.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from pyhudi.codec.bloom import FOOTER_BLOOM_KEY, FOOTER_TYPE_CODE_KEY, LEGACY_FOOTER_BLOOM_KEY
from pyhudi.codec.log.delete_content import DeleteRecord, OrderingWrapper
from pyhudi.codec.metadata_keys import bloom_filter_key, file_group_index
from pyhudi.codec.metadata_records import (
    BloomFilterEntry,
    MetadataRecord,
    MetadataRecordType,
    RecordLocation,
)
from pyhudi.timeline.instant_time import parse_instant

RECORD_INDEX_PARTITION = "record_index"
BLOOM_FILTERS_PARTITION = "bloom_filters"
COLUMN_STATS_PARTITION = "column_stats"
#: `MetadataPartitionType.RECORD_INDEX.getFileIdPrefix()`.
RECORD_INDEX_FILE_ID_PREFIX = "record-index-"


# ---- bloom filters -------------------------------------------------------------------------------
def bloom_filter_record(
    partition: str, file_name: str, instant_time: str, serialized: str, type_code: str
) -> MetadataRecord:
    """The `bloom_filters` record of a base file whose footer holds `serialized` (Base64 text)."""
    entry = BloomFilterEntry(type_code, instant_time, serialized.encode("utf-8"), False)
    return MetadataRecord(
        bloom_filter_key(partition, file_name), MetadataRecordType.BLOOM_FILTER, bloom_filter=entry
    )


def footer_bloom_filter_record(
    partition: str, file_name: str, instant_time: str, footer_metadata: dict[bytes, bytes] | None
) -> MetadataRecord | None:
    """The record from a parquet footer's key-value metadata (None: the file has no bloom filter,
    and Hudi writes no record for it)."""
    meta = footer_metadata or {}
    text = meta.get(FOOTER_BLOOM_KEY.encode()) or meta.get(LEGACY_FOOTER_BLOOM_KEY.encode())
    if not text:
        return None
    code = (meta.get(FOOTER_TYPE_CODE_KEY.encode()) or b"SIMPLE").decode("utf-8")
    return bloom_filter_record(partition, file_name, instant_time, text.decode("utf-8"), code)


def deleted_bloom_filter_record(
    partition: str, file_name: str, instant_time: str
) -> MetadataRecord:
    """The tombstone of a deleted (cleaned or replaced) base file."""
    entry = BloomFilterEntry("", instant_time, b"", True)
    return MetadataRecord(
        bloom_filter_key(partition, file_name), MetadataRecordType.BLOOM_FILTER, bloom_filter=entry
    )


# ---- record index --------------------------------------------------------------------------------
def instant_epoch_ms(instant_time: str, *, utc: bool = True) -> int:
    """Hudi's `parseDateFromInstantTime(t).getTime()`: the instant in epoch milliseconds."""
    moment = parse_instant(instant_time, utc=utc)
    return int(moment.timestamp()) * 1000 + moment.microsecond // 1000


def record_index_records(
    partition: str,
    file_id: str,
    instant_time: str,
    keys: Iterable[str] | pa.Array | pa.ChunkedArray,
    *,
    utc: bool = True,
) -> list[MetadataRecord]:
    """`record_index` records of keys written into file group `file_id` of `partition` at
    `instant_time` (inserts; an update that stays in its file group needs none). `utc`: the
    table's `hoodie.table.timeline.timezone` is UTC (else instants are local times)."""
    if isinstance(keys, pa.Array | pa.ChunkedArray):
        keys = keys.to_pylist()
    location = RecordLocation(partition, file_id, instant_epoch_ms(instant_time, utc=utc))
    return [MetadataRecord(key, MetadataRecordType.RECORD_INDEX, location=location) for key in keys]


def record_index_delete_records(keys: Iterable[str]) -> list[DeleteRecord]:
    """The DELETE-block entries removing `keys` from the record index (Hudi writes each as
    (key, `record_index`, ordering value 0 as an `IntWrapper`))."""
    return [DeleteRecord(key, RECORD_INDEX_PARTITION, 0, OrderingWrapper.INT) for key in keys]


@dataclass(frozen=True)
class RecordIndexSizing:
    """`hoodie.metadata.record.index.*` file group sizing (Hudi 0.14's defaults)."""

    min_file_group_count: int = 10
    max_file_group_count: int = 10000
    growth_factor: float = 2.0
    max_file_group_size_bytes: int = 1024 * 1024 * 1024
    #: `RECORD_INDEX_AVERAGE_RECORD_SIZE`: bytes per record index entry in an HFile.
    average_record_size: int = 48


def record_index_file_group_count(
    record_count: int, sizing: RecordIndexSizing | None = None
) -> int:
    """Hudi's `estimateFileGroupCount` for the record index of a table with `record_count` keys."""
    s = sizing or RecordIndexSizing()
    if s.min_file_group_count == s.max_file_group_count and s.min_file_group_count != 0:
        return s.min_file_group_count
    expected = math.ceil(record_count * s.growth_factor)
    per_group = s.max_file_group_size_bytes // max(s.average_record_size, 1)
    estimated = expected // per_group
    if estimated >= s.max_file_group_count:
        return s.max_file_group_count
    if estimated <= s.min_file_group_count:
        return s.min_file_group_count
    return max(1, estimated)


def record_index_file_group_id(index: int) -> str:
    """The file id of record-index file group `index` (`record-index-0003-0`)."""
    return f"{RECORD_INDEX_FILE_ID_PREFIX}{index:04d}-0"


def group_by_file_group(
    records: Iterable[MetadataRecord], file_group_count: int
) -> dict[int, list[MetadataRecord]]:
    """Metadata records by the file group (index) their key hashes to."""
    groups: dict[int, list[MetadataRecord]] = {}
    for record in records:
        groups.setdefault(file_group_index(record.key, file_group_count), []).append(record)
    return groups
