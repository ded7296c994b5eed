"""The columnar Avro codec against fastavro, byte for byte, and against the fixture log blocks."""

from __future__ import annotations

import io
import json
import math
import struct
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec.log import avro_columnar_decode, avro_columnar_encode
from pyhudi.codec.log.avro_columnar import (
    decode_block_content,
    decode_block_fields,
    encode_block_content,
    encode_table,
    supports,
)
from pyhudi.codec.log.avro_content import decode_avro_records
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.schema import avro_to_arrow
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.enums import LogBlockType

UTC = timezone.utc


def record_schema(*fields: tuple[str, Any]) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "r",
            "namespace": "hoodie.t",
            "fields": [{"name": name, "type": avro_type} for name, avro_type in fields],
        }
    )


def fastavro_records(table: pa.Table, schema_json: str) -> list[bytes]:
    parsed = fastavro.parse_schema(json.loads(schema_json))
    out = []
    for row in table.to_pylist():
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, row)
        out.append(buf.getvalue())
    return out


def block_content(records: list[bytes]) -> bytes:
    parts = [struct.pack(">ii", 3, len(records))]
    for record in records:
        parts += [struct.pack(">i", len(record)), record]
    return b"".join(parts)


def assert_same_table(actual: pa.Table, expected: pa.Table) -> None:
    """Equal tables, floats compared by their bits (NaN == NaN, -0.0 != 0.0)."""
    assert actual.schema.names == expected.schema.names
    for name in expected.schema.names:
        a, e = actual.column(name).combine_chunks(), expected.column(name).combine_chunks()
        assert a.type == e.type, name
        if pa.types.is_floating(e.type):
            assert a.is_valid().equals(e.is_valid()), name
            width = "<i4" if e.type == pa.float32() else "<i8"
            bits_a = np.asarray(a.fill_null(0)).view(width)
            bits_e = np.asarray(e.fill_null(0)).view(width)
            assert (bits_a == bits_e).all(), name
        else:
            assert a.equals(e), (name, a, e)


def assert_matches_fastavro(table: pa.Table, schema_json: str) -> None:
    """encode == fastavro bytes; decode(encode) and decode(fastavro content) == the table."""
    expected = fastavro_records(table, schema_json)
    data, offsets = encode_table(table, schema_json)
    assert bytes(data) == b"".join(expected)
    assert offsets.tolist() == np.cumsum([0, *map(len, expected)]).tolist()
    content = encode_block_content(table, schema_json)
    assert content == block_content(expected)
    assert_same_table(decode_block_content(content, schema_json, table.schema), table)


# ---- every supported type --------------------------------------------------------------------

T0 = datetime(1970, 1, 1, tzinfo=UTC)
DECIMAL_EDGES = [0, 1, -1, 127, -127, 128, -128, 129, -129, 255, -256, 32767, -32768, -32769]
DECIMAL_EDGES += [2**63, -(2**63), 2**64, -(2**64), 10**38 - 1, -(10**38 - 1), 2**126, -(2**126)]

