"""Live writers, EAGER rollback with heartbeats, the commit guard, and WriteTransaction under OCC."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.helpers.timeline_builder import Base, TimelineBuilder

from pyhudi.codec.avro_schemas import encode_container
from pyhudi.codec.heartbeat import encode_owner
from pyhudi.config.concurrency import FILE_SYSTEM_LOCK
from pyhudi.exceptions import WriteConflictError
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.context import TableContext
from pyhudi.table.guard import check_commit_allowed, rollback_failed_writes_eager
from pyhudi.table.process_owner import this_process
from pyhudi.table.rollback import rollback_instant
from pyhudi.writer.transaction import WriteTransaction

WAIT_300_MS = {"pyhudi.write.wait.for.active.writer.ms": "300"}
FAST_2S = {  # heartbeats expire 2 s after their last beat
    "hoodie.client.heartbeat.interval_in_ms": "1000",
    "hoodie.client.heartbeat.tolerable.misses": "2",
}
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": FILE_SYSTEM_LOCK,
}


def _meta(tb: TimelineBuilder) -> Path:
    return Path(tb.ctx.meta_path)


def _stats(*groups: tuple[str, str]) -> CommitMetadata:
    stats: dict[str, list[WriteStat]] = {}
    for partition, file_id in groups:
        stats.setdefault(partition, []).append(
            WriteStat(
                file_id=file_id,
                path=f"{partition}/{file_id}_1-0-1_x.parquet",
                partition_path=partition,
                file_size_bytes=100,  # the metadata table (on by default) lists sizes > 0
            )
        )
    return CommitMetadata(
        partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
        operation_type=WriteOperationType.UPSERT,
    )


def test_live_pending_write_is_not_rolled_back_and_the_error_names_occ_options(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    live = tb.write(Base("p=1", "a"), complete=False)
    tb.heartbeat(live, age_seconds=1)
    with pytest.raises(WriteConflictError) as err:
        rollback_failed_writes_eager(tb.ctx, {}, record=commit_rollback_to_metadata_table)
    message = str(err.value)
    assert live in message
    assert "hoodie.write.concurrency.mode=optimistic_concurrency_control" in message
    assert "hoodie.write.lock.provider" in message
    assert (_meta(tb) / f"{live}.inflight").exists()
    assert not list(_meta(tb).glob("*.rollback*"))


def test_expired_pending_write_is_rolled_back_eagerly(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    dead = tb.write(Base("p=1", "a"), complete=False)
    heartbeat = tb.heartbeat(dead, age_seconds=121)  # default expiry: 60 s x 2 misses
    assert rollback_failed_writes_eager(tb.ctx, {}, record=commit_rollback_to_metadata_table) == [
        dead
    ]
    assert not (_meta(tb) / f"{dead}.inflight").exists()
    assert not heartbeat.exists()


def test_heartbeat_expiry_follows_the_interval_and_misses_options(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    tb.heartbeat(pending, age_seconds=5)
    fast = {
        "hoodie.client.heartbeat.interval_in_ms": "1000",
        "hoodie.client.heartbeat.tolerable.misses": "2",
    }
    assert rollback_failed_writes_eager(tb.ctx, fast, record=commit_rollback_to_metadata_table) == [
        pending
    ]


def test_pending_write_without_heartbeat_counts_as_failed(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)  # e.g. a JVM writer in EAGER mode
    assert rollback_failed_writes_eager(tb.ctx, {}, record=commit_rollback_to_metadata_table) == [
        pending
    ]


def test_commit_guard_passes_for_an_inflight_instant(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    check_commit_allowed(tb.ctx, Instant(pending, Action.COMMIT, State.INFLIGHT))


def test_commit_guard_refuses_an_instant_rolled_back_by_another_writer(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    instant = Instant(pending, Action.COMMIT, State.INFLIGHT)
    rollback_instant(tb.ctx, instant, record=commit_rollback_to_metadata_table)
    with pytest.raises(WriteConflictError, match=f"{pending}.*gone"):
        check_commit_allowed(tb.ctx, instant)


def test_commit_guard_refuses_while_a_rollback_of_the_instant_is_in_progress(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    rollback_time = tb.ctx.new_instant_time()
    plan = {
        "instantToRollback": {"commitTime": pending, "action": "commit"},
        "RollbackRequests": [],
        "version": 1,
    }
    tb.ctx.active.create_requested(
        rollback_time, Action.ROLLBACK, encode_container("HoodieRollbackPlan", plan)
    )
    with pytest.raises(WriteConflictError, match=f"rolled back by rollback {rollback_time}"):
        check_commit_allowed(tb.ctx, Instant(pending, Action.COMMIT, State.INFLIGHT))


def test_transaction_refuses_a_live_writer_after_the_wait_and_leaves_no_trace(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    other_process = TableContext.open(tb.ctx.base_path)  # its timeline listed before `first` began
    first = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT)
    first_time = first.begin()  # its heartbeat names this process, which is alive
    before = sorted(p.name for p in _meta(tb).iterdir())
    second = WriteTransaction(
        other_process, Action.COMMIT, WriteOperationType.UPSERT, options=dict(WAIT_300_MS)
    )
    started = time.monotonic()
    with pytest.raises(WriteConflictError, match=f"{first_time}.*pid {os.getpid()}"):
        second.begin()
    assert 0.3 <= time.monotonic() - started < 5
    assert sorted(p.name for p in _meta(tb).iterdir()) == before
    assert sorted(p.name for p in (_meta(tb) / ".heartbeat").iterdir()) == [first_time]
    first.commit(_stats(("p=1", "a")))
    assert (_meta(tb) / f"{first_time}.commit").exists()
    assert not (_meta(tb) / ".heartbeat" / first_time).exists()


def test_transaction_waits_for_a_live_writer_that_commits_then_proceeds(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    first = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT)
    first_time = first.begin()
    finisher = threading.Timer(0.5, first.commit, args=(_stats(("p=1", "a")),))
    second = WriteTransaction(
        TableContext.open(tb.ctx.base_path), Action.COMMIT, WriteOperationType.UPSERT
    )  # default wait: the heartbeat expiry (2 minutes)
    started = time.monotonic()
    finisher.start()
    second_time = second.begin()
    assert 0.5 <= time.monotonic() - started < 30
    assert second.rolled_back == []
    assert (_meta(tb) / f"{first_time}.commit").exists() and second_time > first_time
    second.abort()


def test_hudi_heartbeat_without_owner_is_waited_for_until_it_expires(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    tb.heartbeat(pending, age_seconds=1.2)  # Hudi's empty file; expires 0.8 s from now
    fast = {**FAST_2S, "pyhudi.write.wait.for.active.writer.ms": "10000"}
    transaction = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=fast)
    started = time.monotonic()
    transaction.begin()
    assert 0.7 <= time.monotonic() - started < 8
    assert transaction.rolled_back == [pending]
    transaction.abort()


def test_pending_write_of_a_dead_process_on_this_host_is_rolled_back_at_once(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    pending = tb.write(Base("p=1", "a"), complete=False)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # a writer that ran here and is gone (its heartbeat is fresh)
    dead = dataclasses.replace(this_process(), pid=child.pid)
    if dead.start_ticks is None or not dead.boot_id:
        pytest.skip("no /proc here: no owner is provably dead")
    tb.heartbeat(pending, age_seconds=1).write_bytes(encode_owner(dead))
    transaction = WriteTransaction(
        tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=dict(WAIT_300_MS)
    )
    started = time.monotonic()
    transaction.begin()
    assert time.monotonic() - started < 0.3  # no wait at all
    assert transaction.rolled_back == [pending]
    transaction.abort()


def test_pending_write_of_this_live_process_is_never_rolled_back(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    live = tb.write(Base("p=1", "a"), complete=False)
    tb.heartbeat(live, age_seconds=1).write_bytes(encode_owner(this_process()))
    with pytest.raises(WriteConflictError, match=live):
        rollback_failed_writes_eager(tb.ctx, {}, record=commit_rollback_to_metadata_table)
    assert (_meta(tb) / f"{live}.inflight").exists()


def test_transaction_heartbeat_exists_before_the_requested_file(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    transaction = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT)
    time = transaction.begin()
    heartbeat = (_meta(tb) / ".heartbeat" / time).stat().st_mtime_ns
    requested = (_meta(tb) / f"{time}.commit.requested").stat().st_mtime_ns
    assert heartbeat <= requested
    transaction.abort()
    assert not (_meta(tb) / ".heartbeat" / time).exists()


def test_occ_transactions_on_disjoint_file_groups_both_commit(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"), Base("p=1", "b"))
    first = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=OCC)
    second = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=OCC)
    t1, t2 = first.begin(), second.begin()  # OCC: the second does not refuse the first
    second.commit(_stats(("p=1", "b")))
    first.commit(_stats(("p=1", "a")))
    assert {i.time for i in tb.ctx.active.reload().timeline.commits()} >= {t1, t2}
    assert not (_meta(tb) / "lock").exists()


def test_occ_loser_raises_write_conflict_and_commits_nothing(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base("p=1", "a"))
    loser = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=OCC)
    winner = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=OCC)
    lost, won = loser.begin(), winner.begin()
    winner.commit(_stats(("p=1", "a")))
    with pytest.raises(WriteConflictError, match=f"{lost} conflicts.*{won}.*p=1/a"):
        loser.commit(_stats(("p=1", "a")))
    loser.abort()
    assert not any(p.name.startswith(lost) for p in _meta(tb).iterdir())
    assert (_meta(tb) / f"{won}.commit").exists()
    assert not (_meta(tb) / "lock").exists()


def test_occ_begin_does_not_roll_back_pending_writes(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    dead = tb.write(Base("p=1", "a"), complete=False)
    transaction = WriteTransaction(tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=OCC)
    transaction.begin()
    assert transaction.rolled_back == []
    assert (_meta(tb) / f"{dead}.inflight").exists()  # LAZY: the cleaner's job
    transaction.abort()
