"""`HoodieMetadataRecord` decoding (real v8/v9 metadata tables) and Hudi's payload merge rules."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from pyhudi.codec.metadata_records import (
    ColumnStats,
    MetadataFileInfo,
    MetadataRecord,
    MetadataRecordType,
    data_partition,
    merge_file_lists,
    merge_records,
    record_index_file_id,
)
from pyhudi.exceptions import CorruptFileError
from pyhudi.metadata import MetadataTable
from pyhudi.table.context import TableContext

FILE_LIST = MetadataRecordType.FILE_LIST


def _files(**entries: int) -> dict[str, MetadataFileInfo]:
    """name=size; a negative size marks a tombstone."""
    return {n: MetadataFileInfo(max(s, 0), s < 0) for n, s in entries.items()}


def test_a_newer_file_list_adds_files_and_keeps_the_larger_size():
    merged = merge_file_lists(_files(a=10, b=5), _files(b=7, c=3))
    assert merged == _files(a=10, b=7, c=3)
    assert merge_file_lists(_files(a=10), _files(a=4)) == _files(a=10)  # sizes only grow


def test_a_tombstone_removes_a_listed_file_and_survives_when_nothing_was_listed():
    assert merge_file_lists(_files(a=10, b=5), _files(a=-1)) == _files(b=5)
    kept = merge_file_lists(_files(b=5), _files(a=-1))
    assert kept["a"].is_deleted  # carried to the base-file merge, which then drops `a`
    assert merge_file_lists(_files(a=10), kept) == _files(b=5)


def test_a_file_listed_again_after_its_tombstone_is_live():
    assert merge_file_lists(_files(a=-1), _files(a=8)) == _files(a=8)


def test_merging_records_of_different_types_is_refused_by_key():
    older = MetadataRecord("k", FILE_LIST, _files(a=1))
    newer = MetadataRecord("k", MetadataRecordType.RECORD_INDEX)
    with pytest.raises(CorruptFileError, match="'k'"):
        merge_records(older, newer)


def _stats(lo, hi, count, deleted=False):
    return ColumnStats("f.parquet", "c", lo, hi, count, 1, 100, 200, deleted)


def test_column_stats_merge_widens_the_range_and_adds_counts():
    older = MetadataRecord("k", MetadataRecordType.COLUMN_STATS, column_stats=_stats(3, 9, 10))
    newer = MetadataRecord("k", MetadataRecordType.COLUMN_STATS, column_stats=_stats(1, 5, 4))
    merged = merge_records(older, newer).column_stats
    assert merged is not None
    assert (merged.min_value, merged.max_value, merged.value_count, merged.null_count) == (
        1,
        9,
        14,
        2,
    )
    assert (merged.total_size_bytes, merged.total_uncompressed_size_bytes) == (200, 400)
    tombstone = MetadataRecord(
        "k", MetadataRecordType.COLUMN_STATS, column_stats=_stats(None, None, 0, True)
    )
    assert merge_records(older, tombstone) == tombstone


def test_record_index_file_id_is_the_uuid_of_the_signed_halves_plus_the_file_index():
    file_id = uuid.UUID("4b63f708-eab3-4bdf-ba38-ce90f356fce2")
    high, low = file_id.int >> 64, file_id.int & (2**64 - 1)
    signed = [v - 2**64 if v >= 2**63 else v for v in (high, low)]
    assert record_index_file_id(*signed, 0) == f"{file_id}-0"
    assert record_index_file_id(*signed, -1) == str(file_id)


def test_non_partitioned_tables_use_a_dot_in_the_files_partition():
    assert data_partition(".") == "" and data_partition("region=eu") == "region=eu"


def test_real_records_of_every_metadata_partition_decode(hudi_tables):
    mdt = MetadataTable.open(TableContext.open(str(hudi_tables["mor_avro__v9_txns_simple_meta"])))
    listed = {f for files in mdt.all_files().values() for f in files}
    stats = mdt.records("column_stats")
    assert stats and all(r.type is MetadataRecordType.COLUMN_STATS for r in stats.values())
    for record in stats.values():
        assert record.column_stats is not None and not record.column_stats.is_deleted
        assert record.column_stats.file_name in listed  # column stats of live files only
    by_column = {
        r.column_stats.column_name: r.column_stats.min_value
        for r in stats.values()
        if r.column_stats is not None
    }
    assert isinstance(by_column["txn_date"], dt.date)  # DateWrapper unwrapped
    assert isinstance(by_column["amount"], Decimal)  # DecimalWrapper unwrapped
    assert isinstance(by_column["txn_id"], str)
    partition_stats = mdt.records("partition_stats")
    assert {r.column_stats.file_name for r in partition_stats.values() if r.column_stats} == set(
        mdt.all_partitions()
    )
    secondary = mdt.records("secondary_index_merchant_idx")
    assert secondary and all(r.secondary_is_deleted is False for r in secondary.values())


@pytest.mark.parametrize("name", ["cow__v9_txns_simple_meta", "mor_avro__v8_trips_8i3u1d"])
def test_real_column_stats_equal_the_min_max_and_counts_of_the_base_files(hudi_tables, name):
    import pyarrow.parquet as pq

    root = hudi_tables[name]
    mdt = MetadataTable.open(TableContext.open(str(root)))
    where = {f: p for p, files in mdt.all_files().items() for f in files}
    checked = 0
    for record in mdt.records("column_stats").values():
        stats = record.column_stats
        assert stats is not None and stats.file_name is not None
        if not stats.file_name.endswith(".parquet"):
            continue
        column = pq.read_table(root / where[stats.file_name] / stats.file_name).column(
            stats.column_name
        )
        assert stats.null_count == column.null_count
        assert stats.value_count == len(column)
        values = [v for v in column.to_pylist() if v is not None]
        if values:
            assert (stats.min_value, stats.max_value) == (min(values), max(values)), stats
        checked += 1
    assert checked >= 50
