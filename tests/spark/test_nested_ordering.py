"""A nested precombine field (`meta.ts`, Hudi's `getNestedFieldVal`): the in-batch combine, the
event-time merge with the base and between log versions, compaction and every read path order by
it, as by a top-level field."""

from __future__ import annotations

import pytest
from tests.helpers.builders import trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.services.compaction.execute import run_compaction
from pyhudi.table.context import TableContext

SCHEMA = "uuid string, city string, meta struct<ts: bigint>, v int"
EVENT_TIME = {
    "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
}


def _write(spark, path, records, options, operation="upsert"):
    frame = spark.createDataFrame(records, SCHEMA)
    pyhudi.write(frame, path, {**options, "hoodie.datasource.write.operation": operation})


def _values(spark, path):
    """uuid -> v from the Spark read and the Arrow read, which must agree."""
    spark_read = {r["uuid"]: r["v"] for r in pyhudi.read(spark, path).collect()}
    arrow_read = {r["uuid"]: r["v"] for r in rows(pyhudi.HudiTable(path).to_arrow())}
    assert spark_read == arrow_read
    return spark_read


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("event_time", [False, True])
def test_a_nested_precombine_field_orders_records(spark, tmp_path, table_type, event_time):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.datasource.write.precombine.field": "meta.ts",
        "hoodie.datasource.write.table.type": table_type,
        **(EVENT_TIME if event_time else {}),
    }
    _write(spark, path, [(k, "sf", (5,), 1) for k in "abc"], options, "bulk_insert")
    # a: a stale update (3 < 5); b: two versions in one batch, the greater ordering value wins
    # even though it comes first; c: untouched.
    _write(spark, path, [("a", "sf", (3,), 2), ("b", "sf", (7,), 2), ("b", "sf", (6,), 3)], options)
    expected = {"a": 1 if event_time else 2, "b": 2, "c": 1}
    assert _values(spark, path) == expected
    # Another version of b with a smaller ordering value: the second log version on MOR, where
    # log versions meet by ordering value under every payload (Hudi 0.15's log scan).
    _write(spark, path, [("b", "sf", (6,), 4)], options)
    expected["b"] = 2 if event_time or table_type == "MERGE_ON_READ" else 4
    assert _values(spark, path) == expected
    if table_type == "COPY_ON_WRITE":  # hudi-rs: top-level ordering fields, latest log version
        assert {r["uuid"]: r["v"] for r in rows(hudi_rs_table(path))} == expected
    if table_type == "MERGE_ON_READ":
        assert run_compaction(
            spark,
            TableContext.open(path),
            {**options, "hoodie.compact.inline.max.delta.commits": "1"},
        )
        assert _values(spark, path) == expected
        assert {r["uuid"]: r["v"] for r in rows(hudi_rs_table(path))} == expected
