"""Hypothesis: random partition values, record keys and column names never escape or break a table.

Each write either raises a pyhudi error with the table byte-for-byte unchanged, or succeeds and
hudi-rs reads every row; no file ever appears outside the table root. The many examples go
through the Spark-free Arrow write path (the Data Source writer, driven directly, no JVM); a few
go through `pyhudi.write` on the shared Spark session in tests/spark/test_hostile_values.py, with
the explicit cases.
"""

from __future__ import annotations

import os
import tempfile

import hudi
import pyarrow as pa
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import LongType, StringType, StructField, StructType
from tests.helpers.hostile import column_names, rendered, text, values
from tests.helpers.trees import files_outside, tree_bytes

from pyhudi.codec.avro_names import is_valid_name, sanitize_name
from pyhudi.exceptions import HudiError, InvalidRecordError, SchemaMismatchError
from pyhudi.spark.source_writer import HudiDataSourceWriter
from pyhudi.storage.segments import partition_path_problem

FIXED = ("id", "p", "ts")


def _options(urlencode: bool, hive: bool, sanitize: bool = False) -> dict[str, str]:
    return {
        "hoodie.streamer.source.sanitize.invalid.schema.field.names": str(sanitize).lower(),
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.operation": "insert",
        "hoodie.datasource.write.partitionpath.urlencode": str(urlencode).lower(),
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
    }


def _write(path: str, options: dict[str, str], rows: dict[str, list]) -> None:
    names = list(rows)
    schema = StructType([StructField(n, LongType() if n == "ts" else StringType()) for n in names])
    writer = HudiDataSourceWriter(path, options, schema, False)
    try:
        message = writer.write(iter([pa.record_batch(rows)]))
        writer.commit([message])
    except BaseException:
        writer.abort([])
        raise


def _hudi_rs_table(path: str) -> pa.Table:
    return pa.Table.from_batches(hudi.HudiTable(path).read(hudi.HudiReadOptions()))


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    value=values,
    key=text,
    column=column_names,
    urlencode=st.booleans(),
    hive=st.booleans(),
    sanitize=st.booleans(),
    existing=st.booleans(),
)
def test_random_hostile_values_fail_cleanly_or_read_back(
    value: str,
    key: str,
    column: str,
    urlencode: bool,
    hive: bool,
    sanitize: bool,
    existing: bool,
) -> None:
    stored = sanitize_name(column) if sanitize else column
    # Column names are case-insensitive for Spark and hudi-rs: `P` beside `p` is refused.
    taken = {name.lower() for name in FIXED}
    assume(column not in FIXED)
    assume(not stored.lower().startswith("_hoodie"))
    assume(key not in ("k0", "base"))
    with tempfile.TemporaryDirectory() as tmp:
        parent = os.path.join(tmp, "a", "b")
        path = os.path.join(parent, "t")
        options = _options(urlencode, hive, sanitize)
        if existing:
            _write(path, options, {"id": ["base"], "p": ["base"], "ts": [0]})
        before, around = tree_bytes(path), tree_bytes(tmp)
        rows = {"id": ["k0", key], "p": ["ok", value], "ts": [1, 2], column: ["v0", "v1"]}
        expected_ok = (
            key != ""
            and (sanitize or is_valid_name(column))
            and stored.lower() not in taken
            and partition_path_problem(rendered(value, urlencode, hive)) is None
        )
        try:
            _write(path, options, rows)
        except HudiError as err:
            assert isinstance(err, InvalidRecordError | SchemaMismatchError), err
            event(f"rejected: {type(err).__name__}")
            assert not expected_ok, f"rejected a value Hudi allows: {err}"
            assert tree_bytes(path) == before
            assert tree_bytes(tmp) == around
            return
        assert expected_ok, "accepted a value that cannot be a folder of the table"
        event("written and read by hudi-rs")
        assert files_outside(parent, path) == set()
        theirs = _hudi_rs_table(path)
        assert theirs.num_rows == 2 + int(existing)
        assert sorted(theirs.column(stored).drop_null().to_pylist()) == ["v0", "v1"]
        by_key = dict(zip(theirs.column("id").to_pylist(), theirs.column("p").to_pylist()))
        assert by_key[key] == value  # the original value, encoded or not on disk
