"""Merge-on-read snapshot reads by position (`reader/mor_positions.py`): slices with and without
logs, delete-only logs, stale updates under event-time ordering, pass 1 on the driver or in a job;
every read matches hudi-rs."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tests.helpers.builders import df_of, trip, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.reader import mor_positions
from pyhudi.reader.planner import plan_read
from pyhudi.reader.slices import slice_tasks
from pyhudi.table.context import TableContext

MOR = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",
}
COLUMNS = ["_hoodie_record_key", "uuid", "city", "ts", "fare"]
EVENT_TIME = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


@pytest.fixture(params=["driver", "job"])
def pass_one(request, monkeypatch):
    """Where pass 1 (the delete vectors) runs: on the driver (small reads) or in a Spark job."""
    if request.param == "job":
        monkeypatch.setattr(mor_positions, "DRIVER_MAX_SLICES", 0)
    return request.param


def _same(spark, path):
    theirs = rows(hudi_rs_table(path), columns=COLUMNS)
    ours = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert ours == theirs
    return ours


def _write(spark, path, data, options, operation):
    pyhudi.write(data, path, {**options, "hoodie.datasource.write.operation": operation})


def test_slices_with_updates_delete_only_logs_and_no_logs(spark, tmp_path, pass_one):
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR}
    _write(spark, path, df_of(spark, trips(0, 90)), options, "bulk_insert")
    _write(
        spark, path, df_of(spark, trips(90, 30)), options, "bulk_insert"
    )  # more base-only slices
    # sf (i % 3 == 0) gets updates, chennai (i % 3 == 1) only deletes, sao_paulo nothing.
    _write(spark, path, df_of(spark, trips(0, 90, ts=2, fare=5.0)[::6]), options, "upsert")
    deletes = df_of(spark, trips(0, 120)[1::9]).select("uuid", "city")
    _write(spark, path, deletes, options, "delete")
    plan = plan_read(TableContext.open(path))
    assert plan.with_logs and plan.base_only
    ours = _same(spark, path)
    deleted = {r["uuid"] for r in trips(0, 120)[1::9]}
    assert len(ours) == 120 - len(deleted)
    updated = {r["uuid"] for r in trips(0, 90)[::6]} - deleted
    assert {r["uuid"] for r in ours if r["fare"] == 5.0} == updated


def test_event_time_ordering_keeps_newer_base_rows_out_of_the_log_rows(spark, tmp_path, pass_one):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **MOR,
        "hoodie.datasource.write.payload.class": EVENT_TIME,
    }
    _write(spark, path, df_of(spark, trips(0, 30, ts=5)), options, "bulk_insert")
    stale, newer, tie = trip(0, ts=3, fare=-1.0), trip(3, ts=8, fare=8.0), trip(6, ts=5, fare=6.5)
    _write(spark, path, df_of(spark, [stale, newer, tie, trip(40, ts=1)]), options, "upsert")
    _write(spark, path, df_of(spark, [trip(9, ts=9)]).select("uuid", "city"), options, "delete")
    fares = {r["uuid"]: r["fare"] for r in _same(spark, path)}
    assert fares["id-00000"] == trips(0, 1, ts=5)[0]["fare"]  # the stale update lost
    assert fares["id-00003"] == 8.0 and fares["id-00006"] == 6.5  # newer and tied updates won
    assert "id-00009" not in fares and "id-00040" in fares and len(fares) == 30


def test_large_delete_vectors_take_the_anti_join(spark, tmp_path, monkeypatch, pass_one):
    monkeypatch.setattr(mor_positions, "LITERAL_MAX_WORDS", 0)
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR}
    _write(spark, path, df_of(spark, trips(0, 60)), options, "bulk_insert")
    _write(spark, path, df_of(spark, trips(0, 60, ts=3)[::4]), options, "upsert")
    assert len(_same(spark, path)) == 60


def _projected_same(spark, path, columns, filters=()):
    """`read(columns=...)` equals hudi-rs's snapshot projected to the same columns."""
    full = hudi_rs_table(path)
    kept = [r for r in full.to_pylist() if all(_holds(r, f) for f in filters)]
    theirs = sorted(rows(pa.Table.from_pylist(kept, full.schema), columns=columns), key=str)
    frame = pyhudi.read(spark, path, filters=list(filters), columns=columns)
    assert frame.columns == columns
    ours = sorted(rows(frame.toArrow(), columns=columns), key=str)
    assert ours == theirs
    return ours


