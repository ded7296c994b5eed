"""Table services after a commit, in Hudi's order: compaction, clustering, clean, archival, then
the metadata table's own services (its clean, compaction and archival, under the table lock).

* inline (`hoodie.compact.inline`, true by default for batch writes to merge-on-read tables as
  in Hudi 0.14+, `hoodie.clustering.inline`, `hoodie.clean.automatic`,
  `hoodie.archive.automatic`): scheduled and executed before the write returns;
* async (`hoodie.compact.schedule.inline` or streaming's `hoodie.datasource.compaction.async.enable`,
  `hoodie.clustering.async.enabled`, `hoodie.clean.async`, `hoodie.archive.async`): scheduled here,
  executed by the table's `ServiceRunner` in the background.
A failing service is logged and reported in `CommitResult.services`; the write has already committed.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping

from pyspark.sql import SparkSession

from pyhudi.config import archival as archival_keys
from pyhudi.config import clean as clean_keys
from pyhudi.config import clustering as clustering_keys
from pyhudi.config import compaction as compaction_keys
from pyhudi.config import write as write_keys
from pyhudi.config.archival import ArchivalConfig
from pyhudi.config.clean import CleanConfig
from pyhudi.model.results import CommitResult
from pyhudi.services.archival.execute import archive
from pyhudi.services.clean.execute import run_clean
from pyhudi.services.clustering.execute import (
    commits_since_last_clustering,
    pending_clusterings,
    run_clustering,
    schedule_clustering,
)
from pyhudi.services.compaction.execute import (
    pending_compactions,
    run_compaction,
    schedule_compaction,
)
from pyhudi.services.metadata_table import run_metadata_table_services
from pyhudi.services.runner import runner_for
from pyhudi.table.context import TableContext
from pyhudi.table.lock import table_transaction
from pyhudi.table.metadata_table import open_metadata_table
from pyhudi.writer.config import WriteConfig

log = logging.getLogger(__name__)
#: Set by streaming writes: "true" executes scheduled services in the background, "false" (a bounded
#: stream) only schedules them, for one synchronous run at the end. Batch writes leave it unset.
ASYNC_CONTEXT_KEY = write_keys.SERVICES_ASYNC_CONTEXT


def run_inline_services(
    spark: SparkSession, ctx: TableContext, cfg: WriteConfig, result: CommitResult
) -> CommitResult:
    """Run the table services due after the commit of `result`; their reports go into `result.services`."""
    options = cfg.options
    mode = options.get(
        ASYNC_CONTEXT_KEY
    )  # None: batch write; "true": streaming; "false": bounded streaming
    reports: list[str] = []
    steps: list[tuple[str, Callable[[], list[str]]]] = []
    if ctx.config.is_merge_on_read:
        steps.append(("compaction", lambda: compaction_step(spark, ctx.uri, options, mode)))
    steps.append(("clustering", lambda: clustering_step(spark, ctx.uri, options, mode)))
    if mode != "false":  # a bounded stream cleans and archives once, at its end
        steps.append(("clean", lambda: clean_step(ctx.uri, options, mode == "true")))
        steps.append(("archival", lambda: archival_step(ctx.uri, options, mode == "true")))
    steps.append(("metadata table services", lambda: metadata_table_step(ctx.uri, options)))
    for name, step in steps:
        try:
            reports.extend(step())
        except Exception as err:
            log.exception(
                "%s after commit %s failed; it is retried at a later trigger",
                name,
                result.instant_time,
            )
            reports.append(f"{name} failed: {err}")
    return dataclasses.replace(result, services=tuple(reports))


def _fresh(uri: str) -> TableContext:
    """The table at `uri` (its full URI: a bare path would lose an object store's scheme) as it
    is now, after the commit and the services before."""
    return TableContext.open(uri)


def _submit(uri: str, kind: str, action: Callable[[], object]) -> list[str]:
    started = runner_for(_fresh(uri).uri).submit(kind, action)
    return [f"{kind}: started in the background"] if started else []


def compaction_step(
    spark: SparkSession, uri: str, options: Mapping[str, str], mode: str | None
) -> list[str]:
    ctx = _fresh(uri)
    if mode is None and compacts_inline(options):
        return [str(o) for o in run_compaction(spark, ctx, options)]
    streaming = mode is not None and (
        compaction_keys.ASYNC_ENABLE.get(options) or compaction_keys.INLINE.get(options)
    )
    if not (streaming or compaction_keys.SCHEDULE_INLINE.get(options)):
        return []
    scheduled = schedule_compaction(ctx, options)
    reports = [f"compaction {scheduled.time}: scheduled"] if scheduled else []
    if mode == "true" and pending_compactions(ctx):
        action = lambda: run_compaction(spark, _fresh(uri), options, schedule=False)  # noqa: E731
        reports += _submit(uri, "compaction", action)
    return reports


def compacts_inline(options: Mapping[str, str]) -> bool:
    """Whether a batch write to a merge-on-read table compacts inline: `hoodie.compact.inline`
    when given, else true, as Hudi 0.14+ decides for its data source and SQL writes (a compaction
    once `hoodie.compact.inline.max.delta.commits` delta commits followed the last one)."""
    if compaction_keys.INLINE.is_set(options):
        return compaction_keys.INLINE.get(options)
    return True


def clustering_step(
    spark: SparkSession, uri: str, options: Mapping[str, str], mode: str | None
) -> list[str]:
    inline = clustering_keys.INLINE.get(options)
    asynchronous = clustering_keys.ASYNC_ENABLED.get(
        options
    ) or clustering_keys.SCHEDULE_INLINE.get(options)
    if not inline and not asynchronous:
        return []
    ctx = _fresh(uri)
    every = (
        clustering_keys.INLINE_MAX_COMMITS.get(options)
        if inline
        else clustering_keys.ASYNC_MAX_COMMITS.get(options)
    )
    due = commits_since_last_clustering(ctx) >= every
    if mode is None and inline:
        return [str(o) for o in run_clustering(spark, ctx, options)] if due else []
    scheduled = schedule_clustering(ctx, options) if due and not pending_clusterings(ctx) else None
    reports = [f"clustering {scheduled.time}: scheduled"] if scheduled else []
    if mode == "true" and pending_clusterings(ctx):
        action = lambda: run_clustering(spark, _fresh(uri), options, schedule=False)  # noqa: E731
        reports += _submit(uri, "clustering", action)
    return reports


def clean_step(uri: str, options: Mapping[str, str], background: bool) -> list[str]:
    if not clean_keys.AUTOMATIC.get(options):
        return []
    action = lambda: run_clean(  # noqa: E731
        _fresh(uri), CleanConfig.from_options(options), lock_options=options
    )
    if background or clean_keys.ASYNC.get(options):
        return _submit(uri, "clean", action)
    outcome = action()
    return [f"clean: {outcome}"] if outcome else []


def archival_step(uri: str, options: Mapping[str, str], background: bool) -> list[str]:
    if not archival_keys.AUTOMATIC.get(options):
        return []
    action = lambda: archive(  # noqa: E731
        _fresh(uri), ArchivalConfig.from_options(options), lock_options=options
    )
    if background or archival_keys.ASYNC.get(options):
        return _submit(uri, "archival", action)
    outcome = action()
    return [f"archival: {outcome}"] if outcome and getattr(outcome, "archived", True) else []


def metadata_table_step(uri: str, options: Mapping[str, str]) -> list[str]:
    """The metadata table's clean, compaction and archival (Hudi runs them as the next action
    starts; pyhudi right after the commit, under the table lock): nothing without one."""
    ctx = _fresh(uri)
    if open_metadata_table(ctx) is None:
        return []
    with table_transaction(ctx, options):
        outcome = run_metadata_table_services(ctx, options)
    done = [
        f"metadata table {name}: {value}"
        for name, value in (
            ("compaction", outcome.compaction.time if outcome.compaction else None),
            ("clean", outcome.clean),
            ("archival", outcome.archive),
        )
        if value and getattr(value, "archived", True)
    ]
    return done
