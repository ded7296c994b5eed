"""Building the blocks Hudi writers emit, and the bytes of a new log file (reference §5.4, §5.7, §5.12).

| writer action                 | blocks (header keys, ascending ordinals)                         |
|-------------------------------|------------------------------------------------------------------|
| deltacommit, Avro log format  | AVRO_DATA `{INSTANT_TIME, SCHEMA}` [+ DELETE, same header]        |
| deltacommit, parquet log      | PARQUET_DATA `{INSTANT_TIME, SCHEMA}` [+ DELETE]                  |
| rollback of instant T         | COMMAND `{INSTANT_TIME, TARGET_INSTANT_TIME = T, COMMAND_BLOCK_TYPE = "0"}` |

A log file is the blocks' bytes concatenated. pyhudi never appends to an existing log file: each
write creates the next log version of the file group, as Hudi does on storage without append
(local disk, S3, GCS, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from pyhudi.codec.log.avro_content import encode_avro_records
from pyhudi.codec.log.block import DEFAULT_PARQUET_COMPRESSION, LogBlock, encode_block
from pyhudi.codec.log.delete_content import DeleteRecord, encode_delete_records
from pyhudi.codec.log.parquet_content import encode_parquet_records
from pyhudi.model.enums import CommandBlockType, HeaderMetadataType, LogBlockType


def _header(
    instant_time: str, schema_json: str | None, block_identifier: str | None
) -> dict[HeaderMetadataType, str]:
    header = {HeaderMetadataType.INSTANT_TIME: str(instant_time)}
    if schema_json is not None:
        header[HeaderMetadataType.SCHEMA] = schema_json
    if (
        block_identifier is not None
    ):  # `"<attempt>,<sequence>"`, written by 0.14.0 Spark writers only
        header[HeaderMetadataType.BLOCK_IDENTIFIER] = block_identifier
    return header


def avro_data_block(
    instant_time: str,
    schema_json: str,
    records: Iterable[Mapping[str, Any]],
    *,
    block_identifier: str | None = None,
) -> LogBlock:
    """An AVRO_DATA_BLOCK; records must carry the meta fields of `schema_json`."""
    content = encode_avro_records(schema_json, records)
    return LogBlock(
        LogBlockType.AVRO_DATA_BLOCK, _header(instant_time, schema_json, block_identifier), content
    )


def parquet_data_block(
    instant_time: str,
    schema_json: str,
    table: pa.Table,
    *,
    compression: str = DEFAULT_PARQUET_COMPRESSION,
    block_identifier: str | None = None,
) -> LogBlock:
    """A PARQUET_DATA_BLOCK (`hoodie.logfile.data.block.format=parquet`)."""
    content = encode_parquet_records(table, compression=compression)
    header = _header(instant_time, schema_json, block_identifier)
    return LogBlock(LogBlockType.PARQUET_DATA_BLOCK, header, content)


def hfile_data_block(
    instant_time: str, schema_json: str, content: bytes, *, block_identifier: str | None = None
) -> LogBlock:
    """An HFILE_DATA_BLOCK (metadata table): `content` is an HFile of Avro records
    (`pyhudi.codec.metadata_hfile.write_metadata_hfile`)."""
    header = _header(instant_time, schema_json, block_identifier)
    return LogBlock(LogBlockType.HFILE_DATA_BLOCK, header, content)


def delete_block(
    instant_time: str,
    records: Iterable[DeleteRecord],
    *,
    schema_json: str | None = None,
    block_identifier: str | None = None,
) -> LogBlock:
    """A DELETE_BLOCK. Hudi puts the writer schema on delete blocks too; pass it when known."""
    header = _header(instant_time, schema_json, block_identifier)
    return LogBlock(LogBlockType.DELETE_BLOCK, header, encode_delete_records(records))


def rollback_block(instant_time: str, target_instant_time: str) -> LogBlock:
    """The ROLLBACK command block written by rollback instant `instant_time` for `target_instant_time`."""
    header = {
        HeaderMetadataType.INSTANT_TIME: str(instant_time),
        HeaderMetadataType.TARGET_INSTANT_TIME: str(target_instant_time),
        HeaderMetadataType.COMMAND_BLOCK_TYPE: str(CommandBlockType.ROLLBACK_BLOCK.value),
    }
    return LogBlock(LogBlockType.COMMAND_BLOCK, header, b"")


def encode_blocks(blocks: Iterable[LogBlock | bytes], *, table_version: int = 6) -> bytes:
    """The bytes of a new log file holding `blocks` (already-encoded blocks pass through)."""
    return b"".join(
        block if isinstance(block, bytes) else block.encode(table_version=table_version)
        for block in blocks
    )


__all__ = [
    "avro_data_block",
    "delete_block",
    "encode_block",
    "encode_blocks",
    "hfile_data_block",
    "parquet_data_block",
    "rollback_block",
]
