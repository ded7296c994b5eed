"""HFile v3 codec: the HBase-written HFiles of the v8 MOR fixture's metadata table, and writer round
trips shaped like Hudi's bootstrap index."""

from __future__ import annotations

import dataclasses
import io
import json
import struct

import fastavro
import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec import avro_schemas
from pyhudi.codec.hfile import (
    HFILE_BOOTSTRAP_COMPARATOR,
    HFILE_MDT_COMPARATOR,
    HFileReader,
    HFileTrailer,
    write_hfile,
)
from pyhudi.codec.hfile.blocks import (
    BLOCK_HEADER_SIZE,
    CHECKSUM_CRC32C,
    MAGIC_DATA,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_ROOT_INDEX,
    crc32c,
    decode_vlong,
    encode_vlong,
    read_block,
)
from pyhudi.codec.protobuf_lite import decode_varint, encode_varint, to_signed64
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError

FIXTURE_TABLE = "mor_avro__v8_trips_8i3u1d"
HFILE_BLOCK_TYPE = 4
RESERVED_INFO = (b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY")


def _hfile_log_blocks(data: bytes) -> list[bytes]:
    """Contents of the HFILE_DATA_BLOCKs of a log file (reference §5.1)."""
    out, pos = [], 0
    while pos < len(data):
        assert data[pos : pos + 6] == b"#HUDI#"
        (block_size,) = struct.unpack_from(">q", data, pos + 6)
        _, block_type, count = struct.unpack_from(">iii", data, pos + 14)
        q = pos + 26
        for _ in range(count):
            q += 8 + struct.unpack_from(">ii", data, q)[1]
        (content_length,) = struct.unpack_from(">q", data, q)
        if block_type == HFILE_BLOCK_TYPE:
            out.append(data[q + 8 : q + 8 + content_length])
        pos += 14 + block_size
    return out


@pytest.fixture(scope="session")
def real_hfiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """Every HFile of the fixture's metadata table: base files and HFILE log-block contents."""
    base_path = unzip_table(FIXTURE_TABLE, tmp_path_factory.mktemp("hfile-fixture"))
    mdt = base_path / ".hoodie" / "metadata"
    files = {str(f.relative_to(mdt)): f.read_bytes() for f in sorted(mdt.glob("*/*.hfile"))}
    for log in sorted(mdt.glob("*/.*.log.*")):
        for i, content in enumerate(_hfile_log_blocks(log.read_bytes())):
            files[f"{log.relative_to(mdt)}#{i}"] = content
    assert sum(".log." in n for n in files) >= 20 and sum(n.endswith(".hfile") for n in files) >= 20
    return files


def _user_info(reader: HFileReader) -> dict[bytes, bytes]:
    return {
        k: v
        for k, v in reader.file_info.items()
        if not k.startswith(b"hfile.") and k not in RESERVED_INFO
    }


# --- real files ----------------------------------------------------------------------------------


def test_real_hfiles_read_sorted_and_complete(real_hfiles: dict[str, bytes]) -> None:
    for name, data in real_hfiles.items():
        reader = HFileReader(data)
        items = list(reader.items())
        keys = [k for k, _ in items]
        assert keys == sorted(set(keys)), name
        assert len(items) == reader.entry_count == len(reader), name
        assert reader.file_info.last_key == (keys[-1] if keys else None)
        assert reader.comparator_class_name == HFILE_MDT_COMPARATOR
        assert reader.compression == "GZ"
        assert reader.trailer.num_data_index_levels == 1
        assert (reader.trailer.major_version, reader.trailer.minor_version) == (3, 3)
        assert reader.file_info.includes_mvcc and not reader.file_info.includes_tags
        assert reader.file_info.text("schema") is not None


def test_real_hfiles_file_info_keys(real_hfiles: dict[str, bytes]) -> None:
    hbase = {
        b"KEY_VALUE_VERSION",
        b"MAX_MEMSTORE_TS_KEY",
        b"hfile.AVG_KEY_LEN",
        b"hfile.AVG_VALUE_LEN",
        b"hfile.CREATE_TIME_TS",
        b"hfile.LASTKEY",
    }
    base_extra = {b"bloomFilterTypeCode", b"maxRecordKey", b"minRecordKey", b"schema"}
    for name, data in real_hfiles.items():
        reader = HFileReader(data)
        expected = hbase | ({b"schema"} if ".log." in name else base_extra)
        if reader.entry_count == 0:
            expected.discard(b"hfile.LASTKEY")
        assert set(reader.file_info) == expected, name
        assert reader.file_info.create_time_ms == 0
        assert reader.meta_block_names == ([] if ".log." in name else [b"bloomFilter"])


def test_real_empty_hfiles(real_hfiles: dict[str, bytes]) -> None:
    empty = [HFileReader(d) for d in real_hfiles.values() if HFileReader(d).entry_count == 0]
    assert empty  # HBase writes -1 offsets, no data block and no LASTKEY for an empty file
    for reader in empty:
        assert reader.trailer.first_data_block_offset == reader.trailer.last_data_block_offset == -1
        assert reader.trailer.data_index_count == reader.trailer.uncompressed_data_index_size == 0
        assert reader.get(b"x") is None and list(reader.items()) == []


def test_real_hfile_blocks_use_crc32c_chunks(real_hfiles: dict[str, bytes]) -> None:
    data = real_hfiles["files/files-0000-0_0-955-2690_00000000000000000.hfile"]
    block = read_block(data, 0, 1)
    assert block.header.magic == MAGIC_DATA
    assert block.header.checksum_type == CHECKSUM_CRC32C
    assert block.header.bytes_per_checksum == 16384
    end = block.header.on_disk_data_size_with_header
    assert data[end : end + 4] == struct.pack(">I", crc32c(data[:end]))


def test_files_partition_values_decode_as_metadata_records(real_hfiles: dict[str, bytes]) -> None:
    seen = 0
    for name, data in real_hfiles.items():
        reader = HFileReader(data)
        schema = fastavro.parse_schema(json.loads(reader.file_info.text("schema") or ""))
        for key, value in reader.items():
            record = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
            assert record["key"] == ""  # Hudi leaves the key to the HFile row
            if name.startswith("files/"):
                assert record["type"] == (1 if key == b"__all_partitions__" else 2), name
                assert record["filesystemMetadata"] is not None
                seen += 1
    assert seen >= 20


def test_real_get_finds_every_key_and_misses_absent_keys(real_hfiles: dict[str, bytes]) -> None:
    for name, data in real_hfiles.items():
        reader = HFileReader(data)
        items = list(reader.items())
        for key, value in items:
            assert reader.get(key) == value, name
            assert reader.get(key + b"\x00") is None
        assert reader.get(b"") is None
        assert reader.get(b"\xff" * 4) is None
        if items:
            first = items[0][0]
            expected = [i for i in items if i[0].startswith(first)]
            assert list(reader.keys_with_prefix(first)) == expected


def test_real_prefix_lookup_in_files_partition(real_hfiles: dict[str, bytes]) -> None:
    reader = HFileReader(real_hfiles["files/files-0000-0_23-1133-3302_20251220210130942.hfile"])
    assert [k for k, _ in reader.keys_with_prefix("city=")] == [
        b"city=chennai",
        b"city=san_francisco",
        b"city=sao_paulo",
    ]
    assert list(reader.keys_with_prefix(b"city=x")) == []


def test_writer_reproduces_real_hfiles_byte_for_byte(real_hfiles: dict[str, bytes]) -> None:
    for name, data in real_hfiles.items():
        reader = HFileReader(data)
        metas = {n: reader.meta_block(n) or b"" for n in reader.meta_block_names}
        rewritten = write_hfile(
            reader.items(),
            file_info=_user_info(reader),
            meta_blocks=metas,
            comparator_class=reader.comparator_class_name,
            compression=reader.compression,
            block_size=1024 * 1024,
        )
        assert rewritten == data, name


def test_corrupt_block_checksum_is_detected(real_hfiles: dict[str, bytes]) -> None:
    data = bytearray(real_hfiles["files/files-0000-0_0-955-2690_00000000000000000.hfile"])
    data[BLOCK_HEADER_SIZE + 20] ^= 0x01
    reader = HFileReader(bytes(data))  # the load-on-open blocks are intact
    with pytest.raises(CorruptFileError, match="checksum"):
        list(reader.items())


# --- writer --------------------------------------------------------------------------------------


#: `HoodieBootstrapFilePartitionInfo` without its nested `HoodieFileStatus`, so that fastavro can
#: write it stand-alone (the values are opaque to the HFile codec).
_FILE_PARTITION_INFO = {
    "type": "record",
    "name": "HoodieBootstrapFilePartitionInfo",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "bootstrapPartitionPath", "type": ["null", "string"], "default": None},
        {"name": "partitionPath", "type": ["null", "string"], "default": None},
    ],
}


