"""HFILE_DATA_BLOCK content (reference §5.9, metadata table only): an HBase HFile v3 whose cells
hold Avro values; CDC_DATA_BLOCK content has the Avro data block layout."""

from __future__ import annotations

import io
import struct
from typing import Any

import fastavro

from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.log.avro_content import decode_avro_records, parsed_avro_schema
from pyhudi.exceptions import CorruptFileError

# ---- HFILE and CDC blocks --------------------------------------------------------------------


#: CDC_DATA_BLOCK content has the Avro data block layout (§5.10).
decode_cdc_records = decode_avro_records


def decode_hfile_block(
    content: bytes | memoryview, schema_json: str | None = None, *, key_field: str = "key"
) -> list[dict[str, Any]]:
    """Records of an HFILE_DATA_BLOCK (metadata table): HFile cells in key order, Avro values.

    Hudi blanks the key field inside each value to save space and keeps the key in the cell's
    row, so the key is restored from the row. The writer schema is the SCHEMA header, else the
    HFile's FileInfo `schema` entry.
    """
    try:
        reader = HFileReader(bytes(content))
        schema = parsed_avro_schema(
            schema_json or reader.file_info.entries[b"schema"].decode("utf-8")
        )
        records: list[dict[str, Any]] = []
        for row, value in reader.items():
            record: Any = fastavro.schemaless_reader(io.BytesIO(value), schema, None)
            if key_field in record and not record[key_field]:
                record[key_field] = row.decode("utf-8", "surrogateescape")
            records.append(record)
    except (EOFError, ValueError, IndexError, KeyError, TypeError, struct.error) as err:
        raise CorruptFileError(f"cannot decode HFILE data block: {err}") from err
    return records
