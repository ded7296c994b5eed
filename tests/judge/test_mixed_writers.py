"""pyhudi and Apache Hudi 0.15 on one table: they take turns (writes and table services), and
they write at the same time under optimistic concurrency control through Hudi's lock file (Hudi
1.2, writing table version 6, too).
After every step Hudi, pyhudi and hudi-rs read the same rows."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import pyhudi
from pyhudi.exceptions import LockError, WriteConflictError
from pyhudi.table.context import TableContext
from pyhudi.table.lock import table_transaction
from pyhudi.writer import pipeline
from tests.judge.agreement import assert_readers_agree, completed_commits, writer_options
from tests.judge.client import Judge, JudgeError
from tests.judge.compare import hudi_frame
from tests.judge.tables import all_types_frame, base_options

METADATA = {"hoodie.metadata.enable": "true"}
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": (
        "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
    ),
    "hoodie.cleaner.policy.failed.writes": "LAZY",
}
#: The Hudi server's own local write options (server.py), for writes sent as code.
HUDI_LOCAL = {"hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT"}


def _op(options: dict[str, str], operation: str, **extra: str) -> dict[str, str]:
    return {**options, "hoodie.datasource.write.operation": operation, **extra}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ"])
def test_pyhudi_and_hudi_take_turns(spark, hudi_0_15, tmp_path, table_type) -> None:  # type: ignore[no-untyped-def]
    judge = hudi_0_15
    path = str(tmp_path / "turns")
    options = base_options("turns", table_type, **METADATA)
    mor = table_type == "MERGE_ON_READ"

    def check(step: str, expected_rows: int) -> None:
        only = () if step == "last" else ("snapshot",)
        count = assert_readers_agree(spark, judge, path, f"{table_type} {step}", only=only)
        assert count == expected_rows, step

    pyhudi.write(all_types_frame(spark, range(20), 1, "a"), path, _op(options, "bulk_insert"))
    judge.write(path, all_types_frame(spark, range(10, 25), 2, "h"), _op(options, "upsert"))
    check("Hudi's upsert on pyhudi's insert", 25)
    pyhudi.write(all_types_frame(spark, range(20, 30), 3, "p"), path, _op(options, "upsert"))
    check("pyhudi's upsert on Hudi's", 30)

    table = pyhudi.HudiTable(path)
    if mor:
        assert table.compaction.run(spark), "pyhudi compacted nothing"
    assert pyhudi.HudiTable(path).clean({"hoodie.cleaner.commits.retained": "1"}) is not None
    check("pyhudi's compaction and clean", 30)

    hudi_services = {"hoodie.cleaner.commits.retained": "1"}
    if mor:  # Hudi refuses to schedule compaction on a copy-on-write table
        hudi_services |= {
            "hoodie.compact.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "1",
        }
    judge.write(path, all_types_frame(spark, range(0, 3), 9, "x"), _op(options, "delete"))
    judge.write(
        path, all_types_frame(spark, range(5, 12), 4, "i"), _op(options, "upsert", **hudi_services)
    )
    actions = {i.action.value for i in pyhudi.HudiTable(path).timeline}
    assert "clean" in actions
    check("Hudi's delete, upsert, compaction and clean", 27)
    pyhudi.write(all_types_frame(spark, range(28, 35), 5, "q"), path, _op(options, "upsert"))
    pyhudi.write(all_types_frame(spark, range(3, 5), 9, "y"), path, _op(options, "delete"))
    check("last", 30)


# ---- at the same time, under OCC -----------------------------------------------------------


def _in_partition(df: DataFrame, partition: str) -> DataFrame:
    return df.withColumn("part", F.lit(partition))


#: Hudi's write, held back until the test creates `go`. A UDF on the ordering field touches
#: `started` and then waits for `go`: Hudi evaluates the rows only after it requested its instant
#: and captured the timeline its conflict check starts from (`preWrite`), so once `started` exists
#: Hudi's write is under way and has not seen anything pyhudi commits next.
GATED_WRITE = """
import os, time
from pyspark.sql import functions as F

@F.udf("long")
def gate(ts):
    open(started, "a").close()
    while not os.path.exists(go):
        time.sleep(0.05)
    return ts

