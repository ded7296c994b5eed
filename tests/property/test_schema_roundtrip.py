"""Round trips Arrow -> Avro -> Arrow (and Avro -> Arrow -> Avro) over generated schemas."""

from __future__ import annotations

import json

import fastavro
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.codec.schema import arrow_to_avro, arrow_to_avro_json, avro_to_arrow, decimal_fixed_size

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Arrow types with one Avro spelling each (what the Spark writer produces).
PRIMITIVES = [
    pa.bool_(),
    pa.int32(),
    pa.int64(),
    pa.float32(),
    pa.float64(),
    pa.string(),
    pa.binary(),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
]
# Field names that cannot collide with Avro's primitive type names (a record is named after its field).
field_names = st.from_regex(r"\A[a-z][a-zA-Z0-9_]{0,8}\Z").map(lambda n: f"f_{n}")
decimals = st.integers(1, 38).flatmap(
    lambda p: st.integers(0, p).map(lambda s: pa.decimal128(p, s))
)
leaves = st.sampled_from(PRIMITIVES) | decimals


def fields(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[list[pa.Field]]:
    return st.lists(
        st.tuples(field_names, children, st.booleans()),
        min_size=1,
        max_size=4,
        unique_by=lambda f: f[0],
    ).map(lambda items: [pa.field(name, kind, nullable=nullable) for name, kind, nullable in items])


def nested(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    return st.one_of(
        fields(children).map(pa.struct),
        st.tuples(children, st.booleans()).map(
            lambda c: pa.list_(pa.field("element", c[0], nullable=c[1]))
        ),
        st.tuples(children, st.booleans()).map(
            lambda c: pa.map_(pa.string(), pa.field("value", c[0], nullable=c[1]))
        ),
    )


types = st.recursive(leaves, nested, max_leaves=8)
schemas = fields(types).map(pa.schema)
table_names = st.from_regex(r"\A[a-z][a-z0-9_]{0,12}\Z")


@SETTINGS
@given(schemas, table_names)
def test_arrow_to_avro_to_arrow_gives_back_the_schema(schema, table):
    assert avro_to_arrow(arrow_to_avro_json(schema, table)) == schema


@SETTINGS
@given(schemas, table_names)
def test_avro_to_arrow_to_avro_gives_back_identical_json(schema, table):
    avro = arrow_to_avro(schema, table)
    text = json.dumps(avro, separators=(",", ":"))
    assert arrow_to_avro_json(avro_to_arrow(text), table) == text


@SETTINGS
@given(schemas, table_names)
def test_generated_avro_is_a_valid_schema_with_hudi_record_name(schema, table):
    avro = arrow_to_avro(schema, table, with_meta_fields=True)
    parsed = fastavro.parse_schema(avro)
    assert parsed["name"] == f"hoodie.{table}.{table}_record"
    assert [f["name"] for f in avro["fields"]][:5] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]


@SETTINGS
@given(schemas, table_names)
def test_nullable_fields_are_null_first_unions_with_null_default(schema, table):
    for arrow_field, avro_field in zip(schema, arrow_to_avro(schema, table)["fields"]):
        if arrow_field.nullable:
            assert avro_field["type"][0] == "null" and avro_field["default"] is None
            assert len(avro_field["type"]) == 2
        else:
            assert "default" not in avro_field and not isinstance(avro_field["type"], list)


@SETTINGS
@given(st.integers(1, 38))
def test_decimal_fixed_size_is_the_smallest_that_holds_the_precision(precision):
    size = decimal_fixed_size(precision)
    assert 2 ** (8 * size - 1) >= 10**precision
    assert size == 1 or 2 ** (8 * (size - 1) - 1) < 10**precision