def _container(schema: dict[str, object], record: dict[str, object]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, schema, [record], codec="null")
    return out.getvalue()


def _bootstrap_items(n: int) -> list[tuple[bytes, bytes]]:
    items = []
    for i in range(n):
        partition = f"date=2024-01-{i % 7 + 1:02d}"
        file_id = f"{i:08x}-0000-4000-8000-{i:012x}"
        info = {
            "version": 1,
            "bootstrapPartitionPath": partition,
            "partitionPath": partition,
        }
        key = f"part={partition};fileid={file_id}".encode()
        items.append((key, _container(_FILE_PARTITION_INFO, info)))
    return sorted(items)


def _index_info(num_keys: int) -> bytes:
    info = {
        "version": 1,
        "bootstrapBasePath": "/src/table",
        "createdTimestamp": 1700000000000,
        "numKeys": num_keys,
    }
    return avro_schemas.encode_container("HoodieBootstrapIndexInfo", info)


def test_bootstrap_index_round_trip() -> None:
    items = _bootstrap_items(40)
    data = write_hfile(items, file_info={"INDEX_INFO": _index_info(40)})
    reader = HFileReader(data)
    assert list(reader.items()) == items
    assert reader.comparator_class_name == HFILE_BOOTSTRAP_COMPARATOR
    assert reader.compression == "NONE"
    assert reader.trailer.entry_count == 40 and reader.trailer.data_index_count == 1
    info = avro_schemas.decode_container(reader.file_info[b"INDEX_INFO"])
    assert info["numKeys"] == 40 and info["bootstrapBasePath"] == "/src/table"
    assert set(reader.file_info) == {
        b"INDEX_INFO",
        b"KEY_VALUE_VERSION",
        b"MAX_MEMSTORE_TS_KEY",
        b"hfile.AVG_KEY_LEN",
        b"hfile.AVG_VALUE_LEN",
        b"hfile.CREATE_TIME_TS",
        b"hfile.LASTKEY",
    }
    assert reader.file_info.avg_key_len == sum(len(k) + 12 for k, _ in items) // 40
    key = items[17][0]
    decoded = avro_schemas.decode_container(reader.get(key.decode()) or b"")
    assert decoded["partitionPath"] == key.decode().split(";")[0].removeprefix("part=")
    assert reader.get(key + b"x") is None
    assert len(list(reader.keys_with_prefix("part=date=2024-01-03;"))) == 6


