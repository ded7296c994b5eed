"""Hostile values (issue 14): partition values, column and table names from upstream systems.

Each write either raises a pyhudi error with the table byte-for-byte unchanged, or succeeds and
hudi-rs reads every row; no file ever appears outside the table root.
"""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.errors import AnalysisException, PythonException, StreamingQueryException
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.hostile import rendered, text, values
from tests.helpers.oracle import hudi_rs_table
from tests.helpers.pyspark_versions import raises_from_format_hudi
from tests.helpers.trees import files_outside, tree_bytes

import pyhudi
from pyhudi.exceptions import ConfigError, InvalidRecordError, SchemaMismatchError
from pyhudi.storage.segments import partition_path_problem
from pyhudi.table.context import TableContext

URLENCODE = "hoodie.datasource.write.partitionpath.urlencode"
SANITIZE = "hoodie.streamer.source.sanitize.invalid.schema.field.names"


@pytest.fixture
def table(spark, tmp_path):
    """A table at `<tmp>/a/b/t` with 6 rows, as in the issue."""
    path = str(tmp_path / "a" / "b" / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    pyhudi.write(df_of(spark, trips(0, 6)), path, options)
    return path


def _upsert(spark, path, city, **extra):
    rows = [*trips(100, 2), dict(trips(200, 1)[0], city=city)]
    return pyhudi.write(df_of(spark, rows), path, {**trips_options(), **extra})


@pytest.mark.parametrize(
    ("city", "problem"),
    [
        ("../../escape", "'..' path segment"),
        ("/somewhere", "empty path segment"),
        ("line\nbreak", "U+000A"),
        ("x/./y", "'.' path segment"),
        ("é" * 200, "400 bytes"),
    ],
)
def test_hostile_partition_values_are_rejected_before_anything_is_written(
    spark, tmp_path, table, city, problem
):
    before, around = tree_bytes(table), tree_bytes(tmp_path)
    with pytest.raises(InvalidRecordError) as err:
        _upsert(spark, table, city)
    message = str(err.value)
    assert "'id-00200'" in message and "'city'" in message and repr(city) in message
    assert problem in message
    assert tree_bytes(table) == before
    assert tree_bytes(tmp_path) == around  # nothing outside either (no partition, no marker)
    assert not os.path.exists("/somewhere")
    assert len(hudi_rs_table(table)) == 6


def test_a_new_table_with_a_hostile_value_is_never_created(spark, tmp_path):
    path = tmp_path / "a" / "b" / "new"
    with pytest.raises(InvalidRecordError, match="escape"):
        _upsert(spark, str(path), "../../escape")
    assert tree_bytes(tmp_path) == {} and not path.exists()


def test_urlencode_writes_hostile_values_encoded_and_reads_them_back(spark, tmp_path):
    path = str(tmp_path / "a" / "b" / "t")
    cities = ["line\nbreak", "a/b", "/abs", "x:y", "50%", "tab\there"]
    rows = [dict(trips(i, 1)[0], city=c) for i, c in enumerate(cities)]
    options = {**trips_options(), URLENCODE: "true"}
    result = pyhudi.write(df_of(spark, rows), path, options)
    assert set(result.partitions_written) == {
        "line%0Abreak",
        "a%2Fb",
        "%2Fabs",
        "x%3Ay",
        "50%25",
        "tab%09here",
    }
    assert sorted(os.listdir(path)) == sorted([".hoodie", *result.partitions_written])
    ours = {r["uuid"]: r["city"] for r in pyhudi.read(spark, path).collect()}
    theirs = hudi_rs_table(path).to_pydict()
    assert ours == {r["uuid"]: r["city"] for r in rows}  # read back decoded: the original values
    assert dict(zip(theirs["uuid"], theirs["city"], strict=True)) == ours
    with pytest.raises(InvalidRecordError, match=r"'\.\.' path segment"):
        _upsert(spark, path, "..", **{URLENCODE: "true"})  # '.' is not escaped: still rejected
    assert files_outside(tmp_path, path) == set()


def test_what_hudi_allows_stays_allowed(spark, tmp_path):
    path = str(tmp_path / "t")
    cities = ["2024/01/31", None, "", "東京", "São Paulo", "..a", "50%"]
    rows = [dict(trips(i, 1)[0], city=c) for i, c in enumerate(cities)]
    rows[1]["city"] = None
    result = pyhudi.write(df_of(spark, rows), path, trips_options())
    assert set(result.partitions_written) == {
        "2024/01/31",
        "__HIVE_DEFAULT_PARTITION__",
        "東京",
        "São Paulo",
        "..a",
        "50%",
    }
    assert len(hudi_rs_table(path)) == len(rows)
    hive = str(tmp_path / "hive")
    options = {**trips_options(), "hoodie.datasource.write.hive_style_partitioning": "true"}
    rows = [dict(trips(i, 1)[0], city=c) for i, c in enumerate(["..", ".", "a"])]
    pyhudi.write(df_of(spark, rows), hive, options)  # `city=..` is a plain folder name
    assert sorted(os.listdir(hive)) == [".hoodie", "city=.", "city=..", "city=a"]
    assert len(hudi_rs_table(hive)) == 3


@pytest.mark.parametrize("name", ["fare amount", "fare`amount"])  # a back-quote: Spark SQL's quote
def test_an_invalid_column_name_is_rejected_unless_sanitizing_is_on(spark, tmp_path, name):
    path = str(tmp_path / "t")
    frame = df_of(spark, trips(0, 3)).withColumnRenamed("fare", name)
    with pytest.raises(SchemaMismatchError, match=rf"'{name}'.*sanitize"):
        pyhudi.write(frame, path, trips_options())
    assert tree_bytes(tmp_path) == {}
    pyhudi.write(frame, path, {**trips_options(), SANITIZE: "true"})
    assert "fare__amount" in pyhudi.read(spark, path).columns
    theirs = hudi_rs_table(path)
    assert sorted(theirs.column("fare__amount").to_pylist()) == [0.1, 1.1, 2.1]


def test_nested_names_are_checked_and_sanitized_with_the_mask(spark, tmp_path):
    path = str(tmp_path / "t")
    frame = spark.sql(
        "select 'k1' as uuid, 'sf' as city, 1L as ts, named_struct('in ner', 5, 'ok', 6) as s"
    )
    with pytest.raises(SchemaMismatchError, match=r"'s\.in ner'"):
        pyhudi.write(frame, path, trips_options())
    options = {
        **trips_options(),
        SANITIZE: "true",
        "hoodie.streamer.source.sanitize.invalid.char.mask": "_",
    }
    pyhudi.write(frame, path, options)
    (row,) = pyhudi.read(spark, path).select("s").collect()
    assert row["s"].asDict() == {"in_ner": 5, "ok": 6}
    assert hudi_rs_table(path).column("s").to_pylist() == [{"in_ner": 5, "ok": 6}]


def test_a_path_like_table_name_is_a_config_error(spark, tmp_path):
    path = str(tmp_path / "a" / "b" / "t")
    with pytest.raises(ConfigError, match=r"hoodie.table.name '\.\./evil'"):
        pyhudi.write(df_of(spark, trips(0, 2)), path, trips_options(name="../evil"))
    assert tree_bytes(tmp_path) == {}


def test_table_names_get_hudis_sanitized_record_name(spark, tmp_path):
    path = str(tmp_path / "t")
    pyhudi.write(df_of(spark, trips(0, 3)), path, trips_options(name="my-table"))
    ctx = TableContext.open(path)
    schema = json.loads(ctx.config.props["hoodie.table.create.schema"])
    assert (schema["name"], schema["namespace"]) == ("my__table_record", "hoodie.my__table")
    assert ctx.config.name == "my-table"
    assert len(hudi_rs_table(path)) == 3


def test_data_source_writes_reject_hostile_values_and_leave_the_table(spark, tmp_path, table):
    before, around = tree_bytes(table), tree_bytes(tmp_path)
    rows = [dict(trips(300, 1)[0], city="../../escape")]
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    with raises_from_format_hudi(
        PythonException, "InvalidRecordError", "partition path field 'city'"
    ):
        df_of(spark, rows).write.format("hudi").options(**options).mode("append").save(table)
    assert tree_bytes(table) == before and tree_bytes(tmp_path) == around
    fresh = tmp_path / "fresh"
    with raises_from_format_hudi(
        PythonException, "InvalidRecordError", "partition path field 'city'"
    ):
        df_of(spark, rows).write.format("hudi").options(**options).mode("append").save(str(fresh))
    assert tree_bytes(fresh) == {}  # the table it created is gone again
    frame = df_of(spark, trips(0, 2)).withColumnRenamed("fare", "fare amount")
    with raises_from_format_hudi(AnalysisException, "SchemaMismatchError", "'fare amount'"):
        frame.write.format("hudi").options(**options).mode("append").save(str(tmp_path / "x"))
    assert tree_bytes(tmp_path / "x") == {}


def test_a_data_source_write_rejected_in_one_task_removes_the_partition_another_task_made(
    spark, tmp_path, table
):
    """One task writes a new valid partition, the other rejects a value: the abort removes the
    data file, and the new partition's folder and metafile too."""
    before, around = tree_bytes(table), tree_bytes(tmp_path)
    rows = [dict(trips(300, 1)[0], city="brand_new"), dict(trips(301, 1)[0], city="../../escape")]
    frame = df_of(spark, rows).repartition(2, "city")
    assert sorted(len(p) for p in frame.rdd.glom().collect()) == [1, 1]
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    with raises_from_format_hudi(
        PythonException, "InvalidRecordError", "partition path field 'city'"
    ):
        frame.write.format("hudi").options(**options).mode("append").save(table)
    assert tree_bytes(table) == before and tree_bytes(tmp_path) == around


def test_stream_write_rejects_a_hostile_micro_batch(spark, tmp_path, table):
    source = tmp_path / "in"
    source.mkdir()
    (source / "batch.json").write_text(json.dumps(dict(trips(400, 1)[0], city="/somewhere")) + "\n")
    before = tree_bytes(table)
    stream = spark.readStream.schema("uuid string, city string, ts long, rider string, fare double")
    query = pyhudi.stream_write(
        stream.json(str(source)),
        table,
        trips_options(),
        checkpoint_location=str(tmp_path / "chk"),
        trigger={"availableNow": True},
    )
    with pytest.raises(
        StreamingQueryException, match=r"InvalidRecordError: .*partition path field 'city'"
    ):
        query.awaitTermination(120)
    assert tree_bytes(table) == before
    assert not os.path.exists("/somewhere")


def _write_options(urlencode: bool) -> dict[str, str]:
    return {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        URLENCODE: str(urlencode).lower(),
    }


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(value=values, key=text.filter(lambda k: k not in ("k0", "")), urlencode=st.booleans())
def test_random_partition_values_through_pyhudi_write(spark, value, key, urlencode) -> None:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        parent = os.path.join(tmp, "a", "b")
        path = os.path.join(parent, "t")
        options = {**_write_options(urlencode), "hoodie.datasource.write.operation": "upsert"}
        pyhudi.write(
            spark.createDataFrame([("base", "base", 0)], "id string, p string, ts long"),
            path,
            options,
        )
        before, around = tree_bytes(path), tree_bytes(tmp)
        frame = spark.createDataFrame(
            [("k0", "ok", 1), (key, value, 2)], "id string, p string, ts long"
        )
        try:
            pyhudi.write(frame, path, options)
        except InvalidRecordError:
            assert partition_path_problem(rendered(value, urlencode, False)) is not None
            assert tree_bytes(path) == before and tree_bytes(tmp) == around
            return
        assert partition_path_problem(rendered(value, urlencode, False)) is None
        assert files_outside(parent, path) == set()
        theirs = hudi_rs_table(path)
        assert (
            dict(zip(theirs.column("id").to_pylist(), theirs.column("p").to_pylist()))[key] == value
        )


def _bootstrap_options(source: str, selector: str, **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "bt",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.operation": "bootstrap",
        "hoodie.bootstrap.base.path": source,
        "hoodie.bootstrap.mode.selector": (
            f"org.apache.hudi.client.bootstrap.selector.{selector}BootstrapModeSelector"
        ),
        **extra,
    }


def test_bootstrap_rejects_invalid_source_columns_before_creating_the_table(spark, tmp_path):
    source, target = str(tmp_path / "src"), tmp_path / "hudi"
    frame = df_of(spark, trips(0, 4)).withColumnRenamed("fare", "fare amount")
    frame.write.partitionBy("city").parquet(source)
    with pytest.raises(SchemaMismatchError, match="'fare amount'"):
        pyhudi.write(
            spark.createDataFrame([], "x int"),
            str(target),
            _bootstrap_options(source, "MetadataOnly"),
        )
    assert not target.exists()


def test_bootstrap_rejects_folders_that_decode_to_hostile_partition_paths(spark, tmp_path):
    source, target = str(tmp_path / "src"), tmp_path / "hudi"
    df_of(spark, trips(0, 4, city="line\nbreak")).write.partitionBy("city").parquet(source)
    assert os.listdir(source).count("city=line%0Abreak") == 1  # Spark escapes the folder name
    translator = (
        "org.apache.hudi.client.bootstrap.translator.DecodedBootstrapPartitionPathTranslator"
    )
    options = _bootstrap_options(
        source, "MetadataOnly", **{"hoodie.bootstrap.partitionpath.translator.class": translator}
    )
    with pytest.raises(InvalidRecordError, match=r"city=line%0Abreak.*U\+000A"):
        pyhudi.write(spark.createDataFrame([], "x int"), str(target), options)
    assert not target.exists()
    pyhudi.write(  # the identity translator keeps the escaped folder name: a valid path
        spark.createDataFrame([], "x int"), str(target), _bootstrap_options(source, "MetadataOnly")
    )
    assert len(hudi_rs_table(str(target))) == 4


def test_full_record_bootstrap_checks_partition_values_from_the_key_generator(spark, tmp_path):
    source, target = str(tmp_path / "src"), tmp_path / "hudi"
    df_of(spark, trips(0, 4, city="../../escape")).write.parquet(source)  # not partitioned
    options = _bootstrap_options(
        source, "FullRecord", **{"hoodie.datasource.write.hive_style_partitioning": "false"}
    )
    around = tree_bytes(tmp_path)
    with pytest.raises(InvalidRecordError, match="partition path field 'city'"):
        pyhudi.write(spark.createDataFrame([], "x int"), str(target), options)
    assert tree_bytes(tmp_path) == around and not target.exists()  # the created table is gone
