"""Writing metadata HFiles: byte for byte what Hudi wrote (the v8 fixture's files, record index and
secondary index HFiles, re-encoded from their decoded records), and round trips of `files` records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec.bloom import deserialize_bloom_filter
from pyhudi.codec.hfile import HFILE_MDT_COMPARATOR, HFileReader
from pyhudi.codec.log.reader import read_log_file
from pyhudi.codec.metadata_hfile import (
    file_list_record,
    metadata_schema_json,
    partition_list_record,
    write_metadata_hfile,
)
from pyhudi.codec.metadata_records import (
    BloomFilterEntry,
    ColumnStats,
    MetadataRecord,
    MetadataRecordType,
    RecordLocation,
    iter_hfile_records,
)
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.enums import LogBlockType


@pytest.fixture(scope="module")
def v8_metadata(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = unzip_table("mor_avro__v8_trips_8i3u1d", tmp_path_factory.mktemp("mdt-v8"))
    return root / ".hoodie" / "metadata"


def test_base_hfiles_are_rewritten_byte_for_byte(v8_metadata: Path) -> None:
    written = 0
    for folder in ("files", "record_index", "secondary_index_rider_idx"):
        for path in sorted((v8_metadata / folder).glob("*.hfile")):
            data = path.read_bytes()
            schema = HFileReader(data).file_info.text("schema")
            records = list(iter_hfile_records(data))
            rewritten = write_metadata_hfile(records, base_file_name=path.name, schema_json=schema)
            assert rewritten == data, path.name
            written += 1
    assert written >= 15


def test_hfile_log_block_contents_are_rewritten_byte_for_byte(v8_metadata: Path) -> None:
    written = 0
    for folder in ("files", "record_index"):
        for path in sorted((v8_metadata / folder).glob(".*.log.*")):
            for block in read_log_file(path):
                if block.block_type is not LogBlockType.HFILE_DATA_BLOCK:
                    continue
                records = list(iter_hfile_records(block.content, block.schema_json))
                rewritten = write_metadata_hfile(records, schema_json=block.schema_json)
                assert rewritten == block.content, path.name
                written += 1
    assert written >= 5


def test_files_records_round_trip_through_the_reader() -> None:
    records = [
        partition_list_record(["city=a", "city=b"], deleted=["city=old"]),
        file_list_record("city=a", {"f1.parquet": 10, ".f1_1.log.1_0-1-1": 3}, deleted=["gone"]),
        file_list_record("", {"x.parquet": 7}),
    ]
    data = write_metadata_hfile(records, base_file_name="files-0000_0-1-1_001.hfile")
    decoded = {r.key: r for r in iter_hfile_records(data)}
    assert set(decoded) == {"__all_partitions__", "city=a", "."}  # '' is written as '.'
    assert decoded["city=a"].live_files == {"f1.parquet": 10, ".f1_1.log.1_0-1-1": 3}
    assert decoded["city=a"].files is not None and decoded["city=a"].files["gone"].is_deleted
    assert decoded["__all_partitions__"].live_files == {"city=a": 0, "city=b": 0}
    reader = HFileReader(data)
    assert reader.comparator_class_name == HFILE_MDT_COMPARATOR and reader.compression == "GZ"
    info = reader.file_info
    assert (info.text("minRecordKey"), info.text("maxRecordKey")) == (".", "city=a")
    assert json.loads(info.text("schema") or "")["fields"][5]["name"] == "key"
    bloom = deserialize_bloom_filter(reader.meta_block("bloomFilter") or b"", "DYNAMIC_V0")
    assert all(bloom.might_contain(k) for k in decoded)


def test_a_log_block_content_has_only_the_schema_and_no_bloom_filter() -> None:
    data = write_metadata_hfile([file_list_record("p", {"a.parquet": 1})])
    reader = HFileReader(data)
    assert reader.meta_block_names == [] and reader.file_info.text("minRecordKey") is None
    assert reader.file_info.text("schema") == metadata_schema_json()


def test_record_index_entries_round_trip_with_uuid_and_raw_file_ids() -> None:
    locations = {
        "k1": RecordLocation("p=1", "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0", 1766264468078),
        "k2": RecordLocation("p=2", "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc", 1),
    }
    records = [
        MetadataRecord(k, MetadataRecordType.RECORD_INDEX, location=v) for k, v in locations.items()
    ]
    decoded = {r.key: r.location for r in iter_hfile_records(write_metadata_hfile(records))}
    assert decoded == locations


def test_bad_records_are_refused_before_anything_is_written() -> None:
    with pytest.raises(ValueError, match=r"'a\.parquet' of partition 'p' has size 0"):
        file_list_record("p", {"a.parquet": 0})
    with pytest.raises(ValueError, match="unique keys"):
        write_metadata_hfile([file_list_record("p"), file_list_record("p")])
    stats = ColumnStats("f", "c", object(), object(), 1, 0, 1, 1, False)
    with pytest.raises(UnsupportedOperationError, match=r"object.*no Hudi wrapper"):
        write_metadata_hfile(
            [MetadataRecord("k", MetadataRecordType.COLUMN_STATS, column_stats=stats)]
        )


def test_bloom_filter_and_secondary_index_records_round_trip() -> None:
    bloom = BloomFilterEntry("DYNAMIC_V0", "20240101000000000", b"\x01\x02", False)
    records = [
        MetadataRecord("bf", MetadataRecordType.BLOOM_FILTER, bloom_filter=bloom),
        MetadataRecord("\x00$k", MetadataRecordType.SECONDARY_INDEX, secondary_is_deleted=True),
    ]
    decoded = {r.key: r for r in iter_hfile_records(write_metadata_hfile(records))}
    assert decoded["bf"] == records[0]
    # the 0.14 schema has no SecondaryIndexMetadata: the type survives, the flag does not
    assert decoded["\x00$k"].type is MetadataRecordType.SECONDARY_INDEX


def test_metadata_schema_strings_and_maps_are_java_strings_as_hudi_writes_them() -> None:
    """Hudi 0.15's `HoodieMetadataRecord.getClassSchema()` marks its 8 strings and its map
    `avro.java.string: String`; without it Hudi 0.15 fails to read pyhudi's metadata log blocks
    (`HoodieMetadataPayload`: `Utf8` cannot be cast to `String`)."""
    from pyhudi.codec.metadata_hfile import JAVA_STRING, metadata_schema_json

    schema = json.loads(metadata_schema_json())
    marked: list[str] = []
    unmarked: list[str] = []

    def walk(node: object, in_meta_field: bool) -> None:
        if node == "string" and not in_meta_field:
            unmarked.append("string")
        if isinstance(node, list):
            for branch in node:
                walk(branch, in_meta_field)
        elif isinstance(node, dict):
            if node.get("type") in ("string", "map"):
                (marked if node.get(JAVA_STRING) == "String" else unmarked).append(node["type"])
            for field in node.get("fields", []):
                walk(field["type"], field["name"].startswith("_hoodie_"))
            for key in ("items", "values"):
                if key in node:
                    walk(node[key], in_meta_field)

    walk(schema, False)
    assert unmarked == []
    assert sorted(marked) == ["map"] + ["string"] * 8