def _holds(row, condition):
    column, op, value = condition
    return {"=": row[column] == value, ">": row[column] > value}[op]


def test_projected_reads_with_updates_and_deletes(spark, tmp_path, pass_one):
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR}
    _write(spark, path, df_of(spark, trips(0, 60)), options, "bulk_insert")
    _write(spark, path, df_of(spark, trips(0, 60, ts=2, fare=5.0)[::4]), options, "upsert")
    _write(spark, path, df_of(spark, trips(0, 60)[1::7]).select("uuid", "city"), options, "delete")
    assert plan_read(TableContext.open(path)).with_logs
    fares = _projected_same(spark, path, ["fare"])
    assert len(fares) == 60 - len(trips(0, 60)[1::7]) and {"fare": 5.0} in fares
    _projected_same(spark, path, ["fare", "uuid"], filters=[("ts", ">", 1)])
    _projected_same(spark, path, ["_hoodie_record_key", "ts"], filters=[("city", "=", "sf")])


def test_projected_reads_under_event_time_ordering(spark, tmp_path, pass_one):
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.datasource.write.payload.class": EVENT_TIME}
    _write(spark, path, df_of(spark, trips(0, 30, ts=5)), options, "bulk_insert")
    stale, newer = trip(0, ts=3, fare=-1.0), trip(3, ts=8, fare=8.0)
    _write(spark, path, df_of(spark, [stale, newer, trip(40, ts=1)]), options, "upsert")
    fares = [r["fare"] for r in _projected_same(spark, path, ["fare"])]
    assert -1.0 not in fares and 8.0 in fares and len(fares) == 31


def test_projected_reads_of_the_key_join_path(spark, tmp_path):
    """Virtual keys (no stored record keys) take the key join; `columns` projects it the same."""
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR, "hoodie.populate.meta.fields": "false"}
    _write(spark, path, df_of(spark, trips(0, 30)), options, "bulk_insert")
    _write(spark, path, df_of(spark, trips(0, 30, ts=2, fare=7.0)[::3]), options, "upsert")
    ours = pyhudi.read(spark, path, columns=["fare", "uuid"])
    assert ours.columns == ["fare", "uuid"]
    full = {r["uuid"]: r["fare"] for r in pyhudi.read(spark, path).collect()}
    assert {r["uuid"]: r["fare"] for r in ours.collect()} == full
    assert len(full) == 30 and sum(f == 7.0 for f in full.values()) == 10


@pytest.mark.parametrize("task_bytes", [None, 1], ids=["one_task", "one_per_core"])
def test_pass_two_decodes_small_logs_in_one_task(spark, tmp_path, monkeypatch, task_bytes):
    """A few MB of logs are decoded in one Python task (each costs JVM set-up); past
    `LIVE_TASK_LOG_BYTES` per task the slices spread over the cores. Same rows either way."""
    if task_bytes is not None:
        monkeypatch.setattr(mor_positions, "LIVE_TASK_LOG_BYTES", task_bytes)
    path = str(tmp_path / "t")
    options = {**trips_options(), **MOR}
    _write(spark, path, df_of(spark, trips(0, 90)), options, "bulk_insert")
    _write(spark, path, df_of(spark, trips(0, 90, ts=2, fare=5.0)[::4]), options, "upsert")
    ctx = TableContext.open(path)
    plan = plan_read(ctx)
    tasks = slice_tasks(ctx, plan, plan.with_logs)
    log_bytes = sum(log.size_bytes for s in plan.with_logs for log in s.log_files)
    assert len(tasks) >= 2 and 0 < log_bytes < 1 << 20
    schema = pyhudi.read(spark, path).schema
    live = mor_positions._live_frame(spark, tasks, {}, schema, log_bytes)
    cores = spark.sparkContext.defaultParallelism
    assert live.rdd.getNumPartitions() == (1 if task_bytes is None else min(len(tasks), cores))
    assert live.count() == len(trips(0, 90)[::4])
    ours = _same(spark, path)
    assert sum(r["fare"] == 5.0 for r in ours) == len(trips(0, 90)[::4])