TYPE_CASES: dict[str, tuple[Any, pa.DataType, list[Any]]] = {
    "boolean": ("boolean", pa.bool_(), [True, False, True]),
    "int": (
        "int",
        pa.int32(),
        [0, -1, 1, 63, 64, -64, -65, 8191, 8192, 2**31 - 1, -(2**31)],
    ),
    "long": (
        "long",
        pa.int64(),
        [0, -1, 2**63 - 1, -(2**63), 2**55, 2**56, -(2**56), 2**62, 12345678901234],
    ),
    "float": (
        "float",
        pa.float32(),
        [0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 3.4028234663852886e38, 1e-45],
    ),
    "double": ("double", pa.float64(), [0.0, -0.0, 1e308, 5e-324, math.inf, -math.inf, math.nan]),
    "string": (
        "string",
        pa.string(),
        [
            *["", "a", "héllo wörld", "日本語テキスト", "🙂" * 3, "x" * 127, "y" * 128],
            *["z" * 16383, "w" * 16384, "é" * 10000],
        ],
    ),
    "bytes": (
        "bytes",
        pa.binary(),
        [b"", b"\x00", b"\xff\x00\x80", bytes(range(256)), b"q" * 20000],
    ),
    "date": (
        {"type": "int", "logicalType": "date"},
        pa.date32(),
        [
            date(1970, 1, 1),
            date(1969, 12, 31),
            date(1, 1, 1),
            date(9999, 12, 31),
            date(2024, 2, 29),
        ],
    ),
    "timestamp-millis": (
        {"type": "long", "logicalType": "timestamp-millis"},
        pa.timestamp("ms", tz="UTC"),
        [
            *[T0, T0 - timedelta(milliseconds=1), datetime(1900, 1, 1, tzinfo=UTC)],
            *[datetime(2262, 4, 11, 23, 47, 16, 854000, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)],
        ],
    ),
    "timestamp-micros": (
        {"type": "long", "logicalType": "timestamp-micros"},
        pa.timestamp("us", tz="UTC"),
        [
            *[T0, T0 - timedelta(microseconds=1), datetime(1900, 1, 1, 0, 0, 0, 1, tzinfo=UTC)],
            *[datetime(2025, 3, 31, 3, 6, 42, 808123, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC)],
        ],
    ),
    "local-timestamp-micros": (
        {"type": "long", "logicalType": "local-timestamp-micros"},
        pa.timestamp("us"),
        [datetime(1970, 1, 1), datetime(1969, 12, 31, 23, 59, 59, 999999), datetime(9999, 1, 1)],
    ),
    "local-timestamp-millis": (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        pa.timestamp("ms"),
        [datetime(1970, 1, 1), datetime(1969, 12, 31, 23, 59, 59, 999000), datetime(1, 1, 1)],
    ),
    "time-millis": (
        {"type": "int", "logicalType": "time-millis"},
        pa.time32("ms"),
        [time(0, 0), time(23, 59, 59, 999000), time(12, 0, 0, 1000)],
    ),
    "time-micros": (
        {"type": "long", "logicalType": "time-micros"},
        pa.time64("us"),
        [time(0, 0), time(23, 59, 59, 999999), time(0, 0, 0, 1)],
    ),
    "decimal-bytes-38-0": (
        {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 0},
        pa.decimal128(38, 0),
        [Decimal(v) for v in DECIMAL_EDGES],
    ),
    "decimal-bytes-10-3": (
        {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3},
        pa.decimal128(10, 3),
        [Decimal(v) for v in ("1234567.891", "-0.001", "0.000", "-9999999.999", "0.128")],
    ),
    "decimal-fixed-38-10": (
        {
            "type": "fixed",
            "name": "d16",
            "size": 16,
            "logicalType": "decimal",
            "precision": 38,
            "scale": 10,
        },
        pa.decimal128(38, 10),
        [Decimal(f"{v}E-10") for v in DECIMAL_EDGES],
    ),
    "decimal-fixed-9-2": (
        {
            "type": "fixed",
            "name": "d4",
            "size": 4,
            "logicalType": "decimal",
            "precision": 9,
            "scale": 2,
        },
        pa.decimal128(9, 2),
        [Decimal(v) for v in ("0.00", "-0.01", "9999999.99", "-9999999.99", "1.28", "-1.28")],
    ),
    "decimal-fixed-20-wide": (
        {
            "type": "fixed",
            "name": "d20",
            "size": 20,
            "logicalType": "decimal",
            "precision": 20,
            "scale": 0,
        },
        pa.decimal128(20, 0),
        [Decimal(v) for v in (0, -1, 10**20 - 1, -(10**20 - 1), 128, -128)],
    ),
    "fixed": (
        {"type": "fixed", "name": "f5", "size": 5},
        pa.binary(5),
        [b"\x00" * 5, b"abcde", b"\xff\x80\x00\x01\x7f"],
    ),
    "enum": (
        {"type": "enum", "name": "color", "symbols": ["RED", "GREEN", "BLUE"]},
        pa.string(),
        ["RED", "BLUE", "GREEN", "BLUE"],
    ),
    "uuid": (
        {"type": "string", "logicalType": "uuid"},
        pa.string(),
        ["5d1a8f3e-3c39-4a3b-9f1e-7c6a6a3f1f00", "00000000-0000-0000-0000-000000000000"],
    ),
}
FORMS = {
    "plain": lambda t: t,
    "null-first": lambda t: ["null", t],
    "null-last": lambda t: [t, "null"],
    "single-branch": lambda t: [t],
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("case", list(TYPE_CASES))
def test_each_type_matches_fastavro(case: str, form: str) -> None:
    avro_type, arrow_type, values = TYPE_CASES[case]
    nullable = "null" in form
    column = [*values, None, values[0], None] if nullable else values
    schema_json = record_schema(
        ("id", "long"), ("v", FORMS[form](avro_type)), ("tail", ["null", "string"])
    )
    assert supports(schema_json)
    table = pa.table(
        {
            "id": pa.array(range(len(column)), pa.int64()),
            "v": pa.array(column, arrow_type),
            "tail": pa.array([f"t{i}" if i % 3 else None for i in range(len(column))]),
        },
        schema=pa.schema(
            [pa.field("id", pa.int64(), False), ("v", arrow_type), ("tail", pa.string())]
        ),
    )
    assert_matches_fastavro(table, schema_json)


def test_all_types_in_one_record() -> None:
    """Every type side by side, nullable, so pieces of all kinds are interleaved together."""
    rows = max(len(values) for _, _, values in TYPE_CASES.values())
    fields, columns = [], {}
    for i, (case, (avro_type, arrow_type, values)) in enumerate(TYPE_CASES.items()):
        name = case.replace("-", "_")
        if isinstance(avro_type, dict) and "name" in avro_type:
            avro_type = {**avro_type, "name": f"{avro_type['name']}_{i}"}
        fields.append((name, ["null", avro_type] if i % 2 else [avro_type, "null"]))
        cycle = [values[j % len(values)] if (j + i) % 4 else None for j in range(rows)]
        columns[name] = pa.array(cycle, arrow_type)
    schema_json = record_schema(*fields)
    assert_matches_fastavro(pa.table(columns), schema_json)


# ---- the Hudi shape, inputs of every layout -------------------------------------------------

HUDI_SCHEMA = record_schema(
    *[(name, ["null", "string"]) for name in ("_hoodie_commit_time", "_hoodie_record_key")],
    ("ts", ["null", "long"]),
    ("fare", ["null", "double"]),
    ("event", ["null", {"type": "long", "logicalType": "timestamp-micros"}]),
    ("city", ["null", "string"]),
)


def hudi_table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    keys = [f"key-{i}-" + "é" * (i % 3) if i % 7 else None for i in range(n)]
    return pa.table(
        {
            "_hoodie_commit_time": pa.array(["20250331030642808"] * n),
            "_hoodie_record_key": pa.array(keys),
            "ts": pa.array(rng.integers(-(2**40), 2**40, n)),
            "fare": pa.array(rng.normal(size=n)),
            "event": pa.array(rng.integers(-(2**50), 2**50, n)).cast(pa.timestamp("us", "UTC")),
            "city": pa.array([["sf", None, "chennai", ""][i % 4] for i in range(n)]),
        }
    )


def test_hudi_shaped_records_in_several_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(avro_columnar_encode, "BATCH_ROWS", 7)
    monkeypatch.setattr(avro_columnar_decode, "BATCH_ROWS", 5)
    assert_matches_fastavro(hudi_table(50), HUDI_SCHEMA)


def test_large_chunked_and_sliced_inputs() -> None:
    table = hudi_table(40)
    expected = b"".join(fastavro_records(table, HUDI_SCHEMA))
    large = table.cast(
        pa.schema(
            [
                (f.name, pa.large_string()) if f.type == pa.string() else (f.name, f.type)
                for f in table.schema
            ]
        )
    )
    chunked = pa.concat_tables([table.slice(0, 13), table.slice(13, 1), table.slice(14)])
    assert chunked.column("city").num_chunks == 3
    for variant in (large, chunked):
        assert bytes(encode_table(variant, HUDI_SCHEMA)[0]) == expected
    sliced = table.slice(11, 17)
    assert bytes(encode_table(sliced, HUDI_SCHEMA)[0]) == b"".join(
        fastavro_records(sliced, HUDI_SCHEMA)
    )


def test_large_binary_and_string_views_of_bytes() -> None:
    schema_json = record_schema(("b", ["null", "bytes"]), ("s", "string"))
    table = pa.table(
        {
            "b": pa.array([b"x", None, b"\x00" * 300], pa.large_binary()),
            "s": pa.array(["a", "bb", "ccc"]).dictionary_encode(),
        }
    )
    plain = pa.table({"b": table["b"].cast(pa.binary()), "s": pa.array(["a", "bb", "ccc"])})
    assert bytes(encode_table(table, schema_json)[0]) == b"".join(
        fastavro_records(plain, schema_json)
    )


def test_null_slots_holding_bytes_are_written_as_nulls() -> None:
    offsets = np.array([0, 2, 5, 6], np.int32)
    array = pa.Array.from_buffers(
        pa.string(),
        3,
        [
            pa.py_buffer(np.packbits([1, 0, 1], bitorder="little")),
            pa.py_buffer(offsets),
            pa.py_buffer(b"abXYZc"),
        ],
    )
    table = pa.table({"s": array})
    schema_json = record_schema(("s", ["null", "string"]))
    assert table.column("s").to_pylist() == ["ab", None, "c"]
    assert bytes(encode_table(table, schema_json)[0]) == b"\x02\x04ab\x00\x02\x02c"


def test_empty_table() -> None:
    table = hudi_table(0)
    data, offsets = encode_table(table, HUDI_SCHEMA)
    assert len(data) == 0
    assert offsets.tolist() == [0]
    content = encode_block_content(table, HUDI_SCHEMA)
    assert content == struct.pack(">ii", 3, 0)
    decoded = decode_block_content(content, HUDI_SCHEMA)
    assert decoded.num_rows == 0
    assert decoded.schema == avro_to_arrow(HUDI_SCHEMA)


def test_no_field_record() -> None:
    schema_json = record_schema()
    assert supports(schema_json)
    assert decode_block_content(struct.pack(">iiii", 3, 2, 0, 0), schema_json).num_rows == 0


# ---- decoding: types, schemas ---------------------------------------------------------------


def test_default_types_are_those_of_avro_to_arrow() -> None:
    table = hudi_table(30)
    content = encode_block_content(table, HUDI_SCHEMA)
    decoded = decode_block_content(content, HUDI_SCHEMA)
    records = decode_avro_records(content, HUDI_SCHEMA)
    expected = pa.Table.from_pylist(records, schema=avro_to_arrow(HUDI_SCHEMA))
    assert_same_table(decoded, expected)


def test_requested_arrow_schema_selects_and_casts() -> None:
    schema_json = record_schema(
        ("a", "int"), ("t", {"type": "long", "logicalType": "timestamp-millis"}), ("s", "string")
    )
    table = pa.table(
        {
            "a": pa.array([1, -2], pa.int32()),
            "t": pa.array([5, -7], pa.timestamp("ms", "UTC")),
            "s": pa.array(["x", "y"]),
        }
    )
    content = encode_block_content(table, schema_json)
    assert decode_block_content(content, schema_json).schema.field("t").type == pa.timestamp(
        "us", "UTC"
    )
    wanted = pa.schema(
        [("s", pa.large_string()), ("t", pa.timestamp("ms", "UTC")), ("a", pa.int64())]
    )
    decoded = decode_block_content(content, schema_json, wanted)
    assert decoded.schema == wanted
    assert decoded.to_pylist() == [
        {"s": "x", "t": datetime(1970, 1, 1, 0, 0, 0, 5000, tzinfo=UTC), "a": 1},
        {"s": "y", "t": datetime(1969, 12, 31, 23, 59, 59, 993000, tzinfo=UTC), "a": -2},
    ]
    with pytest.raises(ValueError, match="nope"):
        decode_block_content(content, schema_json, pa.schema([("nope", pa.int32())]))


def test_timestamps_of_another_unit_round_down_like_fastavro() -> None:
    schema_json = record_schema(("t", {"type": "long", "logicalType": "timestamp-millis"}))
    table = pa.table({"t": pa.array([-1, -1500, 1999, 0], pa.timestamp("us", "UTC"))})
    expected = fastavro_records(table, schema_json)
    assert bytes(encode_table(table, schema_json)[0]) == b"".join(expected)


def test_bytes_decimals_are_as_long_as_fastavro_makes_them() -> None:
    """fastavro sizes `(abs(v).bit_length() + 8) // 8`: -128 takes 2 bytes (Java: 1)."""
    schema_json = record_schema(("d", {"type": "bytes", "logicalType": "decimal", "precision": 5}))
    table = pa.table(
        {"d": pa.array([Decimal(-128), Decimal(-127), Decimal(128)], pa.decimal128(5))}
    )
    assert bytes(encode_table(table, schema_json)[0]) == b"\x04\xff\x80\x02\x81\x04\x00\x80"
    java_minimal = block_content([b"\x02\x80"])  # also read: BigInteger.toByteArray of -128
    assert decode_block_content(java_minimal, schema_json).column("d").to_pylist() == [
        Decimal(-128)
    ]


# ---- errors ---------------------------------------------------------------------------------


def test_null_in_a_non_nullable_field_names_the_field() -> None:
    schema_json = record_schema(("k", "string"), ("amount", "long"))
    table = pa.table({"k": ["a", "b"], "amount": pa.array([1, None], pa.int64())})
    with pytest.raises(ValueError, match="amount"):
        encode_table(table, schema_json)


@pytest.mark.parametrize(
    ("avro_type", "column", "match"),
    [
        ({"type": "enum", "name": "e", "symbols": ["A"]}, pa.array(["A", "B"]), "enum symbol"),
        (
            {"type": "fixed", "name": "d", "size": 2, "logicalType": "decimal", "precision": 9},
            pa.array([Decimal(40000)], pa.decimal128(9)),
            "does not fit",
        ),
        ("int", pa.array([2**40], pa.int64()), "'v'"),
        ("long", pa.array(["x"]), "'v'"),
        ({"type": "fixed", "name": "f", "size": 3}, pa.array([b"ab"]), "'v'"),
    ],
)
def test_values_that_cannot_be_encoded(avro_type: Any, column: pa.Array, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        encode_table(pa.table({"v": column}), record_schema(("v", avro_type)))


def test_missing_column() -> None:
    with pytest.raises(ValueError, match="'b'"):
        encode_table(pa.table({"a": [1]}), record_schema(("a", "long"), ("b", "long")))


def one_record_content() -> tuple[bytes, str]:
    schema_json = record_schema(("k", ["null", "string"]), ("n", "long"))
    table = pa.table({"k": ["abc"], "n": pa.array([300], pa.int64())})
    return encode_block_content(table, schema_json), schema_json


@pytest.mark.parametrize("delta", [1, -1, 5])
def test_length_prefix_that_disagrees_is_corrupt(delta: int) -> None:
    content, schema_json = one_record_content()
    (length,) = struct.unpack_from(">i", content, 8)
    damaged = (
        content[:8] + struct.pack(">i", length + delta) + content[12:] + b"\x00" * max(delta, 0)
    )
    with pytest.raises(CorruptFileError):
        decode_block_content(damaged, schema_json)


@pytest.mark.parametrize(
    "damage",
    [
        lambda c: c[:-1],  # truncated
        lambda c: c[:8] + struct.pack(">i", -3) + c[12:],  # negative length
        lambda c: c[:12] + b"\x04" + c[13:],  # union branch 2 of a 2-branch union
        lambda c: c[:12] + b"\x02\x06\xff\xfe\xfd" + c[17:],  # invalid UTF-8
        lambda c: c[:12] + b"\x02\x7e" + c[14:],  # string longer than the record
        lambda c: c[:4] + struct.pack(">i", 2) + c[8:],  # count larger than the records
    ],
)
def test_damaged_content_is_corrupt(damage: Any) -> None:
    content, schema_json = one_record_content()
    assert decode_block_content(content, schema_json).to_pylist() == [{"k": "abc", "n": 300}]
    with pytest.raises(CorruptFileError):
        decode_block_content(damage(content), schema_json)


def test_overlong_varint_is_corrupt() -> None:
    schema_json = record_schema(("n", "long"))
    with pytest.raises(CorruptFileError):
        decode_block_content(block_content([b"\xff" * 11 + b"\x00"]), schema_json)
    ten_bytes = b"\xfe" + b"\xff" * 8 + b"\x01"  # zigzag of 2^63 - 1... written in 10 bytes
    decoded = decode_block_content(block_content([ten_bytes]), schema_json)
    assert decoded.column("n").to_pylist() == [2**63 - 1]


# ---- supports() -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "avro_type",
    [
        {"type": "record", "name": "inner", "fields": [{"name": "x", "type": "int"}]},
        {"type": "array", "items": "int"},
        {"type": "map", "values": "string"},
        ["null", {"type": "array", "items": "int"}],
        ["null", "string", "long"],
        ["string", "long"],
        ["null"],
        "null",
        "unknown.Name",
        {"type": "bytes", "logicalType": "decimal", "precision": 39},
        {"type": "long", "logicalType": "date"},
        {"type": "string", "logicalType": "timestamp-micros"},
    ],
)
def test_unsupported_fields(avro_type: Any) -> None:
    assert not supports(record_schema(("a", "long"), ("x", avro_type)))


def test_supported_shapes() -> None:
    enum = {"type": "enum", "name": "E", "namespace": "ns", "symbols": ["A"]}
    assert supports(record_schema(("e", enum), ("f", ["null", "ns.E"]), ("g", "E")))
    assert supports(record_schema(("x", {"type": "long", "logicalType": "timestamp-nanos"})))
    assert not supports("not json")
    assert not supports(json.dumps("string"))
    assert not supports(json.dumps({"type": "enum", "name": "E", "symbols": ["A"]}))


def test_named_type_references_encode() -> None:
    fixed = {"type": "fixed", "name": "F2", "size": 2}
    schema_json = record_schema(("a", fixed), ("b", ["null", "F2"]))
    table = pa.table({"a": pa.array([b"ab"], pa.binary(2)), "b": pa.array([b"cd"], pa.binary(2))})
    assert_matches_fastavro(table, schema_json)


# ---- the log blocks Hudi wrote ---------------------------------------------------------------

FIXTURE_TABLES = ("mor_avro__v6_trips_8i1u", "mor_avro__v8_trips_8i3u1d")


@pytest.fixture(scope="module")
def fixture_avro_blocks(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    root = tmp_path_factory.mktemp("avro-columnar")
    for name in FIXTURE_TABLES:
        unzip_table(name, root)
    blocks = []
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file() and ".log." in p.name):
        with open(path, "rb") as file:
            for block in iter_blocks(file, read_content=True):
                if block.block_type is LogBlockType.AVRO_DATA_BLOCK:
                    blocks.append(block)
    return blocks


def test_fixture_avro_blocks_decode_like_fastavro(fixture_avro_blocks: list[Any]) -> None:
    assert len(fixture_avro_blocks) >= 3
    for block in fixture_avro_blocks:
        schema_json = block.schema_json
        assert supports(schema_json)  # both fixture tables have flat schemas
        records = decode_avro_records(block.content, schema_json)
        expected = pa.Table.from_pylist(records, schema=avro_to_arrow(schema_json))
        decoded = decode_block_content(block.content, schema_json)
        assert decoded.num_rows == len(records) > 0
        assert_same_table(decoded, expected)
        table = pa.Table.from_pylist(records, schema=decoded.schema)
        assert encode_block_content(table, schema_json) == bytes(block.content)


def test_selected_fields_decode_like_the_whole_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(avro_columnar_decode, "BATCH_ROWS", 5)
    table = hudi_table(50)
    content = encode_block_content(table, HUDI_SCHEMA)
    whole = decode_block_content(content, HUDI_SCHEMA)
    keys = decode_block_fields(content, HUDI_SCHEMA, ["_hoodie_record_key"])
    assert keys.column_names == ["_hoodie_record_key"]
    assert keys.column(0).to_pylist() == whole.column("_hoodie_record_key").to_pylist()
    two = decode_block_fields(content, HUDI_SCHEMA, ["fare", "_hoodie_commit_time"])
    assert two.column_names == ["_hoodie_commit_time", "fare"]  # schema order
    assert two.column("fare").to_pylist() == whole.column("fare").to_pylist()


def test_selected_fields_name_missing_fields_and_damaged_content() -> None:
    content = encode_block_content(hudi_table(3), HUDI_SCHEMA)
    with pytest.raises(ValueError, match="nope"):
        decode_block_fields(content, HUDI_SCHEMA, ["nope"])
    with pytest.raises(CorruptFileError, match="past the block end"):
        decode_block_fields(content[:-20], HUDI_SCHEMA, ["_hoodie_record_key"])


def test_fixture_block_keys_decode_like_fastavro(fixture_avro_blocks: list[Any]) -> None:
    for block in fixture_avro_blocks:
        records = decode_avro_records(block.content, block.schema_json)
        keys = decode_block_fields(block.content, block.schema_json, ["_hoodie_record_key"])
        assert keys.column(0).to_pylist() == [r["_hoodie_record_key"] for r in records]


def test_fixed_width_strings_and_varints_match_fastavro(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast paths: strings of one length without nulls (fixed bytes, no payload slices) and
    varints of one byte count (no masks), beside batches where a null or another length appears."""
    monkeypatch.setattr(avro_columnar_encode, "BATCH_ROWS", 8)
    n = 40
    rng = np.random.default_rng(3)
    file_ids = [f"{i % 3:08d}-a1bd-4496-934f-8db0c1855106-0" for i in range(n)]
    keys = [f"key-{i:010d}" if i < 30 else f"key-{i}" for i in range(n)]  # one length, then not
    table = pa.table(
        {
            "_hoodie_commit_time": pa.array(["20250331030642808"] * n),
            "_hoodie_record_key": pa.array(keys),
            "ts": pa.array(rng.integers(2**50, 2**51, n)),  # 8 varint bytes in every row
            "fare": pa.array([None if i == 37 else float(i) for i in range(n)]),
            "event": pa.array(rng.integers(2**49, 2**50, n)).cast(pa.timestamp("us", "UTC")),
            "city": pa.array([*file_ids[:33], None, *file_ids[34:]]),
        }
    )
    assert_matches_fastavro(table, HUDI_SCHEMA)
    assert_matches_fastavro(table.slice(5, 20), HUDI_SCHEMA)
    keys = pa.array(["ab", "abcd", "", "ab"] * 10)  # lengths 2, 4, 0, 2: 8 rows of 2 bytes in all
    assert_matches_fastavro(table.set_column(1, "_hoodie_record_key", keys), HUDI_SCHEMA)
    empty = pa.table({name: pa.array([""] * n) for name in ("_hoodie_commit_time", "city")})
    assert_matches_fastavro(
        empty, record_schema(("_hoodie_commit_time", "string"), ("city", ["null", "string"]))
    )