def test_cells_are_hbase_keyvalues() -> None:
    data = write_hfile([(b"part=a", b"v")])
    payload = read_block(data, 0, 2).payload
    key = struct.pack(">H", 6) + b"part=a" + b"\x00" + struct.pack(">q", 2**63 - 1) + b"\x04"
    assert payload == struct.pack(">ii", len(key), 1) + key + b"v" + b"\x00"


def test_multi_block_file_and_block_chain() -> None:
    items = [(f"key-{i:05d}".encode(), b"x" * (i % 50)) for i in range(3000)]
    data = write_hfile(items, block_size=1024)
    reader = HFileReader(data)
    assert reader.data_block_count == reader.trailer.data_index_count > 30
    assert reader.trailer.num_data_index_levels == 1
    assert list(reader.items()) == items
    for key, value in items[::37]:
        assert reader.get(key) == value
    assert reader.get(b"key-00000a") is None
    assert len(list(reader.keys_with_prefix(b"key-012"))) == 100
    offset, previous = 0, -1
    while offset < reader.trailer.load_on_open_data_offset:
        block = read_block(data, offset, 2)
        assert block.header.magic == MAGIC_DATA and block.header.prev_block_offset == previous
        assert block.header.uncompressed_size_without_header < 1024 + 100
        previous, offset = offset, block.end
    assert previous == reader.trailer.last_data_block_offset


