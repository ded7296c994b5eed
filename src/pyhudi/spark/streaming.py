"""Spark Structured Streaming into a Hudi table: `pyhudi.stream_write`.

Each micro-batch is one `pyhudi.write` (one commit). The micro-batch id is recorded in the commit's
extraMetadata together with the sink (checkpoint location), so a batch replayed after a restart is
skipped: a killed and restarted query neither duplicates nor loses records. After each commit the
table services are scheduled (the analog of Hudi's checkpoint-complete hook) and executed in the
background; with a bounded trigger (`availableNow`/`once`) they run synchronously once the input
is done, as in batch mode.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from pyhudi.client.post_commit import ASYNC_CONTEXT_KEY
from pyhudi.client.standalone import run_pending_services
from pyhudi.client.write_client import write
from pyhudi.config import clustering as clkeys
from pyhudi.config.unknown import check_write_options
from pyhudi.exceptions import HudiError
from pyhudi.services.runner import runner_for
from pyhudi.spark.sync import sync_enabled, sync_to_catalog
from pyhudi.table.context import TableContext

log = logging.getLogger(__name__)
BATCH_ID_KEY = "_pyhudi.streaming.batch.id"
SINK_KEY = "_pyhudi.streaming.sink"
_ALLOW_UPDATES = "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"


def last_committed_batch(path: str, sink: str) -> int | None:
    """The micro-batch id of this sink's latest completed commit, if any."""
    if not TableContext.exists(path):
        return None
    ctx = TableContext.open(path)
    for instant in reversed(ctx.active.timeline.commits().instants):
        extra = ctx.active.commit_metadata(instant).extra_metadata
        if extra.get(SINK_KEY) == sink and BATCH_ID_KEY in extra:
            return int(extra[BATCH_ID_KEY])
    return None


class HudiStreamingQuery:
    """The `StreamingQuery`, plus the table services that run alongside it."""

    def __init__(
        self, query: StreamingQuery, path: str, bounded: bool, finish: threading.Thread | None
    ) -> None:
        """Made by `pyhudi.stream_write`; attributes it does not define are the query's."""
        self._query, self.path, self.bounded, self._finish = query, path, bounded, finish

    def __getattr__(self, name: str) -> Any:
        return getattr(self._query, name)

    @property
    def query(self) -> StreamingQuery:
        """Spark's own `StreamingQuery`."""
        return self._query

    def awaitTermination(self, timeout: int | None = None) -> bool | None:
        """Spark's `awaitTermination`; a bounded query (`availableNow`, `once`) also waits for the
        table services its last batch started."""
        result = (
            self._query.awaitTermination(timeout)
            if timeout is not None
            else self._query.awaitTermination()
        )
        if self._finish is not None and not self._query.isActive:
            self._finish.join()
        return result

    def stop(self) -> None:
        """Stop the query, then wait for the table services running beside it."""
        self._query.stop()

        runner_for(TableContext.open(self.path).uri).wait()

    @property
    def service_failures(self) -> list[str]:
        """Errors of the table services that ran beside the query (they never stop it)."""
        return (
            list(runner_for(TableContext.open(self.path).uri).failures)
            if TableContext.exists(self.path)
            else []
        )


def stream_write(
    streaming_df: DataFrame,
    path: str,
    options: Mapping[str, str],
    *,
    checkpoint_location: str,
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> HudiStreamingQuery:
    """Start a streaming query writing every micro-batch into the Hudi table at `path`.

    `trigger` takes the keyword arguments of `DataStreamWriter.trigger`, e.g. `{"availableNow": True}`
    or `{"processingTime": "10 seconds"}`; `options` are those of `pyhudi.write`.
    """
    sink = (
        os.path.abspath(checkpoint_location)
        if "://" not in checkpoint_location
        else checkpoint_location
    )
    bounded = bool(trigger and (trigger.get("availableNow") or trigger.get("once")))
    base = {str(k): str(v) for k, v in options.items()}
    check_write_options(base)  # before the query starts, not inside its first micro-batch
    base.setdefault(
        clkeys.UPDATES_STRATEGY.key, _ALLOW_UPDATES
    )  # async clustering must not stop ingestion

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        last = last_committed_batch(path, sink)
        if last is not None and batch_id <= last:
            log.info("micro-batch %s of %s already committed; skipped", batch_id, sink)
            return
        if batch.isEmpty():
            return
        extra = {
            BATCH_ID_KEY: str(batch_id),
            SINK_KEY: sink,
            ASYNC_CONTEXT_KEY: "false" if bounded else "true",
        }
        write(batch, path, {**base, **extra})
        if sync_enabled(base):  # Hudi's streaming sink syncs after each micro-batch commit
            sync_to_catalog(batch.sparkSession, path, base)

    writer = streaming_df.writeStream.foreachBatch(write_batch).option(
        "checkpointLocation", checkpoint_location
    )
    if trigger:
        writer = writer.trigger(**dict(trigger))
    if query_name:
        writer = writer.queryName(query_name)
    query = writer.start()
    finish = None
    if bounded:
        finish = threading.Thread(
            target=_finish_bounded, args=(query, streaming_df, path, base), daemon=True
        )
        finish.start()
    return HudiStreamingQuery(query, path, bounded, finish)


def _finish_bounded(
    query: StreamingQuery, streaming_df: DataFrame, path: str, options: Mapping[str, str]
) -> None:
    """Bounded input: once the query is done, run the pending services synchronously."""
    try:
        query.awaitTermination()
    except Exception:  # the query's own error is the caller's to see
        return
    if not TableContext.exists(path):
        return
    ctx = TableContext.open(path)
    for attempt in (1, 2):
        try:
            run_pending_services(streaming_df.sparkSession, ctx.reload(), options)
            return
        except HudiError as err:  # e.g. a clustering that lost a write conflict (rolled back)
            if attempt == 1:  # no write follows a bounded stream: the rest runs on a second pass
                log.info("table services after the bounded stream into %s: %s; again", path, err)
                continue
            log.warning("table services after the bounded stream into %s failed: %s", path, err)
            runner = runner_for(ctx.uri)
            with runner.lock:
                runner.failures.append(f"services after the stream: {err}")
