"""The data table's metadata table (`.hoodie/metadata`) as the table layer sees it: where it is,
its own instant times, and which data instants may still be rolled back (Hudi 0.14, table
version 6, `HoodieBackedTableMetadataWriter` / `HoodieTableMetadataUtil`).

The metadata table is a MERGE_ON_READ Hudi table with its own timeline: one deltacommit per data
instant (at the data instant's time), and its own services at times derived from the latest
deltacommit `t` so they sort right after it and before the next data instant:

| suffix | action on the metadata table                         | Hudi name                    |
|--------|------------------------------------------------------|------------------------------|
| `001`  | compaction (`t001.compaction.requested` -> `t001.commit`) | `createCompactionTimestamp` |
| `002`  | clean (`t002.clean`)                                 | `createCleanTimestamp`       |
| `006`  | rollback of a deltacommit, at `<data rollback time>006` | `createRollbackTimestamp` |

A data instant older than (or equal to) the metadata table's latest compaction cannot be rolled
back: the compaction baked its records into base files (Hudi's `validateRollback`; a restore
would be needed).
"""

from __future__ import annotations

import posixpath

from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.instant import Action, Instant
from pyhudi.table.context import TableContext
from pyhudi.timeline import META_FOLDER

#: The metadata table's folder under the data table's `.hoodie/`.
METADATA_TABLE_FOLDER = "metadata"
COMPACTION_SUFFIX = "001"
CLEAN_SUFFIX = "002"
ROLLBACK_SUFFIX = "006"


def metadata_table_base_path(data: TableContext) -> str:
    return posixpath.join(data.meta_path, METADATA_TABLE_FOLDER)


def open_metadata_table(data: TableContext) -> TableContext | None:
    """The metadata table of `data` as a table of its own; None when there is none."""
    base = metadata_table_base_path(data)
    if not data.storage.exists(posixpath.join(base, META_FOLDER)):
        return None
    return TableContext.open_at(data.storage, base)


def latest_compaction(mdt: TableContext) -> Instant | None:
    """The metadata table's latest completed compaction (a `commit` on its timeline)."""
    return mdt.active.timeline.completed().with_actions(Action.COMMIT).last


def deltacommits_since_latest_compaction(mdt: TableContext) -> list[Instant]:
    """Deltacommits (any state) after the latest completed compaction, or all of them
    (`CompactionUtils.getDeltaCommitsSinceLatestCompaction`)."""
    compaction = latest_compaction(mdt)
    after = compaction.time if compaction else ""
    return [i for i in mdt.active.timeline.with_actions(Action.DELTA_COMMIT) if i.time > after]


def metadata_instant_to_roll_back(mdt: TableContext, data_instant: Instant) -> Instant | None:
    """The metadata table's deltacommit written for `data_instant` (any state), None when it has
    none; raises when the metadata table was compacted at or after it (Hudi refuses)."""
    compaction = latest_compaction(mdt)
    if mdt.config.version >= 8:  # Hudi 1.x: by the completion time of the deltacommit
        return _instant_to_roll_back_1x(mdt, data_instant, compaction)
    if compaction is not None and data_instant.time <= compaction.time:
        raise UnsupportedOperationError(
            f"cannot roll back instant {data_instant.time}: the metadata table {mdt.base_path} "
            f"was compacted at {compaction.time}, after it (Hudi needs a restore for this)"
        )
    found = [i for i in deltacommits_since_latest_compaction(mdt) if i.time == data_instant.time]
    return found[-1] if found else None


def _instant_to_roll_back_1x(
    mdt: TableContext, data_instant: Instant, compaction: Instant | None
) -> Instant | None:
    """Versions 8+ (`validateRollback`): a compaction at a new instant time may follow a data
    instant still pending; refused only when its deltacommit completed before the compaction."""
    found = [
        i
        for i in mdt.active.timeline.with_actions(Action.DELTA_COMMIT)
        if i.time == data_instant.time
    ]
    target = found[-1] if found else None
    completed_at = target.completion_time if target is not None and target.is_completed else None
    if completed_at is not None and compaction is not None and completed_at <= compaction.time:
        raise UnsupportedOperationError(
            f"cannot roll back instant {data_instant.time}: the metadata table {mdt.base_path} "
            f"was compacted at {compaction.time}, after it (Hudi needs a restore for this)"
        )
    return target


def is_metadata_table(ctx: TableContext) -> bool:
    """`ctx` is a metadata table: its base path is `<data table>/.hoodie/metadata` (Hudi's
    `HoodieTableMetadata.isMetadataTable`)."""
    parent, name = posixpath.split(ctx.base_path.rstrip("/"))
    return name == METADATA_TABLE_FOLDER and posixpath.basename(parent) == META_FOLDER


def data_table_base_path(mdt: TableContext) -> str:
    """The data table a metadata table belongs to."""
    return posixpath.dirname(posixpath.dirname(mdt.base_path.rstrip("/")))
