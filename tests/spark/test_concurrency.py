"""Concurrent writers in one process, interleaved deterministically: a write held open between its
data files and its commit while another write (or a clean) runs. Real Spark, real files, hudi-rs.

The multi-process and SIGKILL tests are in tests/process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.crash import age_heartbeat
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.config.concurrency import FILE_SYSTEM_LOCK
from pyhudi.model.commit import CommitMetadata
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.job import WriteJob
from pyhudi.writer.operations import OPERATIONS
from pyhudi.writer.pipeline import action_for, commit_metadata, task_spec
from pyhudi.writer.prepare import prepare_records
from pyhudi.writer.transaction import WriteTransaction

OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": FILE_SYSTEM_LOCK,
    "hoodie.clean.automatic": "false",
}


@dataclass
class HeldWrite:
    """A write whose data files are written and which has not committed yet (its writer alive)."""

    transaction: WriteTransaction
    metadata: CommitMetadata

    def commit(self) -> None:
        try:
            self.transaction.commit(self.metadata)
        except BaseException:
            self.transaction.abort()
            raise


def held_write(spark, path: str, rows, options: dict[str, str]) -> HeldWrite:  # type: ignore[no-untyped-def]
    ctx = TableContext.open(path)
    cfg = resolve_write_config(options, ctx.config)
    records, schema = prepare_records(df_of(spark, rows), cfg, table_arrow_schema(ctx))
    transaction = WriteTransaction(
        ctx, action_for(cfg, ctx), cfg.operation, options=dict(cfg.options)
    )
    instant = transaction.begin()
    outcome = OPERATIONS[cfg.operation](
        WriteJob(spark, ctx, cfg, task_spec(ctx, cfg, schema, instant), records)
    )
    return HeldWrite(transaction, commit_metadata(cfg, outcome, schema))


def _create(spark, path: str, options: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    pyhudi.write(
        df_of(spark, trips(0, 30)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )


def _timeline(path: str) -> list[str]:
    return sorted(n for n in os.listdir(Path(path) / ".hoodie") if n[:1].isdigit())


def _fares(path: str) -> dict[str, float]:
    table = hudi_rs_table(path)
    return dict(zip(table.column("uuid").to_pylist(), table.column("fare").to_pylist()))


def test_occ_overlapping_writes_loser_raises_winner_intact(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **OCC}
    _create(spark, path, options)
    loser = held_write(spark, path, trips(0, 6, ts=2, fare=2.0), options)
    won = pyhudi.write(df_of(spark, trips(3, 6, ts=3, fare=3.0)), path, options)  # same file groups
    with pytest.raises(pyhudi.WriteConflictError, match=f"conflicts .*{won.instant_time}"):
        loser.commit()
    lost = loser.transaction.instant_time
    assert not any(name.startswith(lost) for name in _timeline(path))
    assert not [p for p in Path(path).rglob("*.parquet") if lost in p.name]
    fares = _fares(path)
    assert len(fares) == 30
    assert {k: v for k, v in fares.items() if v in (2.0, 3.0)} == {
        f"id-{i:05d}": 3.0 for i in range(3, 9)
    }
    assert pyhudi.read(spark, path).count() == 30
    assert not (Path(path) / ".hoodie" / "lock").exists()


def test_occ_disjoint_partitions_both_commit(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **OCC}
    _create(spark, path, options)
    first = held_write(spark, path, trips(100, 20, city="sf", fare=5.0), options)
    second = pyhudi.write(df_of(spark, trips(200, 20, city="chennai", fare=6.0)), path, options)
    first.commit()
    fares = _fares(path)
    assert len(fares) == 70
    assert sum(1 for v in fares.values() if v == 5.0) == 20
    assert sum(1 for v in fares.values() if v == 6.0) == 20
    completed = set(_timeline(path))
    assert {
        f"{first.transaction.instant_time}.commit",
        f"{second.instant_time}.commit",
    } <= completed


def test_single_writer_fails_fast_on_a_live_writer_and_loses_nothing(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    _create(spark, path, options)
    live = held_write(spark, path, trips(0, 6, ts=2, fare=2.0), options)
    before = _timeline(path)
    waiting = {**options, "pyhudi.write.wait.for.active.writer.ms": "200"}  # default: 2 min
    with pytest.raises(pyhudi.WriteConflictError) as err:
        pyhudi.write(df_of(spark, trips(300, 5)), path, waiting)
    assert live.transaction.instant_time in str(err.value)
    assert f"pid {os.getpid()}" in str(err.value)  # the live owner: this process
    assert "hoodie.write.concurrency.mode=optimistic_concurrency_control" in str(err.value)
    assert _timeline(path) == before
    live.commit()
    fares = _fares(path)
    assert len(fares) == 30 and sum(1 for v in fares.values() if v == 2.0) == 6


def test_rolled_back_write_cannot_complete_its_commit(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    _create(spark, path, options)
    stalled = held_write(spark, path, trips(40, 6, fare=9.0), options)
    transaction = stalled.transaction
    transaction.heartbeat._stop.set()  # the writer stalls: its heartbeat expires
    transaction.heartbeat._thread.join()
    age_heartbeat(transaction.ctx, transaction.instant_time, 3600)
    result = pyhudi.write(df_of(spark, trips(50, 4, fare=7.0)), path, options)  # EAGER rollback
    assert result.rolled_back == (transaction.instant_time,)
    with pytest.raises(pyhudi.WriteConflictError, match=transaction.instant_time):
        stalled.commit()
    assert f"{transaction.instant_time}.commit" not in _timeline(path)
    fares = _fares(path)
    assert len(fares) == 34 and 9.0 not in fares.values()
    assert pyhudi.read(spark, path).count() == 34


def test_occ_lazy_clean_rolls_back_a_dead_writer_only(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **OCC}
    _create(spark, path, options)
    dead = held_write(spark, path, trips(60, 3), options)
    dead.transaction.heartbeat._stop.set()
    dead.transaction.heartbeat._thread.join()
    age_heartbeat(dead.transaction.ctx, dead.transaction.instant_time, 3600)
    alive = held_write(spark, path, trips(70, 3, city="sf"), options)
    pyhudi.HudiTable(path).clean(options)
    names = _timeline(path)
    assert not any(n.startswith(dead.transaction.instant_time) for n in names)
    assert any(n.endswith(".rollback") for n in names)
    alive.commit()
    assert len(_fares(path)) == 33


def test_unknown_lock_provider_is_config_error_and_writes_nothing(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": "com.example.lock.HBaseLockProvider",
    }
    with pytest.raises(pyhudi.ConfigError, match="HBaseLockProvider"):
        pyhudi.write(df_of(spark, trips(0, 3)), path, options)
    assert not os.path.exists(path) or not os.listdir(path)
