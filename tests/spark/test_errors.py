"""Bad input gets a clear error and loses nothing: the table is exactly as it was."""

from __future__ import annotations

import os

import pytest
from pyspark.errors import PythonException
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.pyspark_versions import raises_from_format_hudi

import pyhudi
from pyhudi.exceptions import (
    ConfigError,
    InvalidRecordError,
    SchemaMismatchError,
    UnsupportedOperationError,
)


def _snapshot_files(path: str) -> dict[str, int]:
    found = {}
    for folder, _, files in os.walk(path):
        for name in files:
            full = os.path.join(folder, name)
            found[os.path.relpath(full, path)] = os.path.getsize(full)
    return found


@pytest.fixture
def table(spark, tmp_path):
    path = str(tmp_path / "t")
    pyhudi.write(
        df_of(spark, trips(0, 9)),
        path,
        {**trips_options(), "hoodie.datasource.write.operation": "insert"},
    )
    return path


def _assert_untouched(spark, path, before):
    assert _snapshot_files(path) == before
    assert pyhudi.read(spark, path).count() == 9


def test_null_record_key_is_rejected_and_rolled_back(spark, table):
    before = _snapshot_files(table)
    rows = trips(100, 3)
    rows[1]["uuid"] = None
    with pytest.raises(InvalidRecordError, match="uuid"):
        pyhudi.write(
            df_of(spark, rows),
            table,
            {**trips_options(), "hoodie.datasource.write.operation": "upsert"},
        )
    _assert_untouched(spark, table, before)


@pytest.mark.parametrize(
    ("operation", "extra", "refused"),
    [
        ("upsert", {}, True),
        ("upsert", {"hoodie.combine.before.upsert": "false"}, False),
        ("insert", {}, False),
        ("insert", {"hoodie.combine.before.insert": "true"}, True),
        ("bulk_insert", {}, False),
    ],
)
def test_a_null_ordering_value_is_refused_where_hudi_combines_by_it(
    spark, table, operation, extra, refused
):
    """Hudi 0.14's payloads throw "Ordering value is null for record" on the writes that combine
    records by the precombine field; pyhudi refuses the same writes, naming the record."""
    before = _snapshot_files(table)
    rows = trips(100, 3)
    rows[1]["ts"] = None
    options = {**trips_options(), "hoodie.datasource.write.operation": operation, **extra}
    if not refused:
        pyhudi.write(df_of(spark, rows), table, options)
        assert pyhudi.read(spark, table).filter("ts is null").count() == 1
        return
    with pytest.raises(InvalidRecordError) as err:
        pyhudi.write(df_of(spark, rows), table, options)
    assert "ordering field 'ts'" in str(err.value) and "'id-00101'" in str(err.value)
    assert "SQLSTATE" not in str(err.value)
    _assert_untouched(spark, table, before)
    if operation == "insert":  # the data source checks in its tasks (its upserts need BUCKET)
        writer = df_of(spark, rows).write.format("hudi").options(**options).mode("append")
        with raises_from_format_hudi(
            PythonException, "InvalidRecordError", r"ordering field 'ts'.*'id-00101'"
        ):
            writer.save(table)
        _assert_untouched(spark, table, before)


@pytest.mark.parametrize("parent_null", [False, True])
def test_a_null_nested_ordering_value_is_refused_by_both_writers(spark, tmp_path, parent_null):
    """`a.b` as the precombine field: a null `b`, or a null `a`, is a null ordering value."""
    path = str(tmp_path / "nested")
    schema = "uuid string, city string, meta struct<ts: bigint>"
    options = {
        **trips_options(),
        "hoodie.datasource.write.precombine.field": "meta.ts",
        "hoodie.datasource.write.operation": "insert",
        "hoodie.combine.before.insert": "true",
    }
    pyhudi.write(spark.createDataFrame([("id-1", "sf", (1,))], schema), path, options)
    before = _snapshot_files(path)
    bad = None if parent_null else (None,)
    rows = spark.createDataFrame([("id-2", "sf", (2,)), ("id-3", "sf", bad)], schema)
    with pytest.raises(InvalidRecordError, match=r"ordering field 'meta.ts'.*'id-3'"):
        pyhudi.write(rows, path, options)
    writer = rows.write.format("hudi").options(**options).mode("append")
    with raises_from_format_hudi(
        PythonException, "InvalidRecordError", r"ordering field 'meta.ts'.*'id-3'"
    ):
        writer.save(path)
    assert _snapshot_files(path) == before


