"""Simulate a writer that dies after writing data files but before committing."""

from __future__ import annotations

import os
import time

from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import heartbeat_path
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.job import WriteJob
from pyhudi.writer.operations import OPERATIONS
from pyhudi.writer.pipeline import action_for, task_spec
from pyhudi.writer.prepare import prepare_records
from pyhudi.writer.transaction import WriteTransaction


def crashed_write(spark, path: str, df, options: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    """Run a write up to (not including) its commit; returns the instant left inflight."""
    ctx = TableContext.open(path)
    cfg = resolve_write_config(options, ctx.config)
    records, schema = prepare_records(df, cfg, table_arrow_schema(ctx))
    transaction = WriteTransaction(ctx, action_for(cfg, ctx), cfg.operation)
    instant = transaction.begin()
    OPERATIONS[cfg.operation](
        WriteJob(spark, ctx, cfg, task_spec(ctx, cfg, schema, instant), records)
    )
    die(transaction)
    return instant


def die(transaction: WriteTransaction, *, seconds_ago: float = 3600.0) -> None:
    """What a dead writer leaves: no more heartbeats, the last one long ago (expired). An object
    store's modification times cannot be set: there the caller waits for the expiry."""
    heartbeat = transaction.heartbeat
    assert heartbeat is not None
    heartbeat._stop.set()
    if heartbeat._thread is not None:
        heartbeat._thread.join()
    if transaction.ctx.storage.is_local:
        age_heartbeat(transaction.ctx, transaction.instant_time, seconds_ago)


def age_heartbeat(ctx: TableContext, instant_time: str, seconds_ago: float) -> None:
    """Set the heartbeat file's modification time `seconds_ago` into the past."""
    path = heartbeat_path(ctx, instant_time)
    then = time.time() - seconds_ago
    os.utime(path, (then, then))
