"""`keygen.spark_sql.record_key_sql` gives the values of `keygen.spark.record_key_column` (the
writer's key expression): simple, complex, timestamp, nested and folder-value keys, and the same
job failure for a null key."""

from __future__ import annotations

import datetime as dt

import pytest
from py4j.protocol import Py4JJavaError
from pyspark.errors import SparkRuntimeException

from pyhudi.keygen.spark import KEY_ERROR_PREFIX, record_key_column
from pyhudi.keygen.spark_sql import record_key_sql, sql_json_constant, sql_string
from pyhudi.keygen.spec import KeyGenKind, KeyGenSpec

SCHEMA = "id int, name string, at timestamp, nest struct<`in ner`:string>"
ROWS = [
    (1, "a", dt.datetime(2022, 10, 8, 1, 2, 3, 456789), ("x",)),
    (2, None, None, ("y",)),
    (3, "", dt.datetime(1969, 12, 31, 23, 59, 59), ("",)),
    (None, "d'\\q", dt.datetime(2022, 1, 1), ("z",)),
]


def _spec(fields: str) -> KeyGenSpec:
    names = tuple(fields.split(","))
    kind = KeyGenKind.COMPLEX if len(names) > 1 else KeyGenKind.NON_PARTITION
    return KeyGenSpec(
        kind=kind,
        record_key_fields=names,
        partition_fields=(),
        hive_style=False,
        url_encode=False,
        timestamp=None,
    )


@pytest.mark.parametrize("fields", ["name,id", "id,at", "at,nest.in ner,name", "nest.in ner,id"])
def test_complex_keys_in_sql_equal_the_column_expression(spark, fields) -> None:
    frame = spark.createDataFrame(ROWS, SCHEMA)
    spec = _spec(fields)
    expected = frame.select(record_key_column(frame, spec).alias("k"))
    produced = frame.selectExpr(f"{record_key_sql(spec, frame.schema)} AS k")
    assert sorted(expected.collect()) == sorted(produced.collect())


def test_a_simple_key_and_a_folder_value_in_sql(spark) -> None:
    frame = spark.createDataFrame(ROWS[:1] + ROWS[3:], SCHEMA).where("name IS NOT NULL")
    assert frame.selectExpr(record_key_sql(_spec("name"), frame.schema)).collect()[0][0] == "a"
    at = frame.select(record_key_column(frame, _spec("at")).alias("k")).collect()
    assert frame.selectExpr(f"{record_key_sql(_spec('at'), frame.schema)} AS k").collect() == at
    folder = {"dt": sql_string("2022-10-08")}
    keys = frame.selectExpr(record_key_sql(_spec("dt,name"), frame.schema, folder)).collect()
    assert sorted(r[0] for r in keys) == ["dt:2022-10-08,name:a", "dt:2022-10-08,name:d'\\q"]


def test_a_null_simple_key_fails_the_job_with_the_writer_message(spark) -> None:
    frame = spark.createDataFrame(ROWS, SCHEMA)
    # pyspark 3.5 gives the JVM's RuntimeException as a Py4JJavaError
    with pytest.raises((SparkRuntimeException, Py4JJavaError), match=KEY_ERROR_PREFIX + ".*'name'"):
        frame.selectExpr(record_key_sql(_spec("name"), frame.schema)).collect()


def test_a_json_constant_is_the_value_in_spark_types(spark) -> None:
    value = {"a'b\\c.parquet": [1, -(2**63)], "`x`": []}
    literal = sql_json_constant(value, "map<string,array<bigint>>")
    (row,) = spark.sql(f"SELECT {literal} AS m, {literal}['`x`'] AS x").collect()
    assert (row["m"], row["x"]) == (value, [])
    struct = sql_json_constant({"k": {"in ner": "v"}}, "map<string,struct<`in ner`:string>>")
    assert spark.sql(f"SELECT {struct}['k'].`in ner` AS v").first()["v"] == "v"
