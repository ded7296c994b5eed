"""Partial-update log blocks (header IS_PARTIAL=true, table versions 8/9) are refused, not merged."""

from __future__ import annotations

import json

import pytest

from pyhudi.codec.log.block import LogBlock
from pyhudi.codec.log.writer import avro_data_block, encode_blocks
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.file_group.log_scan import InstantFilter, queued_blocks
from pyhudi.model.enums import HeaderMetadataType
from pyhudi.storage import Storage

INSTANT = "20260101000000000"
SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "_hoodie_record_key", "type": ["null", "string"]},
            {"name": "v", "type": ["null", "long"]},
        ],
    }
)


def _write_log(tmp_path, *, partial: str | None):
    block = avro_data_block(INSTANT, SCHEMA, [{"_hoodie_record_key": "k", "v": 1}])
    if partial is not None:
        header = {**block.header, HeaderMetadataType.IS_PARTIAL: partial}
        block = LogBlock(block.block_type, header, block.content)
    path = tmp_path / ".f1-0_20260101000000000.log.1_0-1-1"
    path.write_bytes(encode_blocks([block], table_version=8))
    return str(path)


def test_partial_update_block_is_an_error_naming_the_log_file(tmp_path):
    path = _write_log(tmp_path, partial="true")
    storage, _ = Storage.for_uri(str(tmp_path))
    with pytest.raises(UnsupportedOperationError) as caught:
        queued_blocks(storage, [path], InstantFilter(frozenset({INSTANT}), INSTANT))
    assert path in str(caught.value) and "IS_PARTIAL" in str(caught.value)


@pytest.mark.parametrize("partial", [None, "false"])
def test_full_record_blocks_are_queued(tmp_path, partial):
    path = _write_log(tmp_path, partial=partial)
    storage, _ = Storage.for_uri(str(tmp_path))
    (block,) = queued_blocks(storage, [path], InstantFilter(frozenset({INSTANT}), INSTANT))
    assert block.instant_time == INSTANT
