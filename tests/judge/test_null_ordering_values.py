"""Null ordering values and stale deletes, judged by Apache Hudi 0.15: tables Hudi writes with
null precombine values (bulk_insert) and upserts over them read through pyhudi (Spark and Arrow,
before and after pyhudi's compaction) exactly as Hudi reads them; the `delete` operation and
`_hoodie_is_deleted` upserts with stale ordering values leave what Hudi leaves.

Hudi 0.15 facts pinned here (DefaultHoodieRecordPayload, precombine `ts`):
* a base record with a null ordering value is replaced by any upsert (`persisted == null`);
  an equal ordering value goes to the upsert, a smaller one loses;
* an upsert carrying a null ordering value fails ("Ordering value is null for record"), and a
  log record holding one (an `insert` into a bucket's log) fails Hudi's read the same way;
* the `delete` operation deletes whatever the ordering value, on COW and MOR;
* an upsert with `_hoodie_is_deleted=true` is a stale delete when its ordering value is smaller:
  ignored on COW; on MOR it deletes the base record anyway (the log scanner compares it only
  with earlier log records, the base merge lets a delete payload win), in the snapshot and after
  compaction.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

import pyhudi
from pyhudi.merge.ordering import ARROW, earlier_stays
from pyhudi.merge.ordering import SPARK as SPARK_ORDERING
from tests.judge.cached import hudi_written
from tests.judge.client import HUDI_0_15, Judge, JudgeError
from tests.judge.compare import assert_same_read, hudi_frame
from tests.judge.tables import base_options

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("part", pa.string()),
        ("ts", pa.int64()),
        ("v", pa.string()),
        ("_hoodie_is_deleted", pa.bool_()),
    ]
)
DDL = "id string, part string, ts long, v string, _hoodie_is_deleted boolean"
COLUMNS = ["_hoodie_record_key", "id", "part", "ts", "v"]


def rows(*values: tuple[Any, ...]) -> pa.Table:
    """(id, ts, v[, deleted]) per row, all in partition `a`."""
    full = [(r[0], "a", r[1], r[2], r[3] if len(r) > 3 else False) for r in values]
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r)) for r in full], SCHEMA)


def options(name: str, table_type: str, index: str = "BLOOM") -> dict[str, str]:
    return base_options(
        name,
        table_type,
        **{
            "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
            "hoodie.index.type": index,
            "hoodie.bucket.index.num.buckets": "1",
            "hoodie.compact.inline": "false",
        },
    )


def _op(o: dict[str, str], operation: str) -> dict[str, str]:
    return {**o, "hoodie.datasource.write.operation": operation}


def hudi_read(spark: SparkSession, judge: Judge, path: str) -> DataFrame:
    return hudi_frame(spark, judge.read(path)).select(*COLUMNS)


def assert_pyhudi_reads_as(spark: SparkSession, path: str, theirs: DataFrame, what: str) -> None:
    """pyhudi's Spark read and Arrow read both return Hudi's rows."""
    assert_same_read(pyhudi.read(spark, path).select(*COLUMNS), theirs, f"{what} (Spark)")
    arrow = pyhudi.read_arrow(path).select(COLUMNS).to_pylist()
    frame = spark.createDataFrame(arrow, schema=theirs.schema) if arrow else theirs.limit(0)
    assert_same_read(frame, theirs, f"{what} (Arrow)")


def test_the_ordering_rule_is_one_rule_in_arrow_and_in_spark(spark) -> None:  # type: ignore[no-untyped-def]
    pairs = [(5, 3), (5, 5), (3, 5), (None, 5), (None, None), (5, None)]
    earlier = pa.array([p[0] for p in pairs], pa.int64())
    later = pa.array([p[1] for p in pairs], pa.int64())
    arrow = earlier_stays(ARROW, [earlier], [later]).to_pylist()
    frame = spark.createDataFrame(pairs, "e long, l long")
    stays = earlier_stays(SPARK_ORDERING, [frame["e"]], [frame["l"]])
    assert [r[0] for r in frame.select(stays).collect()] == arrow
    assert arrow == [True, False, False, False, False, True]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_null_ordering_values_in_base_records_read_as_hudi_reads_them(  # type: ignore[no-untyped-def]
    spark, hudi_0_15, tmp_path, table_type
) -> None:
    path = str(tmp_path / "nulls")
    o = options(f"nulls_{table_type[:3].lower()}", table_type)
    base = rows(("k1", None, "b1"), ("k2", 5, "b2"), ("k3", None, "b3"), ("k4", 5, "b4"))
    hudi_0_15.write(path, base, _op(o, "bulk_insert"), mode="overwrite")
    # k1: null in the base, replaced; k2: stale, loses; k4: equal, replaces; k5: new.
    update = rows(("k1", 1, "u1"), ("k2", 3, "u2"), ("k4", 5, "u4"), ("k5", 2, "u5"))
    hudi_0_15.write(path, update, _op(o, "upsert"))
    theirs = hudi_read(spark, hudi_0_15, path)
    got = {r["id"]: r["v"] for r in theirs.collect()}
    assert got == {"k1": "u1", "k2": "b2", "k3": "b3", "k4": "u4", "k5": "u5"}
    assert_pyhudi_reads_as(spark, path, theirs, f"{table_type} snapshot")
    if table_type == "MERGE_ON_READ":
        pyhudi.HudiTable(path).compaction.run(spark)
        assert_pyhudi_reads_as(spark, path, theirs, "after pyhudi's compaction")
        assert_same_read(hudi_read(spark, hudi_0_15, path), theirs, "Hudi after compaction")
    with pytest.raises(JudgeError, match="Ordering value is null"):
        hudi_0_15.write(path, rows(("k2", None, "n2")), _op(o, "upsert"))


def test_hudi_cannot_read_a_log_record_with_a_null_ordering_value(
    spark, hudi_0_15, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """An `insert` into a bucket's log writes the null (no combine); Hudi's read then fails, so a
    null on the incoming side is pyhudi's own choice (`ordering.py`: smallest)."""
    path = str(tmp_path / "null_log")
    o = options("null_log", "MERGE_ON_READ", "BUCKET")
    hudi_0_15.write(path, rows(("k1", 5, "b1")), _op(o, "bulk_insert"), mode="overwrite")
    hudi_0_15.write(path, rows(("k1", None, "i1")), _op(o, "insert"))
    with pytest.raises(JudgeError):
        hudi_0_15.read(path)
    assert "Ordering value is null" in hudi_0_15.log_tail(200_000)
    assert pyhudi.read_arrow(path).column("v").to_pylist() == ["b1"]