df = spark.read.parquet(data).withColumn("ts", gate("ts"))
df.write.format("hudi").options(**options).mode("append").save(path)
result = "written"
"""


def _stage(df: DataFrame, folder: Path) -> str:
    folder.mkdir(parents=True)
    pq.write_table(df.toArrow(), folder / "part-0.parquet")
    return str(folder)


def _commits_requested(path: str) -> set[str]:
    return {p.name for p in (Path(path) / ".hoodie").glob("*.commit.requested")}


def _wait_for(what: str, ready: Callable[[], bool], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"Hudi's write did not get as far as {what}")
        time.sleep(0.05)


@pytest.fixture
def occ_table(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "occ")
    options = {**base_options("occ", "COPY_ON_WRITE", **METADATA), **OCC}
    pyhudi.write(all_types_frame(spark, range(12), 1, "a"), path, _op(options, "bulk_insert"))
    return path, options


def _gated_hudi_write(
    judge: Judge, tmp_path: Path, path: str, df: DataFrame, options: dict[str, str]
) -> tuple[Path, str]:
    """Start Hudi's upsert of `df`; once it is in flight, held back until the test creates the
    returned `go` file, return that and Hudi's instant time."""
    go, started = tmp_path / "go", tmp_path / "started"
    data = _stage(df, tmp_path / "hudi-input")
    before = _commits_requested(path)
    judge.send(
        "run",
        code=GATED_WRITE,
        go=str(go),
        started=str(started),
        data=data,
        path=path,
        options={**HUDI_LOCAL, **_op(options, "upsert")},
    )
    _wait_for("evaluating its rows", started.exists)
    requested = _commits_requested(path) - before
    assert len(requested) == 1, f"Hudi requested {requested}"
    return go, requested.pop().split(".")[0]


def _tags(spark, path: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Record key -> the tag its row was written with (the `raw` column's prefix)."""
    rows = pyhudi.read(spark, path).select("id", "raw").collect()
    return {r["id"]: bytes(r["raw"]).decode().rstrip("0123456789") for r in rows}


def test_occ_disjoint_partitions_both_commit(spark, hudi_0_15, occ_table, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, options = occ_table
    hudi_rows = _in_partition(all_types_frame(spark, range(100, 105), 2, "h"), "hudi")
    go, hudi_instant = _gated_hudi_write(hudi_0_15, tmp_path, path, hudi_rows, options)
    ours = _in_partition(all_types_frame(spark, range(200, 205), 2, "p"), "pyhudi")
    pyhudi.write(ours, path, _op(options, "upsert"))
    pyhudi_instant = completed_commits(path)[-1]
    assert hudi_instant < pyhudi_instant  # Hudi started first and commits last
    go.touch()
    assert hudi_0_15.receive() == "written"
    assert {hudi_instant, pyhudi_instant} <= set(completed_commits(path))
    tags = _tags(spark, path)
    assert {tags[f"k{i:04d}"] for i in range(100, 105)} == {"h"}
    assert {tags[f"k{i:04d}"] for i in range(200, 205)} == {"p"}
    assert assert_readers_agree(spark, hudi_0_15, path, "OCC disjoint") == 22


@pytest.mark.parametrize("version", ["hudi_0_15", "hudi_1_2"])
def test_occ_hudi_commits_second_and_gets_the_conflict(
    spark, occ_table, tmp_path, version, request
) -> None:  # type: ignore[no-untyped-def]
    """Hudi 0.15, and Hudi 1.2 writing table version 6, lose to pyhudi's earlier commit of the
    same keys through the same lock file."""
    judge = request.getfixturevalue(version)
    path, options = occ_table
    hudi_options = {**options, **writer_options(judge)}
    go, hudi_instant = _gated_hudi_write(
        judge, tmp_path, path, all_types_frame(spark, range(0, 6), 2, "h"), hudi_options
    )
    pyhudi.write(all_types_frame(spark, range(3, 9), 2, "p"), path, _op(options, "upsert"))
    go.touch()
    with pytest.raises(JudgeError, match="HoodieWriteConflictException"):
        judge.receive()
    assert hudi_instant not in completed_commits(path)
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(12)] == ["a"] * 3 + ["p"] * 6 + ["a"] * 3
    assert assert_readers_agree(spark, judge, path, "OCC Hudi conflicts") == 12
    assert pyhudi.HudiTable(path).properties["hoodie.table.version"] == "6"


def test_occ_pyhudi_commits_second_and_gets_the_conflict(
    spark, hudi_0_15, occ_table, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Hudi writes and commits while pyhudi's write is between its data files and its commit."""
    path, options = occ_table
    real_fault_point = pipeline.fault_point

    def hudi_writes_meanwhile(name: str) -> None:
        if name == "write.after_data_files":
            hudi_rows = all_types_frame(spark, range(0, 6), 2, "h")
            hudi_0_15.write(path, hudi_rows, _op(options, "upsert"))
        real_fault_point(name)

    monkeypatch.setattr(pipeline, "fault_point", hudi_writes_meanwhile)
    with pytest.raises(WriteConflictError):
        pyhudi.write(all_types_frame(spark, range(3, 9), 2, "p"), path, _op(options, "upsert"))
    monkeypatch.undo()
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(12)] == ["h"] * 6 + ["a"] * 6
    assert assert_readers_agree(spark, hudi_0_15, path, "OCC pyhudi conflicts") == 12
    # Both keep writing afterwards.
    pyhudi.write(all_types_frame(spark, range(6, 8), 3, "q"), path, _op(options, "upsert"))
    hudi_0_15.write(path, all_types_frame(spark, range(8, 10), 3, "j"), _op(options, "upsert"))
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(12)] == ["h"] * 6 + ["q"] * 2 + ["j"] * 2 + ["a"] * 2


def test_hudi_waits_for_the_lock_pyhudi_holds(spark, hudi_0_15, occ_table) -> None:  # type: ignore[no-untyped-def]
    """While pyhudi holds the table lock (Hudi's lock file), Hudi's commit cannot take it."""
    path, options = occ_table
    impatient = {
        **options,
        "hoodie.write.lock.num_retries": "1",
        "hoodie.write.lock.wait_time_ms_between_retry": "200",
        "hoodie.write.lock.client.num_retries": "1",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
    }
    lock = Path(path) / ".hoodie" / "lock"  # Hudi's default lock file
    with table_transaction(TableContext.open(path), options):
        ours = json.loads(lock.read_text())  # Hudi's LockInfo fields
        assert set(ours) == {"lockCreateTime", "lockThreadName", "lockStacksInfo"}, ours
        with pytest.raises(JudgeError, match="Unable to acquire lock"):
            hudi_0_15.write(
                path, all_types_frame(spark, range(0, 2), 2, "h"), _op(impatient, "upsert")
            )
        # Hudi did not take the lock, but its failed write removed pyhudi's lock file: it closes
        # its lock provider, and Hudi 0.15's FileSystemBasedLockProvider.close() deletes the lock
        # file whoever wrote it (its bytecode: `fs.delete(lockFile, true)`, no owner check).
        assert not lock.exists()
    assert not lock.exists()  # pyhudi deletes only the file it wrote, not a newer holder's
    hudi_0_15.write(path, all_types_frame(spark, range(0, 2), 3, "h"), _op(options, "upsert"))
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(3)] == ["h", "h", "a"]
    theirs = hudi_frame(spark, hudi_0_15.read(path, METADATA))
    assert theirs.count() == 12


