"""The metadata table reader against every real Hudi table that has one (table versions 8 and 9):
its `files` listing equals the committed data files on disk and holds every file hudi-rs reads."""

from __future__ import annotations

import shutil
from pathlib import Path

import hudi
import pytest
from tests.helpers.metadata import WITH_METADATA, committed_data_files
from tests.helpers.oracle import hudi_rs_table

from pyhudi.codec.metadata_records import MetadataRecordType
from pyhudi.exceptions import CorruptFileError, TableNotFoundError, UnsupportedOperationError
from pyhudi.metadata import MetadataTable, has_metadata_table
from pyhudi.table.context import TableContext


@pytest.mark.parametrize("name", WITH_METADATA)
def test_files_partition_lists_exactly_the_committed_data_files(hudi_tables, name):
    root = hudi_tables[name]
    mdt = MetadataTable.open(TableContext.open(str(root)))
    disk = committed_data_files(root)
    assert mdt.all_partitions() == sorted(disk)
    assert mdt.all_files() == disk


@pytest.mark.parametrize("name", WITH_METADATA)
def test_files_partition_holds_every_file_slice_hudi_rs_reads(hudi_tables, name):
    root = hudi_tables[name]
    mdt = MetadataTable.open(TableContext.open(str(root)))
    slices = hudi.HudiTable(str(root)).get_file_slices()
    assert slices
    for piece in slices:
        listed = mdt.files_in(piece.partition_path)
        assert listed[piece.base_file_name] == piece.base_file_size
        for log_name, size in zip(piece.log_file_names, piece.log_file_sizes, strict=True):
            assert listed[log_name] == size


@pytest.mark.parametrize("name", WITH_METADATA)
def test_record_index_holds_one_live_entry_per_row_hudi_rs_reads(hudi_tables, name):
    root = hudi_tables[name]
    mdt = MetadataTable.open(TableContext.open(str(root)))
    if "record_index" not in mdt.partitions():
        pytest.fail(f"{name} was expected to have a record index")
    keys = set(hudi_rs_table(str(root)).column("_hoodie_record_key").to_pylist())
    index = mdt.records("record_index")
    assert set(index) == keys
    groups = {(s.partition_path, s.file_id) for s in hudi.HudiTable(str(root)).get_file_slices()}
    for record in index.values():
        assert record.type is MetadataRecordType.RECORD_INDEX and record.location is not None
        assert (record.location.partition_path, record.location.file_id) in groups


@pytest.mark.parametrize(
    "name",
    ["mor_avro__v8_trips_8i3u1d", "mor_avro__v9_txns_simple_meta", "cow__v9_txns_nonpart_meta"],
)
def test_files_partition_as_of_every_instant_lists_the_files_committed_by_then(hudi_tables, name):
    root = hudi_tables[name]
    ctx = TableContext.open(str(root))
    instants = ctx.active.timeline.completed().times()
    assert len(instants) >= 5
    for instant in instants:
        mdt = MetadataTable.open(ctx, as_of=instant)
        assert mdt.all_files() == committed_data_files(root, instant), instant


def test_a_data_write_that_did_not_complete_is_not_listed(hudi_tables, tmp_path):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables["mor_avro__v9_txns_simple_meta"], root)
    timeline = root / ".hoodie" / "timeline"
    last_write = sorted(timeline.glob("*_*.deltacommit"))[-1]
    instant = last_write.name.split("_")[0]
    before = MetadataTable.open(TableContext.open(str(root))).all_files()
    last_write.unlink()  # the data write is left inflight; its metadata deltacommit completed
    after = MetadataTable.open(TableContext.open(str(root))).all_files()
    dropped = {(p, f) for p, fs in before.items() for f in fs} - {
        (p, f) for p, fs in after.items() for f in fs
    }
    assert dropped and all(instant in f for _, f in dropped)
    assert after == committed_data_files(root)


def test_a_table_without_metadata_table_is_reported_by_path(hudi_tables):
    root = hudi_tables["cow__v9_txns_simple_nometa"]
    ctx = TableContext.open(str(root))
    assert not has_metadata_table(ctx)
    with pytest.raises(TableNotFoundError, match="no metadata table"):
        MetadataTable.open(ctx)


def test_summaries_count_file_groups_files_and_merged_records(hudi_tables):
    mdt = MetadataTable.open(TableContext.open(str(hudi_tables["mor_avro__v8_trips_8i3u1d"])))
    summaries = {s.name: s for s in mdt.summaries()}
    assert set(summaries) == set(mdt.partitions())
    files = summaries["files"]
    assert len(files.file_groups) == 1 and files.base_file_count == 1
    assert files.record_count == 1 + len(
        mdt.all_partitions()
    )  # the partition list + one per partition
    assert len(summaries["record_index"].file_groups) == 10
    root = Path(mdt.table.base_path)
    for summary in summaries.values():
        on_disk = sum(
            (root / p).stat().st_size
            for g in summary.file_groups
            for p in ([g.base_file] if g.base_file else []) + list(g.log_files)
        )
        assert summary.size_bytes == on_disk


def test_a_corrupt_metadata_base_file_is_an_error_naming_it(hudi_tables, tmp_path):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables["mor_avro__v8_trips_8i3u1d"], root)
    base = max((root / ".hoodie" / "metadata" / "files").glob("*.hfile"))  # the latest slice
    data = bytearray(base.read_bytes())
    data[60] ^= 0xFF  # inside the first data block: its CRC32C no longer matches
    base.write_bytes(bytes(data))
    mdt = MetadataTable.open(TableContext.open(str(root)))
    with pytest.raises(CorruptFileError, match=rf"{base.name}.*checksum"):
        mdt.all_partitions()


def test_a_metadata_table_without_a_files_partition_is_not_used_for_listing(hudi_tables, tmp_path):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables["mor_avro__v8_trips_8i3u1d"], root)
    ctx = TableContext.open(str(root))
    ctx.update_properties({"hoodie.table.metadata.partitions": "record_index"})
    mdt = MetadataTable.open(ctx)
    assert mdt.partitions() == ["record_index"] and len(mdt.records("record_index")) == 6
    with pytest.raises(UnsupportedOperationError, match=r"no 'files' partition.*record_index"):
        mdt.all_partitions()
