"""The metadata table through a restore of its data table (Hudi 0.15
`BaseHoodieWriteClient.restoreToSavepoint`, `HoodieBackedTableMetadataWriter.update(HoodieRestoreMetadata)`).

Before the restore, the metadata table is deleted (and `hoodie.table.metadata.partitions`
cleared; the next write with `hoodie.metadata.enable` builds it again) when it cannot be
restored: the savepoint is not after its oldest compaction or before its timeline starts (Hudi's
two checks), a file group of `files` has no slice at or before the savepoint (Hudi stops with
"please delete metadata table and retry"), or the restore runs with `hoodie.metadata.enable`
false. Otherwise the metadata table is restored too:

1. its own restore to the savepoint time: every metadata instant after it (deltacommits, its
   compactions `<t>001`) rolled back, newest first, with its own `<r'>.restore`;
2. index partitions left without file groups (built after the savepoint) are dropped from
   `hoodie.table.metadata.partitions`;
3. after the data rollbacks, one `files` deltacommit at `<new time>003` (Hudi's restore suffix)
   brings the listing in step with storage: data files named with an instant at or before the
   data restore's that the metadata table lacks are added (the ROLLBACK command-block logs), and
   files it lists that are gone (deleted by cleans after the savepoint) are removed. Hudi writes
   it even when nothing differs, so the restore is on the metadata timeline.

pyhudi restores the metadata table before rolling back the data instants, not after as Hudi does:
the data rollbacks then find no metadata deltacommit to roll back, and a metadata compaction after
the savepoint never makes them refuse; the end state is Hudi's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from pyhudi.codec.metadata_hfile import file_list_record, partition_list_record
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.config import table as tkeys
from pyhudi.fs_view.listing import PartitionListing
from pyhudi.metadata.deltacommit import FILES_PARTITION, write_log_deltacommit
from pyhudi.metadata.reader import MetadataTable
from pyhudi.metadata.writer import metadata_enabled, metadata_table_readable
from pyhudi.model.instant import Action
from pyhudi.services.savepoint.timeline_restore import (
    execute_restore,
    file_instant,
    finish_restore,
    instants_to_restore,
    pending_restore,
    schedule_restore,
)
from pyhudi.table.context import TableContext
from pyhudi.table.metadata_table import metadata_table_base_path, open_metadata_table
from pyhudi.timeline.instant_time import new_instant_time

#: `HoodieTableMetadataUtil.OperationSuffix.RESTORE`: the metadata table's restore sync commit.
RESTORE_SUFFIX = "003"

log = logging.getLogger(__name__)


def why_not_restorable(mdt: TableContext, savepoint_time: str) -> str | None:
    """Why the metadata table cannot be restored to `savepoint_time` (None: it can)."""
    timeline = mdt.active.timeline
    compaction = timeline.completed().with_actions(Action.COMMIT).first
    if compaction is not None and savepoint_time <= compaction.time:
        return f"the savepoint is not after its oldest compaction {compaction.time}"
    first = timeline.with_actions(Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT).first
    if first is not None and savepoint_time < first.time:
        return f"the savepoint is older than its timeline, which starts at {first.time}"
    for group in mdt.view().file_groups(None, [FILES_PARTITION]):
        if not any(s.base_instant_time <= savepoint_time for s in group.slices):
            return f"its file group {group.file_id} has no file slice at or before the savepoint"
    return None


def prepare_metadata_table(
    ctx: TableContext, savepoint_time: str, options: Mapping[str, str]
) -> str:
    """Delete the metadata table when it cannot be restored; `restored` (it will be), `deleted`,
    or `none` (the table has none)."""
    if not ctx.storage.exists(metadata_table_base_path(ctx)):
        return "none"
    reason = _why_deleted(ctx, savepoint_time, options)
    if reason is None:
        return "restored"
    log.warning(
        "restore of %s to %s: deleting its metadata table (%s); the next write with the metadata "
        "table enabled builds it again",
        ctx.uri,
        savepoint_time,
        reason,
    )
    ctx.storage.delete_dir(metadata_table_base_path(ctx))
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: "", tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )
    return "deleted"


def _why_deleted(ctx: TableContext, savepoint_time: str, options: Mapping[str, str]) -> str | None:
    if not metadata_enabled(options):
        return "hoodie.metadata.enable is false"
    mdt = open_metadata_table(ctx) if metadata_table_readable(ctx) else None
    if mdt is None or FILES_PARTITION not in ctx.config.metadata_partitions:
        return "it is incomplete"
    return why_not_restorable(mdt, savepoint_time)


def restore_metadata_table(ctx: TableContext, savepoint_time: str) -> list[str]:
    """Restore the metadata table of `ctx` to `savepoint_time` (resuming a restore of it to
    the same time that died); returns the rollback times it used (already deleted)."""
    mdt = open_metadata_table(ctx)
    if mdt is None:
        return []
    pending = pending_restore(mdt)
    if pending is not None and pending[1].get("savepointToRestoreTimestamp") != savepoint_time:
        mdt.active.delete_pending_files(pending[0])  # a dead restore to another time
        pending = None
    if pending is None:
        instants = instants_to_restore(mdt, savepoint_time)
        if not instants:
            return []
        pending = schedule_restore(mdt, savepoint_time, instants)
    inflight, metadata = execute_restore(mdt, *pending)
    finish_restore(mdt, inflight, metadata, savepoint_time)
    _drop_emptied_partitions(ctx, mdt)
    return [
        str(rollback.get("startRollbackTime") or "")
        for rollbacks in metadata["hoodieRestoreMetadata"].values()
        for rollback in rollbacks
    ]


def _drop_emptied_partitions(ctx: TableContext, mdt: TableContext) -> None:
    """Index partitions the restore emptied (initialised after the savepoint) leave the list."""
    view = mdt.view()
    kept = [p for p in ctx.config.metadata_partitions if view.file_groups(None, [p])]
    dropped = [p for p in ctx.config.metadata_partitions if p not in kept]
    if not dropped:
        return
    log.warning(
        "restore of %s: metadata partitions %s were built after the savepoint and are dropped "
        "(a write that enables them builds them again)",
        ctx.uri,
        ", ".join(dropped),
    )
    for name in dropped:
        ctx.storage.delete_dir(mdt.partition_path(name))
    ctx.update_properties({tkeys.METADATA_PARTITIONS.key: ",".join(kept)})


def sync_metadata_table(ctx: TableContext, restore_time: str, later_than: Iterable[str]) -> str:
    """The `files` deltacommit that brings the metadata listing in step with storage after the
    data rollbacks; returns its instant time (`<new time>003`, after `later_than`)."""
    listed = MetadataTable.open(ctx).all_files()
    on_storage = PartitionListing.scan(ctx.storage, ctx.base_path).files
    records: list[MetadataRecord] = []
    gone_partitions = []
    for partition, files in listed.items():
        statuses = on_storage.get(partition)
        if statuses is None:
            gone_partitions.append(partition)
            if files:
                records.append(file_list_record(partition, deleted=sorted(files)))
            continue
        present = {
            s.name: s.size_bytes
            for s in statuses
            if (named := file_instant(partition, s.name)) is not None
            and named <= restore_time
            and s.size_bytes > 0
        }
        added = {name: size for name, size in present.items() if name not in files}
        deleted = sorted(name for name in files if name not in present)
        if added or deleted:
            records.append(file_list_record(partition, added, deleted))
    if gone_partitions:
        records.append(partition_list_record(deleted=gone_partitions))
    mdt = open_metadata_table(ctx)
    assert mdt is not None, f"{ctx.uri} has no metadata table to sync"
    times = [*mdt.active.timeline.times(), *ctx.active.timeline.times(), *later_than]
    sync_time = new_instant_time(times, utc=ctx.config.timeline_timezone_utc) + RESTORE_SUFFIX
    write_log_deltacommit(mdt, sync_time, records)
    return sync_time
