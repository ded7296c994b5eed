"""`pyhudi.codec.schema`: Avro <-> Arrow with Hudi's naming rules, checked on every real commit schema."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from pyhudi.codec.commit_metadata import decode_commit_metadata
from pyhudi.codec.file_names import parse_instant_file
from pyhudi.codec.properties import load_properties
from pyhudi.codec.schema import (
    META_FIELDS,
    arrow_to_avro,
    arrow_to_avro_json,
    avro_to_arrow,
    decimal_fixed_size,
    record_name,
    with_meta_fields,
    without_meta_fields,
)

# Spark's `Decimal.minBytesForPrecision` for precisions 1..38.
SPARK_MIN_BYTES = [
    1,
    1,
    2,
    2,
    3,
    3,
    4,
    4,
    4,
    5,
    5,
    6,
    6,
    6,
    7,
    7,
    8,
    8,
    9,
    9,
    9,
    10,
    10,
    11,
    11,
    11,
    12,
    12,
    13,
    13,
    13,
    14,
    14,
    15,
    15,
    16,
    16,
    16,
]


def commit_schemas(tables: dict[str, Path]) -> list[tuple[Path, str]]:
    """(commit file, extraMetadata.schema) for every completed write instant of every real table."""
    found = []
    for root in tables.values():
        folder = root / ".hoodie" / "timeline"
        folder = folder if folder.is_dir() else root / ".hoodie"
        for path in sorted(folder.iterdir()):
            instant = parse_instant_file(path.name) if path.is_file() else None
            if instant is not None and instant.is_completed and instant.action.is_write:
                schema = decode_commit_metadata(path.read_bytes()).schema
                if schema:
                    found.append((path, schema))
    return found


def table_name_of(avro: dict) -> str:
    return avro["name"].removesuffix("_record")


def test_every_real_commit_schema_survives_avro_to_arrow_to_avro_unchanged(hudi_tables):
    schemas = commit_schemas(hudi_tables)
    assert len(schemas) >= 30
    for path, text in schemas:
        avro = json.loads(text)
        again = arrow_to_avro(avro_to_arrow(text), table_name_of(avro))
        assert again == avro, path
        assert json.loads(arrow_to_avro_json(avro_to_arrow(avro), table_name_of(avro))) == avro, (
            path
        )


def test_real_complex_schema_maps_every_spark_type(hudi_tables):
    root = hudi_tables["cow__v6_nonpartitioned"]
    text = decode_commit_metadata(
        (root / ".hoodie" / "20240418173550988.commit").read_bytes()
    ).schema
    schema = avro_to_arrow(text)
    assert schema.field("id").type == pa.int32() and schema.field("id").nullable
    assert schema.field("longField").type == pa.int64()
    assert schema.field("floatField").type == pa.float32()
    assert schema.field("decimalField").type == pa.decimal128(10, 5)
    assert schema.field("dateField").type == pa.date32()
    assert schema.field("timestampField").type == pa.timestamp("us", tz="UTC")
    assert schema.field("binaryField").type == pa.binary()
    assert pa.types.is_list(schema.field("arrayField").type)
    assert pa.types.is_struct(schema.field("arrayField").type.value_type)
    assert schema.field("mapField").type.key_type == pa.string()
    assert (
        schema.field("structField").type.field("child_struct").type.field("child_field2").type
        == pa.bool_()
    )


def test_create_schema_with_null_second_unions_reads_as_nullable(hudi_tables):
    root = hudi_tables["cow__v6_nonpartitioned"]
    props = load_properties((root / ".hoodie" / "hoodie.properties").read_bytes())
    schema = avro_to_arrow(props["hoodie.table.create.schema"])
    assert all(field.nullable for field in schema)
    assert schema.field("decimalField").type == pa.decimal128(10, 5)


def test_every_arrow_schema_made_from_real_commits_is_valid_avro(hudi_tables):
    schemas = commit_schemas(hudi_tables)
    assert len(schemas) >= 30  # an empty list would pass the loop below
    for path, text in schemas:
        avro = json.loads(text)
        parsed = fastavro.parse_schema(
            arrow_to_avro(avro_to_arrow(avro), table_name_of(avro), with_meta_fields=True)
        )
        names = [field["name"] for field in parsed["fields"]]
        assert names == [*META_FIELDS, *(f["name"] for f in avro["fields"])], path


# ---- naming rules ----------------------------------------------------------------------------


def test_record_name_and_namespace_follow_hudi():
    assert record_name("trips") == ("trips_record", "hoodie.trips")


def test_nested_records_are_named_after_fields_in_parent_namespace():
    schema = pa.schema(
        [
            pa.field(
                "outer", pa.struct([pa.field("inner", pa.struct([pa.field("x", pa.int32())]))])
            ),
            pa.field("items", pa.list_(pa.struct([pa.field("y", pa.string())]))),
            pa.field("by_key", pa.map_(pa.string(), pa.struct([pa.field("z", pa.float64())]))),
        ]
    )
    avro = arrow_to_avro(schema, "t")
    outer = avro["fields"][0]["type"][1]
    assert (outer["name"], outer["namespace"]) == ("outer", "hoodie.t.t_record")
    inner = outer["fields"][0]["type"][1]
    assert (inner["name"], inner["namespace"]) == ("inner", "hoodie.t.t_record.outer")
    item = avro["fields"][1]["type"][1]["items"][1]
    assert (item["name"], item["namespace"]) == ("items", "hoodie.t.t_record")
    value = avro["fields"][2]["type"][1]["values"][1]
    assert (value["name"], value["namespace"]) == ("by_key", "hoodie.t.t_record")


def test_decimal_is_a_fixed_named_fixed_in_field_namespace():
    avro = arrow_to_avro(pa.schema([pa.field("price", pa.decimal128(10, 5))]), "t")
    assert avro["fields"][0]["type"][1] == {
        "type": "fixed",
        "name": "fixed",
        "namespace": "hoodie.t.t_record.price",
        "size": 5,
        "logicalType": "decimal",
        "precision": 10,
        "scale": 5,
    }


@pytest.mark.parametrize("precision", range(1, 39))
def test_decimal_fixed_size_matches_spark_min_bytes_for_precision(precision):
    size = decimal_fixed_size(precision)
    assert size == SPARK_MIN_BYTES[precision - 1]
    assert 2 ** (8 * size - 1) >= 10**precision > 2 ** (8 * (size - 1) - 1)


@pytest.mark.parametrize(
    ("arrow_type", "avro_type"),
    [
        (pa.bool_(), "boolean"),
        (pa.int8(), "int"),
        (pa.int16(), "int"),
        (pa.int32(), "int"),
        (pa.int64(), "long"),
        (pa.float32(), "float"),
        (pa.float64(), "double"),
        (pa.string(), "string"),
        (pa.large_string(), "string"),
        (pa.binary(), "bytes"),
        (pa.date32(), {"type": "int", "logicalType": "date"}),
        (pa.timestamp("us", tz="UTC"), {"type": "long", "logicalType": "timestamp-micros"}),
        (pa.timestamp("us"), {"type": "long", "logicalType": "local-timestamp-micros"}),
        (pa.timestamp("ms", tz="UTC"), {"type": "long", "logicalType": "timestamp-millis"}),
    ],
)
def test_primitive_types_map_to_avro(arrow_type, avro_type):
    avro = arrow_to_avro(pa.schema([pa.field("f", arrow_type, nullable=False)]), "t")
    assert avro["fields"] == [{"name": "f", "type": avro_type}]


def test_nullable_field_is_null_first_union_with_null_default():
    avro = arrow_to_avro(pa.schema([pa.field("f", pa.int64())]), "t")
    assert avro["fields"] == [{"name": "f", "type": ["null", "long"], "default": None}]


def test_nullable_list_items_and_map_values_are_unions():
    schema = pa.schema(
        [
            pa.field("l", pa.list_(pa.field("element", pa.int32(), nullable=True)), nullable=False),
            pa.field(
                "m",
                pa.map_(pa.string(), pa.field("value", pa.string(), nullable=False)),
                nullable=False,
            ),
        ]
    )
    fields = arrow_to_avro(schema, "t")["fields"]
    assert fields[0]["type"] == {"type": "array", "items": ["null", "int"]}
    assert fields[1]["type"] == {"type": "map", "values": "string"}
    assert avro_to_arrow(arrow_to_avro(schema, "t")) == schema


def test_unsupported_arrow_type_raises_type_error():
    with pytest.raises(TypeError, match="duration"):
        arrow_to_avro(pa.schema([pa.field("d", pa.duration("s"))]), "t")


def test_union_of_two_non_null_types_is_rejected():
    with pytest.raises(TypeError, match="unions"):
        avro_to_arrow(
            {"type": "record", "name": "r", "fields": [{"name": "u", "type": ["int", "string"]}]}
        )


def test_avro_to_arrow_resolves_named_type_references_and_enums():
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {
                "name": "a",
                "type": {
                    "type": "record",
                    "name": "Point",
                    "fields": [{"name": "x", "type": "int"}],
                },
            },
            {"name": "b", "type": ["null", "Point"]},
            {"name": "c", "type": ["null", "ns.Point"]},
            {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED"]}},
            {"name": "h", "type": {"type": "fixed", "name": "Hash", "size": 16}},
        ],
    }
    schema = avro_to_arrow(avro)
    point = pa.struct([pa.field("x", pa.int32(), nullable=False)])
    assert [f.type for f in schema] == [point, point, point, pa.string(), pa.binary()]
    assert [f.nullable for f in schema] == [False, True, True, False, False]


@pytest.mark.parametrize(
    ("definition", "reference", "arrow_type"),
    [
        ({"type": "enum", "name": "Color", "symbols": ["RED"]}, "Color", pa.string()),
        (
            {
                "type": "fixed",
                "name": "Money",
                "size": 8,
                "logicalType": "decimal",
                "precision": 10,
                "scale": 2,
            },
            "Money",
            pa.decimal128(10, 2),
        ),
        ({"type": "fixed", "name": "Hash", "size": 8}, "ns.Hash", pa.binary()),
    ],
)
def test_avro_to_arrow_resolves_references_to_named_enums_and_fixed_types(
    definition, reference, arrow_type
):
    avro = {
        "type": "record",
        "name": "r",
        "namespace": "ns",
        "fields": [
            {"name": "first", "type": definition},
            {"name": "again", "type": ["null", reference]},
        ],
    }
    fastavro.parse_schema(avro)  # valid Avro
    schema = avro_to_arrow(avro)
    assert schema.field("again").type == arrow_type == schema.field("first").type


def test_millis_logical_types_read_as_microsecond_timestamps():
    avro = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": "a", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "b", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        ],
    }
    assert [f.type for f in avro_to_arrow(avro)] == [
        pa.timestamp("us", tz="UTC"),
        pa.timestamp("us"),
    ]


def test_meta_fields_are_added_first_once_and_removed():
    data = pa.schema([pa.field("id", pa.int64()), pa.field("_hoodie_record_key", pa.string())])
    with_meta = with_meta_fields(data)
    assert with_meta.names == [*META_FIELDS, "id"]
    assert with_meta_fields(with_meta) == with_meta
    assert without_meta_fields(with_meta).names == ["id"]
    avro = arrow_to_avro(data, "t", with_meta_fields=True)
    assert [f["name"] for f in avro["fields"]] == [*META_FIELDS, "id"]
    assert [f["name"] for f in arrow_to_avro(data, "t")["fields"]] == ["id"]
