"""`pyhudi show locks` and `pyhudi show heartbeats` (no Spark)."""

from __future__ import annotations

import json

from tests.helpers.timeline_builder import Base, TimelineBuilder

from pyhudi.cli.main import main
from pyhudi.config.concurrency import FILE_SYSTEM_LOCK, STORAGE_BASED_LOCK, STORAGE_LOCK
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.table.lock import table_transaction
from pyhudi.writer.transaction import WriteTransaction


def _occ(provider: str) -> dict[str, str]:
    return {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": provider,
    }


def test_show_locks_names_the_holder_of_the_file_lock_and_the_lease(tmp_path, capsys):
    tb = TimelineBuilder.create(tmp_path / "t")
    path = tb.ctx.base_path
    assert main(["show", "locks", path]) == 0
    assert "nobody holds the table lock" in capsys.readouterr().out
    with table_transaction(tb.ctx, _occ(FILE_SYSTEM_LOCK)):
        assert main(["show", "locks", path, "--json"]) == 0
        (held,) = json.loads(capsys.readouterr().out)
    assert held["provider"] == FILE_SYSTEM_LOCK
    assert held["path"].endswith("/t/.hoodie/lock")
    assert "MainThread" in held["holder"] and "pyhudi pid" in held["holder"]
    assert held["expires"].startswith("never")
    with table_transaction(tb.ctx, _occ(STORAGE_LOCK)):
        assert main(["show", "locks", path]) == 0
        out = capsys.readouterr().out
    assert STORAGE_BASED_LOCK in out and "table_lock.json" in out and "(expired)" not in out
    assert main(["show", "locks", path]) == 0  # released: the object stays, marked expired
    assert "nobody holds the table lock" in capsys.readouterr().out


def test_show_heartbeats_tells_live_from_expired(tmp_path, capsys):
    tb = TimelineBuilder.create(tmp_path / "t")
    dead = tb.write(Base("p=1", "a"), complete=False)
    tb.heartbeat(dead, age_seconds=600)
    running = WriteTransaction(
        tb.ctx, Action.COMMIT, WriteOperationType.UPSERT, options=_occ(FILE_SYSTEM_LOCK)
    )
    live = running.begin()
    try:
        assert main(["show", "heartbeats", tb.ctx.base_path, "--json"]) == 0
        rows = {r["instant_time"]: r for r in json.loads(capsys.readouterr().out)}
    finally:
        running.abort()
    assert rows[dead]["live"] is False and rows[dead]["instant_state"] == "inflight"
    assert rows[live]["live"] is True and rows[live]["age_s"] < 60
    assert (
        main(
            [
                "show",
                "heartbeats",
                tb.ctx.base_path,
                "-o",
                "hoodie.client.heartbeat.interval_in_ms=1000000",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert dead in out and "live" in out
