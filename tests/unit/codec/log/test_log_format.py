"""Log format (reference §5) against the log files Hudi wrote in the fixture tables."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.fixtures import table_names, unzip_table

from pyhudi.codec.file_names import LOG_FILE_RE, parse_log_file
from pyhudi.codec.log import avro_content, delete_content, hfile_content, parquet_content
from pyhudi.codec.log import block as log_block
from pyhudi.codec.log import reader as log_reader
from pyhudi.codec.log.reader import (
    LocatedBlock,
    iter_blocks,
    iter_blocks_reverse,
    read_blocks,
    read_log_file,
)
from pyhudi.codec.log.writer import encode_blocks, rollback_block
from pyhudi.exceptions import CorruptFileError, UnsupportedVersionError
from pyhudi.model.enums import HeaderMetadataType as H
from pyhudi.model.enums import LogBlockType as T

# §5.1 worked example: the rollback command block of mor_parquet__v6_nonpartitioned_rollback.
ROLLBACK_BLOCK = bytes.fromhex(
    "234855444923" "000000000000005b" "00000001" "00000000" "00000003"
    "00000000" "00000011" + b"20250126040936578".hex() + "00000003" "00000001" + b"0".hex()
    + "00000001" "00000011" + b"20250126040826878".hex()
    + "0000000000000000" "00000000" "0000000000000061"
)  # fmt: skip


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hudi-tables")
    for name in table_names():
        unzip_table(name, root)
    return root


@pytest.fixture(scope="session")
def log_files(tables: Path) -> list[Path]:
    files = sorted(p for p in tables.rglob("*") if p.is_file() and LOG_FILE_RE.match(p.name))
    assert len(files) > 20
    return files


def _only_log_file(tables: Path, table: str, name_part: str = "") -> Path:
    (path,) = [p for p in (tables / table).rglob(".*.log.*") if name_part in p.name]
    return path


def _sample_file(tables: Path) -> tuple[bytes, list[LocatedBlock]]:
    """One log file holding four kinds of fixture blocks: command, Avro data, delete, parquet."""
    parts = [
        ROLLBACK_BLOCK,
        _only_log_file(tables, "mor_avro__v6_trips_8i1u").read_bytes(),
        _only_log_file(tables, "mor_avro__v6_trips_8i3d").read_bytes(),
        _only_log_file(tables, "mor_parquet__v6_nonpartitioned").read_bytes(),
    ]
    data = b"".join(parts)
    blocks = read_blocks(data)
    assert [b.block_type for b in blocks] == [
        T.COMMAND_BLOCK,
        T.AVRO_DATA_BLOCK,
        T.DELETE_BLOCK,
        T.PARQUET_DATA_BLOCK,
    ]
    return data, blocks


def _valid(blocks: list[LocatedBlock]) -> list[tuple[int, int, T]]:
    return [(b.offset, b.size_bytes, b.block_type) for b in blocks if not b.is_corrupt]


def _corrupt(blocks: list[LocatedBlock]) -> list[tuple[int, int]]:
    return [(b.offset, b.end_offset) for b in blocks if b.is_corrupt]


# ---- golden fixture bytes --------------------------------------------------------------------


def test_every_fixture_log_file_decodes_and_reencodes_byte_for_byte(log_files: list[Path]) -> None:
    for path in log_files:
        data = path.read_bytes()
        blocks = read_log_file(path)
        assert blocks and not any(b.is_corrupt for b in blocks), path
        assert blocks[-1].end_offset == len(data)
        # Header order is kept as read, so re-encoding reproduces Java's HashMap order too.
        assert encode_blocks([b.to_log_block() for b in blocks], table_version=8) == data, path
        for block in blocks:
            _check_content_decodes(block)


def _check_content_decodes(block: LocatedBlock) -> None:
    assert block.format_version == 1 and block.footer == {}
    if block.block_type is T.AVRO_DATA_BLOCK:
        records = avro_content.decode_avro_records(block.content, block.schema_json or "")
        assert len(records) == avro_content.avro_record_count(block.content)
        assert avro_content.encode_avro_records(block.schema_json or "", records) == block.content
    elif block.block_type is T.DELETE_BLOCK:
        assert (
            delete_content.encode_delete_records(
                delete_content.decode_delete_records(block.content)
            )
            == block.content
        )
    elif block.block_type is T.PARQUET_DATA_BLOCK:
        assert parquet_content.decode_parquet_block(
            block.content
        ).num_rows == parquet_content.parquet_record_count(block.content)
    elif block.block_type is T.HFILE_DATA_BLOCK:
        records = hfile_content.decode_hfile_block(block.content, block.schema_json)
        keys = [r["key"] for r in records]
        assert keys == sorted(keys) and all(keys)
    else:
        assert block.block_type is T.COMMAND_BLOCK and block.content == b""


def test_rollback_block_matches_the_worked_example(tables: Path) -> None:
    path = _only_log_file(tables, "mor_parquet__v6_nonpartitioned_rollback", ".log.2_")
    assert path.read_bytes() == ROLLBACK_BLOCK
    block = log_reader.decode_block(ROLLBACK_BLOCK)
    assert block.block_type is T.COMMAND_BLOCK and block.content == b""
    assert list(block.header) == [H.INSTANT_TIME, H.COMMAND_BLOCK_TYPE, H.TARGET_INSTANT_TIME]
    assert (block.instant_time, block.target_instant_time) == (
        "20250126040936578",
        "20250126040826878",
    )
    assert block.command_type == 0
    assert block.encode() == ROLLBACK_BLOCK
    # pyhudi's builder writes ascending ordinals: same entries, same size, another order.
    ours = rollback_block("20250126040936578", "20250126040826878")
    assert list(ours.header) == [H.INSTANT_TIME, H.TARGET_INSTANT_TIME, H.COMMAND_BLOCK_TYPE]
    assert dict(ours.header) == dict(block.header) and len(ours.encode()) == 105
    assert log_reader.decode_block(ours.encode()) == ours


def test_delete_block_of_v6_trips_8i3d_holds_three_natural_order_deletes(tables: Path) -> None:
    (block,) = read_log_file(_only_log_file(tables, "mor_avro__v6_trips_8i3d"))
    assert block.block_type is T.DELETE_BLOCK and block.instant_time == "20250618054714114"
    assert block.schema_json is not None  # Hudi puts the writer schema on delete blocks too
    deletes = delete_content.decode_delete_records(block.content)
    assert [d.record_key for d in deletes] == [
        "e96c4396-3fad-413a-a942-4cb36106d721",
        "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "334e26e9-8355-45cc-97c6-c31daf0df330",
    ]
    assert {d.partition_path for d in deletes} == {"city=san_francisco"}
    assert all(
        d.is_natural_order and d.ordering_wrapper is delete_content.OrderingWrapper.INT
        for d in deletes
    )
    assert block.content[:8] == struct.pack(">ii", 3, len(block.content) - 8)
    assert b"city=san_francisco\x04\x00" in block.content  # union branch 2 (zigzag 04), int 0
    assert (
        delete_content.encode_delete_records(
            [delete_content.DeleteRecord(d.record_key, d.partition_path) for d in deletes]
        )
        == block.content
    )


def test_avro_data_block_of_v6_trips_8i1u_holds_the_updated_trip(tables: Path) -> None:
    path = _only_log_file(tables, "mor_avro__v6_trips_8i1u")
    (block,) = read_log_file(path)
    assert block.block_type is T.AVRO_DATA_BLOCK and block.location.content_length == 240
    assert block.content[:12] == struct.pack(">iii", 3, 1, 228)
    (record,) = avro_content.decode_avro_records(block.content, block.schema_json or "")
    log_file = parse_log_file("", path.name)
    assert log_file is not None
    assert record["_hoodie_file_name"] == log_file.file_id  # log records carry only the fileId
    assert record["_hoodie_commit_time"] == block.instant_time == "20250331030645735"
    assert record["_hoodie_record_key"] == record["uuid"] == "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"
    assert (record["rider"], record["driver"], record["fare"]) == ("rider-D", "driver-L", 25.0)


def test_parquet_blocks_of_mor_parquet_tables_are_whole_gzip_parquet_files(
    log_files: list[Path],
) -> None:
    blocks = [
        (path, block)
        for path in log_files
        if "mor_parquet__" in str(path)
        for block in read_log_file(path)
        if block.block_type is T.PARQUET_DATA_BLOCK
    ]
    assert len(blocks) == 6
    for path, block in blocks:
        assert block.content[:4] == block.content[-4:] == b"PAR1"
        table = parquet_content.decode_parquet_block(block.content)
        assert table.num_rows == 1
        assert table.column_names[:5] == [
            "_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
            "_hoodie_partition_path", "_hoodie_file_name",
        ]  # fmt: skip
        assert table.column("_hoodie_commit_time").to_pylist() == [block.instant_time]
        log_file = parse_log_file("", path.name)
        assert log_file is not None
        assert table.column("_hoodie_file_name").to_pylist() == [log_file.file_id]
        meta = pq.ParquetFile(io.BytesIO(block.content)).metadata
        assert meta.row_group(0).column(0).compression == "GZIP"


def test_hfile_blocks_of_the_v8_metadata_table_decode(log_files: list[Path]) -> None:
    hfile_blocks = [
        b for p in log_files for b in read_log_file(p) if b.block_type is T.HFILE_DATA_BLOCK
    ]
    assert len(hfile_blocks) >= 20
    records = [
        r for b in hfile_blocks for r in hfile_content.decode_hfile_block(b.content, b.schema_json)
    ]
    assert any(r["key"] == "__all_partitions__" for r in records)


# ---- corruption ------------------------------------------------------------------------------


def test_truncated_file_keeps_the_blocks_before_the_cut(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    last = blocks[-1]
    for cut in (last.offset + 3, last.offset + 10, last.offset + 500, len(data) - 1):
        damaged = data[:cut]
        got = read_blocks(damaged)
        assert _valid(got) == _valid(blocks[:-1])
        assert _corrupt(got) == [(last.offset, cut)]
        assert list(iter_blocks_reverse(damaged)) == got[::-1]


def test_bit_flipped_block_size_marks_only_that_block_corrupt(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    middle = blocks[1]
    damaged = bytearray(data)
    damaged[middle.offset + 12] ^= 0x10  # inside blockSize
    got = read_blocks(bytes(damaged))
    assert _valid(got) == _valid([blocks[0], *blocks[2:]])
    assert _corrupt(got) == [(middle.offset, middle.end_offset)]
    assert "trailer" in (got[1].corrupt_reason or "")
    assert list(iter_blocks_reverse(bytes(damaged))) == got[::-1]


def test_trailer_mismatch_and_broken_magic_are_corrupt_ranges(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    for position in (blocks[2].end_offset - 1, blocks[2].offset + 2):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        got = read_blocks(bytes(damaged))
        assert _corrupt(got) == [(blocks[2].offset, blocks[2].end_offset)]
        assert len(_valid(got)) == 3
        assert list(iter_blocks_reverse(bytes(damaged))) == got[::-1]


def test_garbage_appended_or_between_blocks_is_its_own_corrupt_range(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    garbage = b"\x00garbage#HUD"
    appended = read_blocks(data + garbage)
    assert _valid(appended) == _valid(blocks)
    assert _corrupt(appended) == [(len(data), len(data) + len(garbage))]
    split = blocks[1].end_offset
    between = data[:split] + garbage + data[split:]
    got = read_blocks(between)
    assert _corrupt(got) == [(split, split + len(garbage))]
    assert [b.offset for b in got if not b.is_corrupt] == [
        0,
        blocks[1].offset,
        split + len(garbage),
        blocks[3].offset + len(garbage),
    ]
    assert [b.content for b in got if not b.is_corrupt] == [b.content for b in blocks]
    for damaged in (data + garbage, between):
        assert list(iter_blocks_reverse(damaged)) == read_blocks(damaged)[::-1]


def test_strict_mode_marks_a_block_followed_by_garbage_corrupt_like_hudi(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    split = blocks[1].end_offset
    got = read_blocks(data[:split] + b"garbage" + data[split:], strict=True)
    assert _corrupt(got) == [
        (blocks[1].offset, split + 7)
    ]  # Java loses the block before the garbage
    assert len(_valid(got)) == 3


def test_torn_magic_at_end_of_file_is_reported(tables: Path) -> None:
    data, _ = _sample_file(tables)
    got = read_blocks(data + b"#HU")
    assert _corrupt(got) == [(len(data), len(data) + 3)]
    assert got[-1].corrupt_reason == "EOF inside MAGIC"


def test_reverse_reading_equals_forward_reading_reversed(
    log_files: list[Path], tables: Path
) -> None:
    data, blocks = _sample_file(tables)
    assert list(iter_blocks_reverse(data)) == blocks[::-1]
    for path in log_files:
        raw = path.read_bytes()
        assert list(iter_blocks_reverse(raw)) == read_blocks(raw)[::-1]


def test_log_format_version_zero_is_a_clear_error() -> None:
    block = bytearray(rollback_block("20250126040936578", "20250126040826878").encode())
    block[14:18] = b"\x00\x00\x00\x00"
    with pytest.raises(UnsupportedVersionError, match="version 0"):
        read_blocks(bytes(block))


def test_unknown_format_version_or_block_type_is_corrupt() -> None:
    good = rollback_block("20250126040936578", "20250126040826878").encode()
    for position, value in ((17, 2), (21, 2), (21, 9)):
        damaged = bytearray(good)
        damaged[position] = value
        (got,) = read_blocks(bytes(damaged))
        assert got.is_corrupt and got.size_bytes == len(good)


# ---- reading from files, laziness --------------------------------------------------------------


class _CountingFile(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


def test_file_object_source_reads_headers_only_until_content_is_asked(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    big = log_block.LogBlock(
        T.AVRO_DATA_BLOCK, {H.INSTANT_TIME: "20250126040936578"}, b"\x07" * (4 << 20)
    )
    file = _CountingFile(data + big.encode())
    lazy = list(iter_blocks(file))
    assert lazy[:-1] == blocks and not lazy[-1].is_corrupt
    assert file.bytes_read < len(data) + (64 << 10)  # the 4 MiB content was not read
    before = file.bytes_read
    assert lazy[-1].content == big.content
    assert file.bytes_read - before == len(big.content)
    assert lazy[-2].read_content_range(0, 4) == b"PAR1"
    eager = list(iter_blocks(_CountingFile(data), read_content=True))
    assert [b.content for b in eager] == [b.content for b in blocks]


def test_every_block_carries_its_location(tables: Path) -> None:
    data, blocks = _sample_file(tables)
    for block in blocks:
        loc = block.location
        assert data[loc.offset : loc.offset + 6] == log_block.MAGIC
        assert data[loc.content_offset : loc.content_offset + loc.content_length] == block.content
        (trailer,) = struct.unpack(">q", data[loc.end_offset - 8 : loc.end_offset])
        assert trailer == loc.size_bytes - 8


# ---- encoding ----------------------------------------------------------------------------------


def test_encode_block_refuses_header_ordinals_a_v6_reader_rejects() -> None:
    header = {H.INSTANT_TIME: "20250126040936578", H.IS_PARTIAL: "true"}
    with pytest.raises(ValueError, match="IS_PARTIAL"):
        log_block.encode_block(T.AVRO_DATA_BLOCK, header, b"")
    assert (
        log_reader.decode_block(
            log_block.encode_block(T.AVRO_DATA_BLOCK, header, b"", table_version=8)
        ).header
        == header
    )
    with pytest.raises(ValueError, match="CORRUPT_BLOCK"):
        log_block.encode_block(T.CORRUPT_BLOCK, {}, b"")


def test_decode_block_rejects_anything_but_one_valid_block() -> None:
    good = rollback_block("20250126040936578", "20250126040826878").encode()
    for bad in (good + good, good[:-1], b""):
        with pytest.raises(CorruptFileError):
            log_reader.decode_block(bad)


def test_avro_content_versions_one_to_three_share_a_layout_and_later_ones_are_refused() -> None:
    schema = '{"type":"record","name":"r","fields":[{"name":"a","type":["null","string"]}]}'
    content = avro_content.encode_avro_records(schema, [{"a": "x"}, {"a": None}])
    for version in (1, 2):
        old = struct.pack(">i", version) + content[4:]
        assert avro_content.decode_avro_records(old, schema) == [{"a": "x"}, {"a": None}]
    with pytest.raises(UnsupportedVersionError):
        avro_content.decode_avro_records(struct.pack(">i", 4) + content[4:], schema)
    with pytest.raises(CorruptFileError):
        avro_content.decode_avro_records(content[:-1], schema)


def test_legacy_version_zero_avro_content_decodes() -> None:
    schema = '{"type":"record","name":"r","fields":[{"name":"a","type":"long"}]}'
    records = avro_content.encode_avro_records(schema, [{"a": 7}])[8:]  # length-prefixed records
    deflated = zlib.compress(schema.encode())
    legacy = struct.pack(">i", len(deflated)) + deflated + struct.pack(">i", 1) + records
    assert avro_content.decode_legacy_avro_content(legacy) == (schema, [{"a": 7}])


def test_java_serialized_delete_blocks_are_refused_clearly() -> None:
    for version in (1, 2):
        with pytest.raises(UnsupportedVersionError, match="Java-serialized"):
            delete_content.decode_delete_records(struct.pack(">ii", version, 0))


def test_empty_parquet_block_has_no_content() -> None:
    empty = pa.table({"a": pa.array([], pa.int64())})
    assert parquet_content.encode_parquet_records(empty) == b""
    assert parquet_content.decode_parquet_block(b"", schema=empty.schema).equals(empty)
    assert parquet_content.parquet_record_count(b"") == 0


def test_avro_encoding_without_the_compiled_writer_gives_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    schema = '{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"b","type":"string"}]}'
    records = [{"a": i, "b": "x" * i} for i in range(20)]
    fast = avro_content.encode_avro_records(schema, records)
    monkeypatch.setattr(avro_content, "_writer_writes_once", lambda: False)
    assert avro_content.encode_avro_records(schema, iter(records)) == fast
    assert avro_content.decode_avro_records(fast, schema) == records
