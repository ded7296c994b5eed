"""`inspect_log` / `verify_paths`: the reports behind `pyhudi log inspect` and `pyhudi log verify`."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec.log import avro_content, delete_content
from pyhudi.codec.log import block as log_block
from pyhudi.codec.log.inspect import LogFileReport, find_log_files, inspect_log, verify_paths
from pyhudi.codec.log.writer import (
    avro_data_block,
    delete_block,
    encode_blocks,
    parquet_data_block,
    rollback_block,
)
from pyhudi.model.enums import HeaderMetadataType as H
from pyhudi.model.enums import LogBlockType as T

TABLES = (
    "mor_avro__v6_trips_8i1u",
    "mor_avro__v6_trips_8i3d",
    "mor_parquet__v6_nonpartitioned_rollback",
)
SCHEMA = (
    '{"type":"record","name":"r","namespace":"hoodie.t","fields":[{"name":"k","type":"string"}]}'
)
ROLLBACK = rollback_block("20250126040936578", "20250126040826878")


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect-tables")
    for name in (*TABLES, "mor_avro__v8_trips_8i3u1d"):
        unzip_table(name, root)
    return root


def _one(tables: Path, table: str, name_part: str = "") -> Path:
    (path,) = [p for p in find_log_files(tables / table) if name_part in Path(p).name]
    return Path(path)


def _json_round_trip(report: LogFileReport) -> dict:
    return json.loads(json.dumps(report.to_dict()))


def test_rollback_file_reports_its_command_block(tables: Path) -> None:
    report = inspect_log(_one(tables, "mor_parquet__v6_nonpartitioned_rollback", ".log.2_"))
    assert report.is_valid and report.size_bytes == 105 and report.corrupt_ranges == ()
    (block,) = report.blocks
    assert (block.offset, block.size_bytes, block.format_version, block.block_type) == (
        0,
        105,
        1,
        "COMMAND_BLOCK",
    )
    assert block.target_instant_time == "20250126040826878"
    assert block.header == {
        "INSTANT_TIME": "20250126040936578",
        "COMMAND_BLOCK_TYPE": "0",
        "TARGET_INSTANT_TIME": "20250126040826878",
    }
    assert report.log_file is not None and report.log_file.version == 2
    as_dict = _json_round_trip(report)
    assert as_dict["log_file"]["write_token"] == "1-0-1" and as_dict["is_valid"] is True
    assert "COMMAND_BLOCK" in report.format_text() and "valid" in report.format_text()


def test_avro_block_report_counts_records_and_summarises_the_schema(tables: Path) -> None:
    path = _one(tables, "mor_avro__v6_trips_8i1u")
    (block,) = inspect_log(path).blocks
    assert (
        block.block_type == "AVRO_DATA_BLOCK" and block.record_count == 1 and block.records is None
    )
    assert block.header["SCHEMA"] == "hoodie.v6_trips_8i1u.v6_trips_8i1u_record (11 fields)"
    (with_records,) = inspect_log(path.read_bytes(), with_records=True).blocks
    assert with_records.records is not None
    assert with_records.records[0]["_hoodie_record_key"] == "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"


def test_delete_block_report_lists_deletes(tables: Path) -> None:
    report = inspect_log(_one(tables, "mor_avro__v6_trips_8i3d"), with_records=True)
    (block,) = report.blocks
    assert block.delete_count == 3 and block.record_count is None
    records = _json_round_trip(report)["blocks"][0]["records"]
    assert records[0] == {
        "record_key": "e96c4396-3fad-413a-a942-4cb36106d721",
        "partition_path": "city=san_francisco",
        "ordering_value": 0,
        "ordering_wrapper": "IntWrapper",
    }


def test_parquet_records_become_json_values(tables: Path) -> None:
    path = _one(tables, "mor_parquet__v6_nonpartitioned_rollback", ".log.1_")
    report = inspect_log(path, with_records=True)
    assert report.blocks[0].record_count == 1
    (record,) = _json_round_trip(report)["blocks"][0]["records"]
    assert record["decimalField"] == "12345.67890" and record["dateField"] == "2023-04-01"
    assert record["binaryField"] == "YmluYXJ5IGRhdGE="  # base64 of b"binary data"
    assert "records" not in inspect_log(path).blocks[0].to_dict()


def test_hfile_blocks_report_record_counts(tables: Path) -> None:
    path = _one(tables, "mor_avro__v8_trips_8i3u1d", ".files-0000-0_20251220210123755")
    (cheap,) = inspect_log(path).blocks
    (decoded,) = inspect_log(path, decode_content=True).blocks
    assert cheap.block_type == "HFILE_DATA_BLOCK" and cheap.record_count == decoded.record_count > 0


def test_corrupt_ranges_make_the_report_invalid() -> None:
    good = encode_blocks([ROLLBACK, avro_data_block("20250126040936578", SCHEMA, [{"k": "a"}])])
    damaged = good[:110] + b"junk" + good[110:-3]
    report = inspect_log(damaged)
    assert not report.is_valid
    assert [b.block_type for b in report.blocks] == ["COMMAND_BLOCK", "CORRUPT_BLOCK"]
    assert report.corrupt_ranges == ((105, len(damaged)),)
    assert "CORRUPT_BLOCK bytes [105," in report.format_text() and "INVALID" in report.format_text()
    assert _json_round_trip(report)["corrupt_ranges"] == [[105, len(damaged)]]


def test_damaged_content_in_a_well_framed_block_is_found_when_decoding() -> None:
    content = bytearray(avro_content.encode_avro_records(SCHEMA, [{"k": "abc"}]))
    content[12] = 0x7F  # string length beyond the record
    block = log_block.LogBlock(
        T.AVRO_DATA_BLOCK, {H.INSTANT_TIME: "20250126040936578", H.SCHEMA: SCHEMA}, bytes(content)
    )
    data = block.encode()
    assert inspect_log(data).is_valid  # the frame and the record count are fine
    report = inspect_log(data, decode_content=True)
    assert not report.is_valid and report.corrupt_ranges == ()
    assert "CorruptFileError" in (report.blocks[0].content_error or "")


def test_legacy_delete_block_is_unsupported_not_invalid() -> None:
    block = log_block.LogBlock(
        T.DELETE_BLOCK, {H.INSTANT_TIME: "20250126040936578"}, struct.pack(">ii", 2, 0)
    )
    report = inspect_log(block.encode())
    assert report.is_valid and "Java-serialized" in (report.blocks[0].unsupported or "")


def test_verify_paths_searches_folders_including_hidden_ones(tmp_path: Path) -> None:
    hidden = tmp_path / ".hoodie" / "metadata" / "files"
    hidden.mkdir(parents=True)
    table = pa.table({"k": ["a"]})
    good = encode_blocks(
        [
            parquet_data_block("20250126040936578", SCHEMA, table),
            delete_block("20250126040936578", [delete_content.DeleteRecord("a", "")]),
        ]
    )
    (hidden / ".f-0_20250126040936578.log.1_0-1-2").write_bytes(good)
    (tmp_path / ".g-0_20250126040936578.log.1_0-1-2").write_bytes(good[:-5])
    (tmp_path / "not-a-log.txt").write_bytes(b"x")
    reports = verify_paths([tmp_path])
    assert [Path(r.path or "").name[:3] for r in reports] == [".g-", ".f-"]
    assert [r.is_valid for r in reports] == [False, True]
    single = verify_paths([tmp_path / "not-a-log.txt"])
    assert len(single) == 1 and not single[0].is_valid
