"""The metadata table's own table services (Hudi 0.14
`HoodieBackedTableMetadataWriter.performTableServices`, table version 6), Spark-free.

When: Hudi 0.14 runs them as a write client starts an action (`doInitTable` ->
`initializeMetadataTable`, under the table lock, the new instant just created), so a compaction at
`<t>001` follows the previous write's deltacommit `t`. Called inside a commit - after the metadata
table's deltacommit `t` but before the data instant `t` completes - compaction would never be due
(the data instant `t` is pending at `t`); call it at the start of a write or after the commit.

With `t` the metadata table's latest completed deltacommit, in Hudi's order:
1. pending compactions of the metadata table are finished (`runPendingTableServicesOperations`);
2. clean at `<t>002` (`cleanIfNecessary`), KEEP_LATEST_COMMITS retaining 20 commits; pending
   cleans are completed first; skipped while fewer than 3 instants completed after the latest
   compaction (readers may still be reading the slice before it);
3. compaction at `<t>001` when due (`pyhudi.metadata.compaction`);
4. archival of the metadata table's timeline keeping the data table's `hoodie.keep.min.commits`
   + 1 to `hoodie.keep.max.commits` + 1 commits, never past the data table's first active commit
   or first pending instant (`services/archival/plan.py`).

Table versions 8 and 9 (Hudi 1.2): compaction and clean take new instant times
(`metadata.compaction`), not `<t>001` / `<t>002`; archival writes the LSM history
(`services/archival/lsm.py`).

The caller holds the data table's lock (the metadata table has one writer: the data table's). `run_metadata_table_services(data_ctx, options)` does nothing on a table without a
metadata table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pyhudi.config.archival import ArchivalConfig
from pyhudi.config.clean import CleanConfig, CleaningPolicy
from pyhudi.config.metadata_services import (
    CLEAN_AFTER_COMPACTION_INSTANTS,
    MetadataServicesConfig,
)
from pyhudi.metadata.compaction import (
    compact_if_necessary,
    finish_pending_compactions,
    latest_deltacommit,
)
from pyhudi.model.instant import Action, Instant
from pyhudi.model.results import ArchiveResult, CleanResult
from pyhudi.services.archival.execute import archive
from pyhudi.services.clean.execute import execute_clean, schedule_clean
from pyhudi.table.context import TableContext
from pyhudi.table.metadata_table import CLEAN_SUFFIX, latest_compaction, open_metadata_table


@dataclass(frozen=True)
class MetadataServicesResult:
    """What one run of the metadata table's services did."""

    clean: CleanResult | None = None
    compaction: Instant | None = None
    archive: ArchiveResult | None = None


def run_metadata_table_services(
    data: TableContext, settings: MetadataServicesConfig | Mapping[str, str] | None = None
) -> MetadataServicesResult:
    """Finish pending compactions, clean, compact and archive the metadata table of `data` as
    Hudi 0.14's `performTableServices`; `settings` are the data table's write options (or
    resolved already). Nothing happens on a table without a metadata table."""
    config = (
        settings
        if isinstance(settings, MetadataServicesConfig)
        else MetadataServicesConfig.from_options(settings or {})
    )
    mdt = open_metadata_table(data)
    if mdt is None:
        return MetadataServicesResult()
    data.active.reload()
    finished = finish_pending_compactions(data, mdt)
    latest = latest_deltacommit(mdt)
    if latest is None:
        return MetadataServicesResult(compaction=finished)
    cleaned = clean_metadata_table(mdt, config, latest.time)
    compacted = compact_if_necessary(data, mdt, config) or finished
    archived = archive(mdt, metadata_archival_config(config))
    return MetadataServicesResult(cleaned, compacted, archived)


def metadata_clean_config(config: MetadataServicesConfig) -> CleanConfig:
    return CleanConfig(
        policy=CleaningPolicy.KEEP_LATEST_COMMITS,
        commits_retained=config.cleaner_commits_retained,
    )


def metadata_archival_config(config: MetadataServicesConfig) -> ArchivalConfig:
    return ArchivalConfig(
        min_commits_to_keep=config.min_commits_to_keep,
        max_commits_to_keep=config.max_commits_to_keep,
        cleaner_policy=CleaningPolicy.KEEP_LATEST_COMMITS.value,
        cleaner_commits_retained=config.cleaner_commits_retained,
        compaction_trigger_strategy="NUM_COMMITS",
        compaction_max_delta_commits=config.compact_max_delta_commits,
    )


def clean_metadata_table(
    mdt: TableContext, config: MetadataServicesConfig, latest_deltacommit_time: str
) -> CleanResult | None:
    """Complete pending cleans, then clean at `<latest deltacommit>002` when there is something
    to delete and enough instants completed since the latest compaction."""
    mdt.active.reload()
    results = [
        execute_clean(mdt, i)
        for i in list(mdt.active.timeline.pending().with_actions(Action.CLEAN))
    ]
    compaction = latest_compaction(mdt)
    if compaction is not None:
        after = mdt.active.timeline.completed().filter(lambda i: i.time > compaction.time)
        if len(after) < CLEAN_AFTER_COMPACTION_INSTANTS:
            return results[-1] if results else None
    instant_time: str | None = latest_deltacommit_time + CLEAN_SUFFIX
    if mdt.config.version >= 8:  # Hudi 1.2 cleans at a new instant time
        instant_time = None
    elif any(i.time == instant_time for i in mdt.active.timeline):
        return results[-1] if results else None
    requested = schedule_clean(mdt, metadata_clean_config(config), instant_time=instant_time)
    if requested is not None:
        results.append(execute_clean(mdt, requested))
    return results[-1] if results else None