#: Hudi 0.15's FileSystemBasedLockProvider taken in the judge's JVM (kept in its namespace until
#: `HUDI_RELEASES_THE_LOCK`), as a Hudi writer's LockManager takes it around a commit.
HUDI_TAKES_THE_LOCK = """
jvm = spark._jvm
props = jvm.java.util.Properties()
props.setProperty("hoodie.base.path", path)
props.setProperty("hoodie.write.lock.filesystem.expire", "0")
provider = jvm.org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider(
    jvm.org.apache.hudi.common.config.LockConfiguration(props),
    jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration()),
)
judge.namespace["hudi_lock"] = provider
result = provider.tryLock(1000, jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
"""
HUDI_RELEASES_THE_LOCK = "judge.namespace.pop('hudi_lock').unlock()"


def test_pyhudi_waits_for_the_lock_hudi_holds(spark, hudi_0_15, occ_table) -> None:  # type: ignore[no-untyped-def]
    """While Hudi holds the table lock, pyhudi's commit cannot take it."""
    path, options = occ_table
    impatient = {
        **options,
        "hoodie.write.lock.client.num_retries": "1",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
    }
    lock = Path(path) / ".hoodie" / "lock"
    assert hudi_0_15.run(HUDI_TAKES_THE_LOCK, path=path) is True
    try:
        # Hudi 0.15 writes its LockInfo only if the file it just created does not exist: never.
        assert lock.read_bytes() == b""
        with pytest.raises(LockError, match="could not acquire the table lock"):
            pyhudi.write(
                all_types_frame(spark, range(0, 2), 2, "p"), path, _op(impatient, "upsert")
            )
        assert lock.exists()
    finally:
        hudi_0_15.run(HUDI_RELEASES_THE_LOCK)
    assert not lock.exists()
    pyhudi.write(all_types_frame(spark, range(0, 2), 3, "p"), path, _op(options, "upsert"))
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(3)] == ["p", "p", "a"]
    assert (
        assert_readers_agree(spark, hudi_0_15, path, "after Hudi's lock", only=("snapshot",)) == 12
    )