@pytest.mark.parametrize(("block_size", "levels"), [(1024, 2), (64, 3)])
def test_multi_level_index(block_size: int, levels: int) -> None:
    items = [(f"row-{i:06d}".encode(), str(i).encode()) for i in range(4000)]
    data = write_hfile(items, block_size=block_size, index_chunk_size=1024)
    reader = HFileReader(data)
    assert reader.trailer.num_data_index_levels == levels
    assert list(reader.items()) == items
    for key, value in items[::101]:
        assert reader.get(key) == value
    assert reader.get(b"row-0000005") is None
    magics = {read_block(data, reader.trailer.load_on_open_data_offset, 2).header.magic}
    offset = 0
    while offset < reader.trailer.load_on_open_data_offset:
        block = read_block(data, offset, 2)
        magics.add(block.header.magic)
        offset = block.end
    expected = {MAGIC_DATA, MAGIC_LEAF_INDEX, MAGIC_ROOT_INDEX}
    assert magics == (expected | {MAGIC_INTERMEDIATE_INDEX} if levels == 3 else expected)


def test_gz_compression_round_trip() -> None:
    items = _bootstrap_items(200)
    plain = write_hfile(items, block_size=4096)
    data = write_hfile(items, block_size=4096, compression="GZ")
    reader = HFileReader(data)
    assert reader.compression == "GZ" and reader.trailer.compression_codec == 1
    assert list(reader.items()) == items
    assert len(data) < len(plain)
    assert data[BLOCK_HEADER_SIZE : BLOCK_HEADER_SIZE + 10] == bytes.fromhex("1f8b0800000000000000")


def test_empty_file() -> None:
    data = write_hfile([], file_info={b"INDEX_INFO": _index_info(0)})
    reader = HFileReader(data)
    assert reader.entry_count == 0 and list(reader.items()) == []
    assert reader.get(b"part=x") is None and list(reader.keys_with_prefix(b"")) == []
    assert reader.file_info.last_key is None and b"hfile.LASTKEY" not in reader.file_info
    assert reader.trailer.first_data_block_offset == -1
    assert read_block(data, 0, 2).header.magic == MAGIC_ROOT_INDEX
    assert reader.trailer.load_on_open_data_offset == 0


def test_unsorted_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="sorted"):
        write_hfile([(b"b", b""), (b"a", b"")])


def test_duplicate_keys_stay_in_one_block() -> None:
    items = [(b"a", b"1" * 100)] + [(b"b", bytes([i])) for i in range(50)] + [(b"c", b"")]
    reader = HFileReader(write_hfile(items, block_size=16))
    assert list(reader.items()) == items
    assert reader.data_block_count == 3
    assert reader.get(b"b") == b"\x00"
    assert len(list(reader.keys_with_prefix(b"b"))) == 50


def test_meta_blocks_round_trip() -> None:
    data = write_hfile([(b"k", b"v")], meta_blocks={"zeta": b"z" * 10, "bloomFilter": b"bits"})
    reader = HFileReader(data)
    assert reader.meta_block_names == [b"bloomFilter", b"zeta"]
    assert reader.meta_block("bloomFilter") == b"bits" and reader.meta_block(b"zeta") == b"z" * 10
    assert reader.meta_block("nope") is None