DELETE_STEPS: list[tuple[str, pa.Table]] = [
    ("bulk_insert", rows(*[(f"k{i}", 5, f"b{i}") for i in range(1, 9)])),
    ("delete", rows(("k1", 1, "d1"), ("k2", 9, "d2"))),  # stale and newer: both deleted
    # `_hoodie_is_deleted`: stale (k3), newer (k4), equal (k5) ordering values
    ("upsert", rows(("k3", 1, "x3", True), ("k4", 9, "x4", True), ("k5", 5, "x5", True))),
    ("upsert", rows(("k6", 7, "u6"), ("k7", 7, "u7"))),
    ("upsert", rows(("k6", 6, "x6", True))),  # stale against an update in the same log
    ("delete", rows(("k7", 6, "x7"))),
]


def _write_steps(write: Any, o: dict[str, str]) -> None:
    """Both writers take every step: on MOR a `_hoodie_is_deleted` upsert's log delete carries
    its ordering value (Hudi 0.15's and pyhudi's), so the stale one of step 4 loses to the update
    with a greater one in the same log, and the `delete` operation's deletes (natural order)
    apply whatever the value."""
    for operation, data in DELETE_STEPS:
        write(data, _op(o, operation))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_stale_deletes_leave_what_hudi_leaves(spark, hudi_0_15, tmp_path, table_type) -> None:  # type: ignore[no-untyped-def]
    o = options(f"deletes_{table_type[:3].lower()}", table_type)

    def hudi_side(root: Path) -> None:  # Hudi's table, and a copy Hudi compacted (MOR)
        _write_steps(lambda data, opts: hudi_0_15.write(str(root / "hudi"), data, opts), o)
        if table_type == "MERGE_ON_READ":
            shutil.copytree(root / "hudi", root / "hudi_compacted")
            hudi_0_15.call("run_compaction", op="run", path=str(root / "hudi_compacted"))

    root = hudi_written(
        f"stale-deletes-{table_type}",
        [Path(__file__)],
        [HUDI_0_15],
        hudi_side,
        tmp_path / "hudi-side",
    )
    theirs_path, ours_path = str(root / "hudi"), str(tmp_path / "pyhudi")
    _write_steps(
        lambda data, opts: pyhudi.write(
            spark.createDataFrame(data.to_pylist(), DDL), ours_path, opts
        ),
        o,
    )
    theirs = hudi_read(spark, hudi_0_15, theirs_path)
    live = {"k6": "u6", "k8": "b8"}
    if table_type == "COPY_ON_WRITE":
        live["k3"] = "b3"  # the stale `_hoodie_is_deleted` is ignored on COW only
    assert {r["id"]: r["v"] for r in theirs.collect()} == live
    assert_pyhudi_reads_as(spark, theirs_path, theirs, f"{table_type} Hudi's table")
    assert_pyhudi_reads_as(spark, ours_path, theirs, f"{table_type} pyhudi's table")
    assert_same_read(hudi_read(spark, hudi_0_15, ours_path), theirs, "Hudi reads pyhudi's table")
    if table_type == "MERGE_ON_READ":
        after = hudi_read(spark, hudi_0_15, str(root / "hudi_compacted"))
        assert_same_read(after, theirs, "Hudi's compaction keeps its snapshot")
        pyhudi.HudiTable(ours_path).compaction.run(spark)
        assert_pyhudi_reads_as(spark, ours_path, after, "pyhudi's table after its compaction")
        pyhudi.HudiTable(theirs_path).compaction.run(spark)
        assert_pyhudi_reads_as(spark, theirs_path, after, "Hudi's table after pyhudi's compaction")
        assert_same_read(hudi_read(spark, hudi_0_15, theirs_path), after, "Hudi after ours")
