"""`spark.readStream.format("hudi")`: each commit once, in the stream's order, across restarts.

Every micro-batch is compared with the batch incremental query over the same window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql.types import StructType
from tests.helpers.builders import df_of, trips, trips_options
from tests.spark.test_concurrency import OCC, held_write

import pyhudi
from pyhudi.exceptions import ConfigError
from pyhudi.spark.stream_source import HudiStreamReader, StreamSettings, ready_commits
from pyhudi.table.context import TableContext

START = "hoodie.datasource.streaming.startOffset"
LIMIT = "hoodie.datasource.streaming.max.commits.per.batch"
HOLES = "hoodie.read.timeline.holes.resolution.policy"
COLUMNS = ("_hoodie_commit_time", "uuid", "fare")


INCREMENTAL = {"hoodie.datasource.query.type": "incremental"}
CDC = {**INCREMENTAL, "hoodie.datasource.query.incremental.format": "cdc"}


def _rows(frame) -> list[tuple]:  # type: ignore[no-untyped-def]
    columns = COLUMNS if "uuid" in frame.columns else frame.columns  # CDC rows: all four
    return sorted(tuple(r[c] for c in columns) for r in frame.select(*columns).collect())


def _incremental(spark, path: str, begin: str, end: str, query=INCREMENTAL) -> list[tuple]:  # type: ignore[no-untyped-def]
    options = {
        **query,
        "hoodie.datasource.read.begin.instanttime": begin,
        "hoodie.datasource.read.end.instanttime": end,
    }
    return _rows(pyhudi.read(spark, path, options))


def _stream(spark, path: str, checkpoint: Path, **options: str) -> list[list[tuple]]:  # type: ignore[no-untyped-def]
    """Run an `availableNow` stream to its end: the rows of each micro-batch it ran."""
    batches: list[list[tuple]] = []
    query = (
        spark.readStream.format("hudi")
        .options(**options)
        .load(path)
        .writeStream.foreachBatch(lambda frame, _: batches.append(_rows(frame)))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return [rows for rows in batches if rows]


def _last_offset(checkpoint: Path) -> dict:
    offsets = checkpoint / "offsets"
    last = max((p for p in offsets.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    return json.loads(last.read_text().splitlines()[-1])


def _write(spark, path: str, rows, operation: str = "upsert", **extra: str) -> str:  # type: ignore[no-untyped-def]
    options = {**trips_options(), "hoodie.datasource.write.operation": operation, **extra}
    return pyhudi.write(df_of(spark, rows), path, options).instant_time


def test_each_commit_once_in_order_across_restarts_with_a_commit_limit(spark, tmp_path):
    path, checkpoint = str(tmp_path / "t"), tmp_path / "chk"
    c1 = _write(spark, path, trips(0, 6), "insert", **{"hoodie.table.cdc.enabled": "true"})
    c2 = _write(spark, path, trips(3, 5, ts=2))
    first = _stream(spark, path, checkpoint, **{LIMIT: "1"})
    assert first == [_incremental(spark, path, "000", c1), _incremental(spark, path, c1, c2)]
    assert {row[0] for row in first[1]} == {c2}
    c3 = _write(spark, path, trips(0, 2), "delete")
    c4 = _write(spark, path, trips(20, 2), "insert")
    again = _stream(spark, path, checkpoint)  # restarted from the checkpoint: c3 and c4 only
    assert again == [_incremental(spark, path, c2, c4)]
    assert {row[0] for row in again[0]} == {c4}  # c3 deleted records: no latest state
    assert _last_offset(checkpoint) == {"version": 1, "order": "instant_time", "time": c4}
    # from `latest`: none of the past commits, the next one
    assert _stream(spark, path, tmp_path / "latest", **{START: "latest"}) == []
    c5 = _write(spark, path, trips(3, 1, ts=5))
    assert _stream(spark, path, tmp_path / "latest") == [_incremental(spark, path, c4, c5)]
    # change data capture from an instant: the batch CDC query's rows, window by window
    changes = _stream(spark, path, tmp_path / "cdc", **CDC, **{START: c2, LIMIT: "2"})
    assert changes == [
        _incremental(spark, path, c2, c4, CDC),
        _incremental(spark, path, c4, c5, CDC),
    ]
    assert [sorted({row[0] for row in batch}) for batch in changes] == [["d", "i"], ["u"]]
    assert {row[1] for row in changes[0]} == {c3, c4}  # ts_ms: the commit of each change


def test_version_6_stream_waits_for_a_pending_older_commit(spark, tmp_path):
    path, checkpoint = str(tmp_path / "t"), tmp_path / "chk"
    c1 = _write(spark, path, trips(0, 3), "insert", **OCC)
    held = held_write(spark, path, trips(10, 2, city="sf"), {**trips_options(), **OCC})
    later = _write(spark, path, trips(20, 2, city="chennai"), "insert", **OCC)
    # the later commit completed first: the stream stops before the pending one (BLOCK)
    block = {**INCREMENTAL, HOLES: "BLOCK"}
    assert _stream(spark, path, checkpoint) == [_incremental(spark, path, "000", c1, block)]
    hollow = f"hollow commit {held.transaction.instant_time}"
    with pytest.raises(ConfigError, match=hollow):
        ready_commits(TableContext.open(path), StreamSettings.of({HOLES: "FAIL"}))
    # a batch incremental read fails by default, as Hudi 0.15's; BLOCK reads the commits before
    with pytest.raises(ConfigError, match=hollow):
        pyhudi.read_arrow(path, {**INCREMENTAL, "hoodie.datasource.read.begin.instanttime": "0"})
    before = pyhudi.read_arrow(path, {**block, "hoodie.datasource.read.begin.instanttime": "0"})
    assert set(before.column("_hoodie_commit_time").to_pylist()) == {c1}
    held.commit()
    again = _stream(spark, path, checkpoint)
    assert again == [_incremental(spark, path, c1, later)]
    assert {row[0] for row in again[0]} == {held.transaction.instant_time, later}


def test_version_9_stream_follows_completion_time(spark, tmp_path):
    path, checkpoint = str(tmp_path / "t"), tmp_path / "chk"
    v9_mor = {
        **OCC,
        "hoodie.write.table.version": "9",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    }
    _write(spark, path, trips(0, 3), "insert", **v9_mor)
    held = held_write(spark, path, trips(0, 1, ts=2), {**trips_options(), **v9_mor})  # sf
    later = _write(spark, path, trips(20, 2, city="chennai"), "insert", **v9_mor)
    first = _stream(spark, path, checkpoint)  # the later instant, complete, is read at once
    assert len(first) == 1 and {row[0] for row in first[0]} > {later}
    read_to = _last_offset(checkpoint)["time"]
    held.commit()  # an earlier instant completing after the offset: its completion time is later
    late = TableContext.open(path).active.timeline.commits().find(held.transaction.instant_time)
    assert late is not None and late.completion_time is not None and late.time < later
    second = _stream(spark, path, checkpoint)
    assert second == [_incremental(spark, path, read_to, late.completion_time)]
    assert {row[0] for row in second[0]} == {late.time}
    assert _last_offset(checkpoint) == {
        "version": 1,
        "order": "completion_time",
        "time": late.completion_time,
    }


def test_bad_stream_options_are_refused_naming_the_key(spark, tmp_path):
    path = str(tmp_path / "t")
    c1 = _write(spark, path, trips(0, 1), "insert")
    for options, refused in [  # when the stream is loaded
        ({START: "yesterday"}, "startOffset='yesterday'"),
        ({"hoodie.datasource.streaming.startofsett": "latest"}, "did you mean"),
    ]:
        with pytest.raises(AnalysisException, match=refused):
            spark.readStream.format("hudi").options(**options).load(path)
    for options, refused in [
        ({LIMIT: "0"}, r"max\.commits\.per\.batch=0"),
        ({HOLES: "SOMETIMES"}, "expected one of FAIL, BLOCK"),
        ({"hoodie.datasource.query.incremental.format": "cdc"}, "cdc needs .*query.type"),
        # an incremental window would be overridden by the stream's own
        ({"hoodie.datasource.read.begin.instanttime": c1}, "remove .*begin.instanttime"),
    ]:
        with pytest.raises(ConfigError, match=refused):
            HudiStreamReader(path, options, StructType())
