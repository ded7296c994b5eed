"""The CDC query's columnar paths give what the record-by-record paths give: CDC blocks decoded
column by column (`decode_cdc_block`) and images printed column by column (`json_rows`)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest

from pyhudi.codec.log.avro_content import decode_avro_records, encode_avro_records
from pyhudi.codec.log.cdc_columnar import decode_cdc_block
from pyhudi.file_group.cdc_log import CdcMode, cdc_schema_json
from pyhudi.reader.cdc_json import json_rows, json_value

DATA_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "t_record",
        "namespace": "hoodie.t",
        "fields": [
            {"name": "id", "type": ["null", "string"], "default": None},
            {"name": "n", "type": ["null", "long"], "default": None},
            {"name": "x", "type": ["null", "double"], "default": None},
            {"name": "ok", "type": ["null", "boolean"], "default": None},
            {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
            {
                "name": "at",
                "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
            },
            {
                "name": "amount",
                "type": [
                    "null",
                    {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
                ],
            },
        ],
    }
)


def _image(i: int) -> dict:
    return {
        "id": f'k"{i}\\é',
        "n": None if i % 3 == 0 else -(10**12) * i,
        "x": 0.1 * i,
        "ok": i % 2 == 0,
        "day": dt.date(1969, 12, 30) + dt.timedelta(days=i),
        "at": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=7 * i),
        "amount": decimal.Decimal(i) / 4,
    }


@pytest.mark.parametrize("version", [6, 9])
def test_cdc_blocks_decode_column_by_column_as_record_by_record(version: int) -> None:
    schema = cdc_schema_json(CdcMode.DATA_BEFORE_AFTER, DATA_SCHEMA, version)
    records = [
        {"op": "i", "ts_ms": "001", "before": None, "after": _image(1)},
        {"op": "u", "ts_ms": "001", "before": _image(2), "after": _image(3)},
        {"op": "d", "ts_ms": "001", "before": _image(4), "after": None},
        *({"op": "u", "ts_ms": "001", "before": _image(i), "after": _image(i)} for i in range(9)),
    ]
    content = encode_avro_records(schema, records)
    table = decode_cdc_block(content, schema)
    assert table is not None
    decoded = decode_avro_records(content, schema)
    assert table.to_pylist() == decoded
    # and each image prints as Python's json prints the record-by-record values
    encode = json.JSONEncoder(default=json_value, ensure_ascii=False).encode
    for side in ("before", "after"):
        printed = json_rows(table.column(side).combine_chunks(), spaced=True).to_pylist()
        expected = [None if r[side] is None else encode(r[side]) for r in decoded]
        assert [None if p is None else json.loads(p) for p in printed] == [
            None if e is None else json.loads(e) for e in expected
        ]


def test_cdc_blocks_of_other_layouts_are_left_to_the_record_decoder() -> None:
    key_only = cdc_schema_json(CdcMode.OP_KEY_ONLY, DATA_SCHEMA, 6)
    content = encode_avro_records(key_only, [{"op": "d", "record_key": "k1"}])
    assert decode_cdc_block(content, key_only) is None
    before_only = cdc_schema_json(CdcMode.DATA_BEFORE, DATA_SCHEMA, 6)
    assert decode_cdc_block(b"\x00\x00\x00\x03\x00\x00\x00\x00", before_only) is None


def test_json_rows_escape_and_fall_back_where_arrow_cannot_print() -> None:
    table = pa.table(
        {
            "s": ['a"b\\c', None, "tab\there"],  # a control character: printed by json
            "f": pa.array([1.5, float("nan"), None]),  # NaN: printed by json
            "b": [b"\x00\xff", None, b""],
            "nested": [{"a": 1}, None, {"a": None}],
        }
    )
    encode = json.JSONEncoder(default=json_value, separators=(",", ":")).encode
    printed = json_rows(table, spaced=False).to_pylist()
    for text, row in zip(printed, table.to_pylist(), strict=True):
        assert text == encode(row)


def test_data_file_images_leave_null_fields_out_as_hudi_prints_them() -> None:
    """Hudi prints a record read from a data file with Jackson, which skips null fields; a
    record from a CDC log with Avro, which prints them (`null`)."""
    table = pa.table({"id": ["k1", "k2", None], "n": [None, 2, None], "s": ["x", None, None]})
    printed = json_rows(table, spaced=False, skip_nulls=True).to_pylist()
    assert printed == ['{"id":"k1","s":"x"}', '{"id":"k2","n":2}', "{}"]
    assert json_rows(table, spaced=False).to_pylist()[0] == '{"id":"k1","n":null,"s":"x"}'
