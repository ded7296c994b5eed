"""Incoming column names: Avro-valid, unique, and not ambiguous up to case (no Spark session)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from pyhudi.exceptions import SchemaMismatchError
from pyhudi.writer.column_names import conformed_schema

SANITIZE = {"hoodie.streamer.source.sanitize.invalid.schema.field.names": "true"}


def _schema(*names: str) -> T.StructType:
    return T.StructType([T.StructField(n, T.StringType()) for n in names])


def test_names_differing_only_in_case_are_refused():
    with pytest.raises(SchemaMismatchError, match="'p' and 'P' differ only in case"):
        conformed_schema(_schema("id", "p", "P"), {})


def test_nested_names_differing_only_in_case_are_refused_with_their_record():
    inner = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("A", T.IntegerType())])
    schema = T.StructType([T.StructField("id", T.StringType()), T.StructField("s", inner)])
    with pytest.raises(SchemaMismatchError, match="'a' and 'A' of 's' differ only in case"):
        conformed_schema(schema, {})


def test_names_that_sanitize_to_the_same_name_are_refused():
    with pytest.raises(SchemaMismatchError, match="both sanitize to 'a__b'"):
        conformed_schema(_schema("a-b", "a.b"), SANITIZE)


def test_distinct_names_pass_unchanged():
    schema = _schema("id", "p", "q_1")
    assert conformed_schema(schema, {}) == schema