def test_reserved_file_info_and_unsupported_codecs_are_rejected() -> None:
    with pytest.raises(ValueError, match="reserved"):
        write_hfile([], file_info={"hfile.LASTKEY": b""})
    with pytest.raises(ValueError, match="unknown"):
        write_hfile([], compression="BROTLI")
    with pytest.raises(UnsupportedOperationError, match="SNAPPY"):
        write_hfile([], compression="snappy")
    data = write_hfile([(b"k", b"v")])
    snappy = dataclasses.replace(HFileTrailer.decode(data), compression_codec=3)
    with pytest.raises(UnsupportedOperationError, match="SNAPPY"):
        HFileReader(data[:-4096] + snappy.encode())


def test_not_an_hfile() -> None:
    with pytest.raises(CorruptFileError):
        HFileReader(b"\x00" * 4092 + b"\x03\x00\x00\x03")


# --- primitives ----------------------------------------------------------------------------------


def test_crc32c_known_vector() -> None:
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


@pytest.mark.parametrize(
    "value", [0, 1, -1, 127, -112, 128, -113, 255, 256, 2**31 - 1, -(2**63), 2**63 - 1]
)
def test_hadoop_vlong_round_trip(value: int) -> None:
    encoded = encode_vlong(value)
    assert decode_vlong(encoded + b"\xaa", 0) == (value, len(encoded))
    assert (len(encoded) == 1) == (-112 <= value <= 127)


def test_protobuf_varint_negative_is_ten_bytes() -> None:
    encoded = encode_varint(-1)
    assert len(encoded) == 10
    value, end = decode_varint(encoded)
    assert to_signed64(value) == -1 and end == 10


# --- Hudi 1.1 (`hudi-io` writer) HFiles of the v9 metadata tables ----------------------------------

V9_TABLES = (
    "mor_avro__v9_txns_simple_meta",
    "cow__v9_txns_nonpart_meta",
    "cow__v9_lance_txns_simple",
)


@pytest.fixture(scope="session")
def v9_hfiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for table in V9_TABLES:
        mdt = unzip_table(table, tmp_path_factory.mktemp("hfile-v9")) / ".hoodie" / "metadata"
        files |= {f"{table}/{f.relative_to(mdt)}": f.read_bytes() for f in mdt.glob("*/*.hfile")}
        for log in sorted(mdt.glob("*/.*.log.*")):
            for i, content in enumerate(_hfile_log_blocks(log.read_bytes())):
                files[f"{table}/{log.relative_to(mdt)}#{i}"] = content
    assert len(files) >= 100
    return files


def test_hudi_io_hfiles_read_sorted_complete_and_seekable(v9_hfiles: dict[str, bytes]) -> None:
    for name, data in v9_hfiles.items():
        reader = HFileReader(data)
        items = list(reader.items())
        keys = [k for k, _ in items]
        assert keys == sorted(set(keys)) and len(items) == reader.entry_count, name
        assert reader.file_info.last_key == (keys[-1] if keys else None), name
        for key, value in items:
            assert reader.get(key) == value, name
        assert reader.get(b"\xff" * 4) is None


def test_hudi_io_hfiles_differ_from_hbase_ones_as_documented(v9_hfiles: dict[str, bytes]) -> None:
    """Hudi 1.1's writer: NULL checksum type, prevBlockOffset -1, minor version 0, row-only index
    keys and LASTKEY, AVG_KEY_LEN of the row bytes, a real CREATE_TIME_TS."""
    for name, data in v9_hfiles.items():
        reader = HFileReader(data)
        assert reader.trailer.minor_version == 0 and reader.compression == "GZ", name
        block = read_block(data, reader.trailer.load_on_open_data_offset, 1)
        assert block.header.magic == MAGIC_ROOT_INDEX and block.header.checksum_type == 0
        assert block.header.prev_block_offset == -1
        if reader.entry_count:
            rows = [k for k, _ in reader.items()]
            last = reader.file_info[b"hfile.LASTKEY"]
            assert last == struct.pack(">H", len(rows[-1])) + rows[-1]  # no timestamp, no type
            assert reader.file_info.avg_key_len == sum(map(len, rows)) // len(rows)
            assert reader.file_info.create_time_ms > 0
