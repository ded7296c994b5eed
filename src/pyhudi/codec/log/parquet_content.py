"""PARQUET_DATA_BLOCK content (reference §5.8): a complete parquet file (gzip by default), or
nothing for zero records."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.log.block import DEFAULT_PARQUET_COMPRESSION
from pyhudi.exceptions import CorruptFileError

# ---- parquet data blocks -------------------------------------------------------------------


def encode_parquet_records(
    table: pa.Table,
    *,
    compression: str = DEFAULT_PARQUET_COMPRESSION,
    key_value_metadata: Mapping[str, str] | None = None,
) -> bytes:
    """PARQUET_DATA_BLOCK content: one whole parquet file; no bytes at all for zero records."""
    if table.num_rows == 0:
        return b""  # `HoodieParquetDataBlock.serializeRecords` writes nothing for no records
    if key_value_metadata:
        merged = {
            **(table.schema.metadata or {}),
            **{k.encode(): v.encode() for k, v in key_value_metadata.items()},
        }
        table = table.replace_schema_metadata(merged)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return bytes(sink.getvalue().to_pybytes())


def decode_parquet_block(
    content: bytes | memoryview,
    *,
    schema: pa.Schema | None = None,
    columns: list[str] | None = None,
) -> pa.Table:
    """The records of a PARQUET_DATA_BLOCK; empty content gives an empty table (of `schema` if given)."""
    if len(content) == 0:
        return schema.empty_table() if schema is not None else pa.table({})
    try:
        return pq.read_table(pa.BufferReader(pa.py_buffer(content)), columns=columns, schema=schema)
    except (pa.ArrowException, OSError) as err:
        raise CorruptFileError(
            f"cannot read the parquet file of a parquet data block: {err}"
        ) from err


def parquet_record_count(content: bytes | memoryview) -> int:
    if len(content) == 0:
        return 0
    try:
        return int(pq.ParquetFile(pa.BufferReader(pa.py_buffer(content))).metadata.num_rows)
    except (pa.ArrowException, OSError) as err:
        raise CorruptFileError(
            f"cannot read the parquet footer of a parquet data block: {err}"
        ) from err
