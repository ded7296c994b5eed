"""Random flat schemas and rows: the columnar Avro codec writes fastavro's bytes and reads them back."""

from __future__ import annotations

import io
import json
import struct
from datetime import timezone
from decimal import Decimal
from typing import Any
from unittest import mock

import fastavro
import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.codec.log import avro_columnar_decode, avro_columnar_encode
from pyhudi.codec.log.avro_columnar import (
    decode_block_content,
    encode_block_content,
    encode_table,
    supports,
)
from pyhudi.codec.schema import decimal_fixed_size

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UTC = timezone.utc

Column = tuple[Any, pa.DataType, st.SearchStrategy[Any]]


def _timestamp(avro: str, unit: str, tz: str | None) -> Column:
    zones = st.just(UTC) if tz else st.none()
    values = st.datetimes(timezones=zones)
    if unit == "ms":
        values = values.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
    return {"type": "long", "logicalType": avro}, pa.timestamp(unit, tz), values


@st.composite
def _decimal(draw: st.DrawFn, name: str) -> Column:
    precision = draw(st.integers(1, 38))
    scale = draw(st.integers(0, precision))
    avro: dict[str, Any] = {"type": "bytes", "logicalType": "decimal", "precision": precision}
    avro["scale"] = scale
    if draw(st.booleans()):
        avro.update(type="fixed", name=name, size=decimal_fixed_size(precision))
    limit = 10**precision - 1
    values = st.integers(-limit, limit).map(lambda v: Decimal(f"{v}E-{scale}"))
    return avro, pa.decimal128(precision, scale), values


SIMPLE: dict[str, Column] = {
    "boolean": ("boolean", pa.bool_(), st.booleans()),
    "int": ("int", pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "long": ("long", pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float": ("float", pa.float32(), st.floats(width=32, allow_nan=False)),
    "double": ("double", pa.float64(), st.floats(allow_nan=False)),
    "string": ("string", pa.string(), st.text(max_size=40) | st.text(min_size=130, max_size=200)),
    "bytes": ("bytes", pa.binary(), st.binary(max_size=40) | st.binary(min_size=130, max_size=200)),
    "date": ({"type": "int", "logicalType": "date"}, pa.date32(), st.dates()),
    "ts-us": _timestamp("timestamp-micros", "us", "UTC"),
    "ts-ms": _timestamp("timestamp-millis", "ms", "UTC"),
    "local-ts-us": _timestamp("local-timestamp-micros", "us", None),
}


@st.composite
def _column(draw: st.DrawFn, name: str) -> Column:
    kind = draw(st.sampled_from([*SIMPLE, "decimal", "fixed", "enum"]))
    if kind in SIMPLE:
        return SIMPLE[kind]
    if kind == "decimal":
        return draw(_decimal(name))
    if kind == "fixed":
        size = draw(st.integers(1, 20))
        fixed = {"type": "fixed", "name": name, "size": size}
        return fixed, pa.binary(size), st.binary(min_size=size, max_size=size)
    symbols = draw(
        st.lists(st.from_regex(r"\A[A-Z][A-Z0-9_]{0,5}\Z"), min_size=1, max_size=5, unique=True)
    )
    return {"type": "enum", "name": name, "symbols": symbols}, pa.string(), st.sampled_from(symbols)


@st.composite
def tables(draw: st.DrawFn) -> tuple[pa.Table, str]:
    fields, columns = [], {}
    rows = draw(st.integers(0, 25))
    for i in range(draw(st.integers(1, 7))):
        name = f"f{i}"
        avro, arrow_type, values = draw(_column(name))
        form = draw(st.sampled_from(["plain", "null-first", "null-last"]))
        if form != "plain":
            values = st.none() | values
        fields.append(
            {
                "name": name,
                "type": {"plain": avro, "null-first": ["null", avro], "null-last": [avro, "null"]}[
                    form
                ],
            }
        )
        columns[name] = pa.array(draw(st.lists(values, min_size=rows, max_size=rows)), arrow_type)
    schema_json = json.dumps(
        {"type": "record", "name": "r", "namespace": "hoodie.t", "fields": fields}
    )
    table = pa.table(columns)
    if rows > 3 and draw(st.booleans()):  # several chunks
        cut = draw(st.integers(1, rows - 1))
        table = pa.concat_tables([table.slice(0, cut), table.slice(cut)])
    return table, schema_json


def fastavro_records(table: pa.Table, schema_json: str) -> list[bytes]:
    parsed = fastavro.parse_schema(json.loads(schema_json))
    out = []
    for row in table.to_pylist():
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


@SETTINGS
@given(tables(), st.integers(1, 9))
def test_encode_writes_fastavro_bytes(case: tuple[pa.Table, str], batch_rows: int) -> None:
    table, schema_json = case
    assert supports(schema_json)
    expected = fastavro_records(table, schema_json)
    with mock.patch.object(avro_columnar_encode, "BATCH_ROWS", batch_rows):
        data, offsets = encode_table(table, schema_json)
        content = encode_block_content(table, schema_json)
    assert bytes(data) == b"".join(expected)
    assert offsets.tolist() == np.cumsum([0, *map(len, expected)]).tolist()
    framed = [struct.pack(">i", len(r)) + r for r in expected]
    assert content == struct.pack(">ii", 3, len(expected)) + b"".join(framed)


@SETTINGS
@given(tables(), st.integers(1, 9))
def test_decode_inverts_encode(case: tuple[pa.Table, str], batch_rows: int) -> None:
    table, schema_json = case
    content = encode_block_content(table, schema_json)
    with mock.patch.object(avro_columnar_decode, "BATCH_ROWS", batch_rows):
        decoded = decode_block_content(content, schema_json, table.schema)
    assert decoded.schema == table.schema
    for name in table.column_names:
        expected, actual = table.column(name), decoded.column(name)
        if pa.types.is_floating(expected.type):  # -0.0 and 0.0 must stay apart
            bits = "<i4" if expected.type == pa.float32() else "<i8"
            assert actual.is_valid().equals(expected.is_valid())
            a = np.asarray(actual.combine_chunks().fill_null(0)).view(bits)
            e = np.asarray(expected.combine_chunks().fill_null(0)).view(bits)
            assert (a == e).all()
        else:
            assert actual.equals(expected), name
