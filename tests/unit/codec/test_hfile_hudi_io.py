"""HFiles in the layout of Hudi's own `hudi-io` writer (Hudi 1.1+, what pyhudi writes into the
metadata table of table versions 8 and 9): every HFile of a Hudi-written v9 table's metadata table
(base files and HFILE log blocks of `files`, `column_stats`, `partition_stats`, `record_index`,
empty ones included) is re-encoded byte for byte from its cells, FileInfo and meta blocks."""

from __future__ import annotations

import struct

import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec.hfile import HFileReader, write_hfile
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.model.enums import LogBlockType

FIXTURE_TABLE = "mor_avro__v9_txns_simple_meta"
#: FileInfo entries the writer makes itself.
WRITER_INFO = (b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY")


@pytest.fixture(scope="module")
def v9_hfiles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base_path = unzip_table(FIXTURE_TABLE, tmp_path_factory.mktemp("hudi-io"))
    mdt = base_path / ".hoodie" / "metadata"
    found = {str(f.relative_to(mdt)): f.read_bytes() for f in sorted(mdt.glob("*/*.hfile"))}
    for log in sorted(mdt.glob("*/.*.log.*")):
        with log.open("rb") as handle:
            for i, block in enumerate(iter_blocks(handle)):
                if block.block_type is LogBlockType.HFILE_DATA_BLOCK:
                    found[f"{log.relative_to(mdt)}#{i}"] = bytes(block.content)
    assert len(found) >= 100
    return found


def test_hudi_io_writer_reproduces_hudi_written_hfiles(v9_hfiles: dict[str, bytes]) -> None:
    empty = 0
    for name, data in v9_hfiles.items():
        reader = HFileReader(data)
        assert reader.trailer.minor_version == 0, name  # hudi-io's, not HBase's (3)
        info = {
            k: v
            for k, v in reader.file_info.items()
            if not k.startswith(b"hfile.") and k not in WRITER_INFO
        }
        (created,) = struct.unpack(">q", reader.file_info[b"hfile.CREATE_TIME_TS"])
        rewritten = write_hfile(
            reader.items(),
            file_info=info,
            meta_blocks={n: reader.meta_block(n) or b"" for n in reader.meta_block_names},
            comparator_class=reader.comparator_class_name,
            compression=reader.compression,
            block_size=1024 * 1024,
            hudi_io=True,
            create_time_ms=created,
        )
        assert rewritten == data, name
        empty += reader.entry_count == 0
    assert empty, "no empty HFile in the fixture"
