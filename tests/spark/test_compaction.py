"""Compaction of merge-on-read tables: plans, execution, pending boundaries, crash recovery."""

from __future__ import annotations

import os

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.codec import avro_schemas
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.instant import Action
from pyhudi.services.compaction.execute import (
    execute_compaction,
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from pyhudi.table.context import TableContext

MOR = {
    **trips_options(),
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "false",  # pending plans stay pending (Hudi's default runs them)
    "hoodie.parquet.small.file.limit": "0",
}
COLUMNS = ["_hoodie_commit_time", "_hoodie_record_key", "uuid", "ts", "fare"]


def _both(spark, path, **kwargs):
    ours = rows(
        pyhudi.read(
            spark, path, {"as.of.instant": kwargs["as_of"]} if "as_of" in kwargs else None
        ).toArrow(),
        columns=COLUMNS,
    )
    theirs = rows(hudi_rs_table(path, **kwargs), columns=COLUMNS)
    assert ours == theirs
    return ours


def _table(spark, tmp_path, extra=None):
    path = str(tmp_path / "t")
    options = {**MOR, **(extra or {})}
    pyhudi.write(
        df_of(spark, trips(0, 30)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    pyhudi.write(
        df_of(spark, trips(0, 9, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    pyhudi.write(
        df_of(spark, trips(3, 3, ts=3)).select("uuid", "city"),
        path,
        {**options, "hoodie.datasource.write.operation": "delete"},
    )
    return path, options


def test_inline_compaction_merges_logs_into_new_base_files(spark, tmp_path):
    path, options = _table(spark, tmp_path)
    before = _both(spark, path)
    options = {
        **options,
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "3",
    }
    result = pyhudi.write(
        df_of(spark, trips(40, 2)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    assert any(s.startswith("compaction") for s in result.services)
    table = pyhudi.HudiTable(path)
    (compaction,) = [c for c in table.commits() if c.action is Action.COMMIT]
    metadata = table.commit_metadata(compaction)
    assert metadata.compacted and metadata.operation_type.value == "COMPACT"
    assert metadata.total("total_log_files_compacted") >= 3
    plan_file = os.path.join(path, ".hoodie", f"{compaction.time}.compaction.requested")
    with open(plan_file, "rb") as handle:
        plan = avro_schemas.decode_container(handle.read())
    assert (
        plan["version"] == 2
        and plan["operations"]
        and all(op["deltaFilePaths"] for op in plan["operations"])
    )
    after = _both(spark, path)
    assert [r for r in after if not r["uuid"].startswith("id-0004")] == before  # commit times kept
    for instant in table.commits():
        _both(spark, path, as_of=instant.time)
    assert all(
        not s.has_log_files
        for s in table.latest_file_slices()
        if s.base_instant_time == compaction.time
    )


def test_writes_during_a_pending_compaction_go_to_the_new_slice(spark, tmp_path):
    path, options = _table(spark, tmp_path)
    ctx = TableContext.open(path)
    pending = schedule_compaction(ctx, options, force=True)
    assert pending is not None and pending.action is Action.COMPACTION
    pyhudi.write(
        df_of(spark, trips(6, 3, ts=9)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    new_logs = [f for d, _, fs in os.walk(path) for f in fs if f"_{pending.time}.log." in f]
    assert new_logs  # log files based on the compaction instant
    expected = {r["uuid"]: r["ts"] for r in rows(pyhudi.read(spark, path).toArrow())}
    assert expected["id-00006"] == 9 and expected["id-00000"] == 2 and "id-00003" not in expected
    (outcome,) = run_compaction(spark, TableContext.open(path), options, schedule=False)
    assert outcome.instant_time == pending.time
    assert {r["uuid"]: r["ts"] for r in _both(spark, path)} == expected


def test_a_killed_compaction_is_reset_and_executed_again(spark, tmp_path):
    path, options = _table(spark, tmp_path)
    ctx = TableContext.open(path)
    pending = schedule_compaction(ctx, options, force=True)
    inflight = ctx.active.transition_to_inflight(pending)
    # What a killed executor leaves: a partial base file with its marker.
    partition = "sf"
    junk = os.path.join(path, partition, f"deadbeef-0_0-1-1_{inflight.time}.parquet")
    with open(junk, "wb") as handle:
        handle.write(b"partial")
    marker = os.path.join(
        ctx.marker_folder(inflight.time),
        partition,
        f"deadbeef-0_0-1-1_{inflight.time}.parquet.marker.MERGE",
    )
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    open(marker, "wb").close()
    before = {r["uuid"]: r["ts"] for r in rows(pyhudi.read(spark, path).toArrow())}
    execute_compaction(spark, TableContext.open(path), pending.time, options)
    assert not os.path.exists(junk) and not pending_compactions(TableContext.open(path))
    assert {r["uuid"]: r["ts"] for r in _both(spark, path)} == before


def test_compaction_applies_to_merge_on_read_tables_only(spark, tmp_path):
    path = str(tmp_path / "cow")
    pyhudi.write(
        df_of(spark, trips(0, 3)),
        path,
        {**trips_options(), "hoodie.datasource.write.operation": "insert"},
    )
    with pytest.raises(UnsupportedOperationError, match="MERGE_ON_READ"):
        schedule_compaction(TableContext.open(path), force=True)


def test_compact_operation_through_pyhudi_write(spark, tmp_path):
    path, options = _table(spark, tmp_path)
    result = pyhudi.write(
        df_of(spark, []), path, {**options, "hoodie.datasource.write.operation": "compact"}
    )
    assert (
        result.operation == "COMPACT" and result.num_writes == 12
    )  # the 3 file groups with log files
    _both(spark, path)
