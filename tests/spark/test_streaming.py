"""Streaming ingestion with table services alongside, exactly-once across restarts."""

from __future__ import annotations

import json
import os
import threading

from tests.helpers.builders import TRIPS_SCHEMA, df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.model.instant import Action
from pyhudi.services.compaction import execute as compaction_module
from pyhudi.services.compaction.execute import execute_compaction, schedule_compaction
from pyhudi.table.context import TableContext

COLUMNS = ["_hoodie_record_key", "uuid", "ts", "fare"]


def _drop(folder: str, index: int, records: list[dict]) -> None:
    target = os.path.join(folder, f"batch-{index:03d}.json")
    with open(target, "w") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    os.utime(
        target, (1_700_000_000 + index, 1_700_000_000 + index)
    )  # the file source reads oldest first


def _both(spark, path):
    ours = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert ours == rows(hudi_rs_table(path), columns=COLUMNS)
    return ours


def test_stream_with_async_services_killed_and_restarted_keeps_exactly_the_rows(spark, tmp_path):
    source, path, checkpoint = str(tmp_path / "in"), str(tmp_path / "table"), str(tmp_path / "chk")
    os.makedirs(source)
    options = {
        **trips_options(),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.parquet.small.file.limit": "0",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.clustering.async.enabled": "true",
        "hoodie.clustering.async.max.commits": "3",
        "hoodie.cleaner.commits.retained": "2",
    }
    stream = spark.readStream.schema(TRIPS_SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    for i in range(4):  # new keys, and updates of the previous batch's keys (log files)
        _drop(source, i, trips(i * 10, 10) + trips(max(i - 1, 0) * 10, 5, ts=i + 1))
    query = pyhudi.stream_write(
        stream,
        path,
        options,
        checkpoint_location=checkpoint,
        trigger={"processingTime": "1 second"},
    )
    query.processAllAvailable()
    query.stop()
    # A crash after our commit but before Spark recorded the batch: Spark replays the last batch.
    commits = os.path.join(checkpoint, "commits")
    last = max((n for n in os.listdir(commits) if n.isdigit()), key=int)
    for name in (last, f".{last}.crc"):
        if os.path.exists(os.path.join(commits, name)):
            os.remove(os.path.join(commits, name))
    for i in range(4, 7):
        _drop(source, i, trips(i * 10, 10) + trips((i - 1) * 10, 5, ts=i + 1))
    query = pyhudi.stream_write(
        stream, path, options, checkpoint_location=checkpoint, trigger={"availableNow": True}
    )
    query.awaitTermination()
    final = _both(spark, path)
    assert [r["uuid"] for r in final] == [f"id-{i:05d}" for i in range(70)]
    assert {r["uuid"]: r["ts"] for r in final}["id-00050"] == 7
    table = pyhudi.HudiTable(path)
    batch_ids = [
        table.commit_metadata(c).extra_metadata.get("_pyhudi.streaming.batch.id")
        for c in table.commits()
    ]
    written = [int(b) for b in batch_ids if b is not None]
    assert sorted(written) == list(range(7))  # every micro-batch exactly once, the replay skipped
    actions = [i.action for i in table.timeline if i.is_completed]
    assert Action.COMMIT in actions and Action.CLEAN in actions  # async compaction and clean ran


def test_ingestion_keeps_committing_while_a_slow_compaction_runs(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    pyhudi.write(
        df_of(spark, trips(0, 30)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    pyhudi.write(
        df_of(spark, trips(0, 10, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    pending = schedule_compaction(TableContext.open(path), options, force=True)
    release, reached = threading.Event(), threading.Event()
    real_commit = compaction_module.commit_service

    def slow_commit(
        *args, **kwargs
    ):  # the compaction has written its files and waits before committing
        reached.set()
        release.wait(120)
        return real_commit(*args, **kwargs)

    monkeypatch.setattr(compaction_module, "commit_service", slow_commit)
    worker = threading.Thread(
        target=execute_compaction, args=(spark, TableContext.open(path), pending.time, options)
    )
    worker.start()
    assert reached.wait(120)
    results = [
        pyhudi.write(
            df_of(spark, trips(i, 2, ts=10 + i)),
            path,
            {**options, "hoodie.datasource.write.operation": "upsert"},
        )
        for i in (0, 20)
    ]
    assert all(r.instant_time > pending.time for r in results)
    assert TableContext.open(path).active.timeline.pending_compactions()  # still running meanwhile
    release.set()
    worker.join(120)
    assert not TableContext.open(path).active.timeline.pending_compactions()
    final = {r["uuid"]: r["ts"] for r in _both(spark, path)}
    assert (
        final["id-00000"] == 10
        and final["id-00021"] == 30
        and final["id-00005"] == 2
        and len(final) == 30
    )