def test_missing_record_key_field_names_the_field(spark, table):
    before = _snapshot_files(table)
    with pytest.raises(SchemaMismatchError, match="uuid"):
        pyhudi.write(df_of(spark, trips(0, 2)).drop("uuid"), table, trips_options())
    _assert_untouched(spark, table, before)


def test_missing_precombine_field_names_the_option(spark, table):
    before = _snapshot_files(table)
    with pytest.raises(SchemaMismatchError, match="precombine"):
        pyhudi.write(df_of(spark, trips(0, 2)).drop("ts"), table, trips_options())
    _assert_untouched(spark, table, before)


def test_missing_partition_field_is_rejected(spark, tmp_path):
    path = str(tmp_path / "new")
    with pytest.raises(SchemaMismatchError, match="city"):
        pyhudi.write(df_of(spark, trips(0, 2)).drop("city"), path, trips_options())
    assert not os.path.exists(os.path.join(path, ".hoodie"))


def test_unknown_operation_and_option_values_are_config_errors(spark, table):
    before = _snapshot_files(table)
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.write\.operation"):
        pyhudi.write(
            df_of(spark, trips(0, 2)),
            table,
            {**trips_options(), "hoodie.datasource.write.operation": "merge"},
        )
    with pytest.raises(ConfigError, match=r"hoodie\.index\.type"):
        pyhudi.write(
            df_of(spark, trips(0, 2)), table, {**trips_options(), "hoodie.index.type": "MAGIC"}
        )
    with pytest.raises(ConfigError, match="key generator"):
        pyhudi.write(
            df_of(spark, trips(0, 2)),
            table,
            {**trips_options(), "hoodie.datasource.write.keygenerator.class": "com.acme.KeyGen"},
        )
    _assert_untouched(spark, table, before)


def test_options_conflicting_with_the_table_are_rejected(spark, table):
    before = _snapshot_files(table)
    with pytest.raises(ConfigError, match="record key"):
        pyhudi.write(
            df_of(spark, trips(0, 2)),
            table,
            {**trips_options(), "hoodie.datasource.write.recordkey.field": "rider"},
        )
    with pytest.raises(ConfigError, match="table type"):
        pyhudi.write(
            df_of(spark, trips(0, 2)),
            table,
            {**trips_options(), "hoodie.datasource.write.table.type": "MERGE_ON_READ"},
        )
    _assert_untouched(spark, table, before)


def test_merge_on_read_only_operation_on_copy_on_write_is_rejected(spark, table):
    before = _snapshot_files(table)
    with pytest.raises(UnsupportedOperationError, match="MERGE_ON_READ"):
        pyhudi.write(
            df_of(spark, trips(0, 2)),
            table,
            {**trips_options(), "hoodie.datasource.write.operation": "compact"},
        )
    _assert_untouched(spark, table, before)


def test_type_narrowing_and_dropped_key_field_are_rejected(spark, table):
    before = _snapshot_files(table)
    from pyspark.sql import functions as F

    narrowed = df_of(spark, trips(0, 2)).withColumn("fare", F.col("fare").cast("float"))
    with pytest.raises(SchemaMismatchError, match="fare"):
        pyhudi.write(narrowed, table, trips_options())
    with pytest.raises(SchemaMismatchError, match="rider"):
        pyhudi.write(df_of(spark, trips(0, 2)).drop("rider"), table, trips_options())
    _assert_untouched(spark, table, before)


def test_a_write_asking_a_version_8_table_for_version_6_is_refused(spark, hudi_tables, tmp_path):
    import shutil

    copy = tmp_path / "v8"
    shutil.copytree(hudi_tables["cow__v8_nonpartitioned"], copy)
    before = sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir())
    df = spark.read.parquet(str(next(p for p in copy.glob("*.parquet")))).drop(
        *[c for c in ("_hoodie_commit_time",)]
    )
    options = {"hoodie.datasource.write.operation": "insert", "hoodie.write.table.version": "6"}
    with pytest.raises(UnsupportedOperationError, match="does not downgrade a table"):
        pyhudi.write(df, str(copy), options)
    assert sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir()) == before


def test_reading_a_folder_without_a_table_names_the_path(spark, tmp_path):
    with pytest.raises(pyhudi.TableNotFoundError, match="no Hudi table"):
        pyhudi.read(spark, str(tmp_path))
