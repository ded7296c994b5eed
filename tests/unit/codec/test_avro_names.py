"""Avro name rules and Hudi's sanitizing (HoodieAvroUtils.sanitizeName) for columns and tables."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pyhudi.codec.avro_names import (
    check_field_names,
    check_table_name,
    invalid_field_names,
    is_valid_name,
    sanitize_name,
    sanitized_schema,
)
from pyhudi.codec.schema import arrow_to_avro_json, record_name
from pyhudi.exceptions import ConfigError, SchemaMismatchError


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fare_amount", "fare_amount"),
        ("fare amount", "fare__amount"),
        ("1st", "__st"),
        ("a.b-c", "a__b__c"),
        ("../evil", "______evil"),
        ("größe", "gr____e"),
        ("_x9", "_x9"),
    ],
)
def test_sanitize_name_follows_hudi(name: str, expected: str) -> None:
    assert sanitize_name(name) == expected
    assert is_valid_name(sanitize_name(name))


def test_sanitize_name_with_another_mask() -> None:
    assert sanitize_name("fare amount", "_") == "fare_amount"


def test_invalid_field_names_are_found_at_any_depth() -> None:
    schema = pa.schema(
        [
            ("ok", pa.int32()),
            ("fare amount", pa.string()),
            ("s", pa.struct([("in ner", pa.int32()), ("fine", pa.int32())])),
            ("l", pa.list_(pa.struct([("x-y", pa.int32())]))),
            ("m", pa.map_(pa.string(), pa.struct([("a.b", pa.int32())]))),
        ]
    )
    assert invalid_field_names(schema) == ["fare amount", "s.in ner", "l[].x-y", "m{}.a.b"]
    with pytest.raises(SchemaMismatchError, match=r"'fare amount'.*sanitize"):
        check_field_names(schema)
    assert invalid_field_names(sanitized_schema(schema, "__")) == []
    assert sanitized_schema(schema, "__").field("s").type.field(0).name == "in__ner"


@pytest.mark.parametrize("name", ["../evil", "a/b", "a\\b", "", " ", ".", "..", "t\n"])
def test_path_like_table_names_are_a_config_error(name: str) -> None:
    with pytest.raises(ConfigError, match=r"hoodie\.table\.name"):
        check_table_name(name)


def test_table_names_become_valid_record_names_as_hudi_makes_them() -> None:
    check_table_name("my-table")
    assert record_name("my-table") == ("my__table_record", "hoodie.my__table")
    schema = json.loads(arrow_to_avro_json(pa.schema([("id", pa.string())]), "my-table"))
    assert schema["name"] == "my__table_record"
    assert record_name("trips") == ("trips_record", "hoodie.trips")  # valid names unchanged
