"""`pyhudi.metadata.validate` (Hudi's HoodieMetadataTableValidator) on the real Hudi tables with a
metadata table: each validates clean (latest and as of every instant); a copy changed outside Hudi
(a data file deleted, a file added, a log appended, a base file rewritten) reports exactly that."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from tests.helpers.metadata import WITH_METADATA

from pyhudi.codec.metadata_records import BloomFilterEntry, MetadataRecord, MetadataRecordType
from pyhudi.exceptions import TableNotFoundError
from pyhudi.metadata import MetadataTable, validate
from pyhudi.metadata.validation import bloom_filter_differences, file_name_id
from pyhudi.table.context import TableContext

CHECKED = ["partitions", "files", "latest_base_files", "latest_file_slices"]


@pytest.mark.parametrize("name", WITH_METADATA)
def test_every_real_metadata_table_validates_clean(hudi_tables, name):
    report = validate(str(hudi_tables[name]))
    assert report.ok, "\n".join(map(str, report.differences))
    assert list(report.checks) == [*CHECKED, "column_stats", "record_index"]
    assert report.skipped[-1] == "bloom_filters: the metadata table has no bloom_filters partition"


@pytest.mark.parametrize(
    "name",
    ["mor_avro__v8_trips_8i3u1d", "mor_avro__v9_txns_simple_meta", "cow__v9_txns_complex_meta"],
)
def test_validates_clean_as_of_every_completed_instant(hudi_tables, name):
    root = str(hudi_tables[name])
    instants = TableContext.open(root).active.timeline.completed().times()
    assert len(instants) >= 5
    for instant in instants:
        report = validate(root, as_of=instant)
        assert report.ok and report.as_of == instant, (instant, report.differences)


def _copy(hudi_tables, name: str, tmp_path: Path) -> Path:
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[name], root)
    return root


def test_a_deleted_data_file_is_reported(hudi_tables, tmp_path):
    root = _copy(hudi_tables, "cow__v9_txns_simple_meta", tmp_path)
    victim = sorted(root.glob("region=*/*.parquet"))[-1]
    file_id = victim.name.split("_")[0]
    victim.unlink()
    report = validate(str(root))
    assert [(d.partition, d.subject, d.detail) for d in report.of_check("files")] == [
        (victim.parent.name, victim.name, "in the metadata table, not on storage")
    ]
    assert {d.check for d in report.differences} >= {"files", "latest_file_slices"}
    assert all(file_id in str(d) for d in report.differences)


def test_an_added_data_file_is_reported(hudi_tables, tmp_path):
    root = _copy(hudi_tables, "cow__v9_txns_simple_meta", tmp_path)
    source = sorted(root.glob("region=*/*.parquet"))[-1]
    file_id = "0badf11e-0000-4000-8000-000000000000-0"
    added = source.with_name(file_id + source.name[source.name.index("_") :])
    shutil.copy(source, added)
    report = validate(str(root))
    assert [(d.subject, d.detail) for d in report.of_check("files")] == [
        (added.name, "on storage, not in the metadata table")
    ]
    assert [d.subject for d in report.of_check("latest_file_slices")] == [file_id]
    assert [d.subject for d in report.of_check("column_stats")] == [added.name]
    keys = pq.read_table(source, columns=["_hoodie_record_key"]).column(0).to_pylist()
    assert sorted(d.subject for d in report.of_check("record_index")) == sorted(keys)
    assert all(file_id in str(d) for d in report.differences)


def test_a_log_appended_outside_hudi_is_reported(hudi_tables, tmp_path):
    root = _copy(hudi_tables, "mor_avro__v8_trips_8i3u1d", tmp_path)
    ctx = TableContext.open(str(root))
    piece = next(s for s in ctx.view().latest_merged_file_slices() if s.log_files)
    last = piece.log_files[-1]
    match = re.fullmatch(r"(.*\.log\.)(\d+)(_.*)", last.file_name)
    assert match is not None
    name = f"{match[1]}{int(match[2]) + 1}{match[3]}"
    shutil.copy(root / last.relative_path, root / piece.partition_path / name)
    report = validate(str(root))
    assert [(d.check, d.subject) for d in report.differences] == [
        ("files", name),
        ("latest_file_slices", piece.file_id),
    ]
    assert name in report.differences[1].detail


def test_a_base_file_rewritten_outside_hudi_differs_in_column_stats(hudi_tables, tmp_path):
    root = _copy(hudi_tables, "cow__v9_txns_nonpart_meta", tmp_path)
    ctx = TableContext.open(str(root))
    base = ctx.view().latest_base_files()[0]
    path = root / base.relative_path
    table = pq.read_table(path)
    index = table.schema.get_field_index("amount")
    table = table.set_column(index, "amount", pc.add(table.column(index), pa.scalar(1e6)))
    pq.write_table(table, path)
    report = validate(str(root))
    stats = report.of_check("column_stats")
    assert [d.subject for d in stats] == [f"{base.file_name} column amount"]
    assert re.search(r"^min .* in the metadata table, .*; max ", stats[0].detail)
    assert {d.check for d in report.differences} <= {"files", "column_stats"}
    assert all(base.file_name in d.subject for d in report.differences)


def test_bloom_filter_keys_name_files_as_column_stats_keys_do(hudi_tables):
    """`file_name_id` (MD5, base64) is the file part of Hudi's column-stats and bloom-filter keys."""
    mdt = MetadataTable.open(TableContext.open(str(hudi_tables["cow__v9_txns_simple_meta"])))
    records = list(mdt.records("column_stats").values())
    assert records
    for record in records:
        assert record.column_stats is not None
        assert record.key.endswith(file_name_id(record.column_stats.file_name or ""))


def test_a_latest_base_file_without_a_bloom_filter_entry_is_reported(hudi_tables):
    ctx = TableContext.open(str(hudi_tables["cow__v9_txns_simple_meta"]))
    latest = ctx.view().latest_base_files()
    entry = BloomFilterEntry("DYNAMIC_V0", "0", b"", False)
    records = [
        MetadataRecord(
            "p" * 12 + file_name_id(b.file_name),
            MetadataRecordType.BLOOM_FILTER,
            bloom_filter=entry,
        )
        for b in latest[1:]
    ]
    found = bloom_filter_differences(records, latest)
    assert [(d.check, d.subject) for d in found] == [("bloom_filters", latest[0].file_name)]
    assert bloom_filter_differences(records[:0], latest[:0]) == []


def test_a_table_without_a_metadata_table_is_an_error_naming_it(hudi_tables):
    root = hudi_tables["cow__v9_txns_simple_nometa"]
    with pytest.raises(TableNotFoundError, match=f"{root}.*no metadata table"):
        validate(str(root))
