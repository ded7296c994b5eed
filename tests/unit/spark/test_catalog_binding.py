"""Catalog tables' bindings and sync naming, without a JVM."""

from __future__ import annotations

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from pyhudi.exceptions import ConfigError
from pyhudi.spark.catalog import (
    CatalogBinding,
    attach_binding,
    binding_from_properties,
    binding_of,
    is_catalog_create,
)
from pyhudi.spark.source_operations import sql_insert_options

# What Spark hands the source at CREATE TABLE ... LOCATION ... TBLPROPERTIES (...): lower-cased keys.
CREATE_OPTIONS = {
    "location": "file:/data/trips",
    "path": "file:/data/trips",
    "provider": "hudi",
    "owner": "root",
    "primarykey": "uuid",
    "precombinefield": "ts",
    "type": "mor",
    "hoodie.datasource.query.type": "read_optimized",
    "hoodie.spark.sql.insert.into.operation": "bulk_insert",
    "option.k": "v",
}


def test_table_properties_map_to_hudi_option_keys():
    binding = binding_from_properties("file:/data/trips", CREATE_OPTIONS)
    assert binding == CatalogBinding(
        "file:/data/trips",
        {
            "hoodie.datasource.write.recordkey.field": "uuid",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.query.type": "read_optimized",
            "hoodie.spark.sql.insert.into.operation": "bulk_insert",
        },
    )
    assert is_catalog_create(CREATE_OPTIONS) and not is_catalog_create({"path": "/data/trips"})


def test_a_bad_table_type_property_names_the_property():
    with pytest.raises(ConfigError, match=r"'merge' for table property type: expected cow or mor"):
        binding_from_properties("/t", {"type": "merge"})


def test_the_binding_survives_the_stored_schema_and_is_absent_elsewhere():
    schema = StructType(
        [StructField("_hoodie_commit_time", StringType()), StructField("ts", LongType())]
    )
    binding = CatalogBinding("file:/data/trips", {"hoodie.datasource.query.type": "snapshot"})
    stored = StructType.fromJson(
        attach_binding(schema, binding).jsonValue()
    )  # as the catalog keeps it
    assert binding_of(stored) == binding
    assert [f.name for f in stored.fields] == ["_hoodie_commit_time", "ts"]
    assert binding_of(schema) is None and binding_of(StructType([])) is None


def test_sql_insert_into_defaults_to_hudis_insert_into_operation():
    assert sql_insert_options({})["hoodie.datasource.write.operation"] == "insert"
    bulk = {"hoodie.spark.sql.insert.into.operation": "bulk_insert"}
    assert sql_insert_options(bulk)["hoodie.datasource.write.operation"] == "bulk_insert"
    given = {"hoodie.datasource.write.operation": "upsert"}
    assert sql_insert_options(given) == given
