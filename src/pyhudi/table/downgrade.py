"""Downgrading a table of version 9 to 8 or 6 (and 8 to 6), as Apache Hudi 1.2's downgrade
handlers do (`NineToEightDowngradeHandler`, `EightToSevenDowngradeHandler`,
`SevenToSixDowngradeHandler`, through `CALL downgrade_table`):

1. failed writes are rolled back and a merge-on-read table's log files compacted, at the table's
   version (the caller does this, as for an upgrade);
2. 9 -> 8 changes `hoodie.properties` only: the legacy payload class becomes the payload class
   again, the ordering fields the precombine field, the merge strategy id is recorded;
3. 8 -> 6 moves the timeline back to layout 1 (`.hoodie/<t>.<action>[.<state>]`, completion times
   dropped, commit metadata as JSON, a pending `clustering` a `replacecommit` again) and drops the
   merge mode and strategy id from `hoodie.properties`.

As for upgrades (`pyhudi.table.upgrade`), pyhudi writes the layout-1 files beside the layout-2
ones, switches `hoodie.properties`, then deletes the layout-2 files: a SIGKILL leaves a table
readable at one version or the other. The metadata table is deleted and rebuilt by the next
write (Hudi downgrades it in place). The instants of the LSM history are written as version-6
archive files before the switch (`pyhudi.services.archival.migrate.downgrade_lsm_history`, passed
in by the write client); the history itself stays, as Hudi leaves it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping

from pyhudi.codec.commit_metadata import decode_commit_metadata, encode_commit_metadata
from pyhudi.codec.file_names import instant_file_name, parse_instant_file
from pyhudi.config import merge as merge_keys
from pyhudi.config import table as table_keys
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.instant import Action, Instant
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.upgrade import (
    DEFAULT_PAYLOAD,
    OVERWRITE_PAYLOAD,
    STRATEGY_ID_KEY,
    delete_metadata_table,
)
from pyhudi.timeline.active import LAYOUT_2_FOLDER

#: Versions pyhudi downgrades a table to (from 9; from 8 to 6).
DOWNGRADE_TARGETS = (6, 8)
_STRATEGY_OF_MODE = {
    "EVENT_TIME_ORDERING": merge_keys.EVENT_TIME_STRATEGY_ID,
    "COMMIT_TIME_ORDERING": merge_keys.COMMIT_TIME_STRATEGY_ID,
    "CUSTOM": "00000000-0000-0000-0000-000000000000",
}
_PAYLOAD_OF_MODE = {
    "EVENT_TIME_ORDERING": DEFAULT_PAYLOAD,
    "COMMIT_TIME_ORDERING": OVERWRITE_PAYLOAD,
}
#: In `.hoodie/archived/` while a downgrade writes archive files: the highest archive version
#: before them (a rerun deletes the later ones). No reader lists it: not a log file name.
ARCHIVE_MARKER = ".pyhudi-downgrade"
_ARCHIVE_FOLDER = "archived"


def check_downgrade(ctx: TableContext, to_version: int) -> None:
    """Refuse a downgrade pyhudi cannot do, before anything is written: a clear error."""
    version = ctx.config.version
    if to_version not in DOWNGRADE_TARGETS or version not in (8, 9) or to_version >= version:
        raise UnsupportedOperationError(
            f"{ctx.uri} is at table version {version}: pyhudi downgrades version 9 to 8 or 6 and "
            f"version 8 to 6, not {version} to {to_version}"
        )


def finish_downgrade(
    ctx: TableContext,
    to_version: int,
    history: Callable[[TableContext], int] | None = None,
) -> tuple[bool, int, int]:
    """Steps 2 and 3 (failed writes rolled back and log files compacted by the caller, under the
    table's write lock); to version 6, `history(ctx)` first writes the LSM history's instants as
    archive files (a history it cannot convert fails before anything changed). Returns (metadata table deleted, timeline files moved,
    archived instants written)."""
    check_downgrade(ctx, to_version)
    changes = downgraded_properties(ctx.config.props, to_version)
    if to_version == 8:
        ctx.update_properties(changes)
        return False, 0, 0
    archived = history(ctx) if history is not None else 0
    deleted = delete_metadata_table(ctx)
    moved = _write_layout_1_timeline(ctx)
    fault_point("downgrade.after_timeline_written")
    ctx.update_properties(changes)
    fault_point("downgrade.after_properties")
    delete_layout_2_timeline(ctx)
    delete_archive_marker(ctx)
    ctx.reload()
    return deleted, moved, archived


def delete_archive_marker(ctx: TableContext) -> bool:
    """Delete the marker of a downgrade writing archive files (`ARCHIVE_MARKER`), once the table
    is at version 6 (or back at 8/9 by an upgrade): nothing is left to undo."""
    return ctx.storage.delete(posixpath.join(ctx.meta_path, _ARCHIVE_FOLDER, ARCHIVE_MARKER))


def downgraded_properties(props: Mapping[str, str], to_version: int) -> dict[str, str | None]:
    """The entries Hudi 1.2 changes downgrading a table of version 8 or 9 to `to_version`."""
    changes: dict[str, str | None] = {table_keys.VERSION.key: str(to_version)}
    mode = props.get(merge_keys.RECORD_MERGE_MODE.key)
    if props.get(table_keys.VERSION.key) == "9":  # NineToEightDowngradeHandler
        legacy = props.get(merge_keys.LEGACY_PAYLOAD_CLASS.key)
        payload = (
            legacy or props.get(table_keys.PAYLOAD_CLASS.key) or _PAYLOAD_OF_MODE.get(mode or "")
        )
        if payload:
            changes[table_keys.PAYLOAD_CLASS.key] = payload
        changes[merge_keys.LEGACY_PAYLOAD_CLASS.key] = None
        ordering = props.get(merge_keys.ORDERING_FIELDS.key)
        if ordering:
            changes[table_keys.PRECOMBINE_FIELD.key] = ordering
            changes[merge_keys.ORDERING_FIELDS.key] = None
        strategy = props.get(STRATEGY_ID_KEY) or _STRATEGY_OF_MODE.get(mode or "")
        if strategy:
            changes[STRATEGY_ID_KEY] = strategy
    if to_version == 6:  # EightToSevenDowngradeHandler, SevenToSixDowngradeHandler
        changes[table_keys.TIMELINE_LAYOUT_VERSION.key] = "1"
        changes[merge_keys.RECORD_MERGE_MODE.key] = None
        changes[STRATEGY_ID_KEY] = None
    return changes


def layout_2_instant_files(ctx: TableContext) -> list[tuple[str, Instant]]:
    """(file name, instant) of every file of the layout-2 timeline (`.hoodie/timeline/`)."""
    folder = posixpath.join(ctx.meta_path, LAYOUT_2_FOLDER)
    if not ctx.storage.is_dir(folder):
        return []
    found = []
    for status in ctx.storage.list_dir(folder):
        if status.is_dir:
            continue
        instant = parse_instant_file(status.name)
        if instant is not None:
            found.append((status.name, instant))
    return found


def _write_layout_1_timeline(ctx: TableContext) -> int:
    """Every layout-2 timeline file written under `.hoodie/` by its layout-1 name (a reader of
    the table at version 8/9 lists `.hoodie/timeline/` only); rerunning rewrites the same files."""
    files = layout_2_instant_files(ctx)
    for name, instant in files:
        data = ctx.storage.read_bytes(posixpath.join(ctx.meta_path, LAYOUT_2_FOLDER, name))
        action = instant.action
        if action is Action.CLUSTERING:  # pending clustering: a replacecommit at version 6
            action = Action.REPLACE_COMMIT
        old = Instant(instant.time, action, instant.state)
        if action in (Action.COMMIT, Action.DELTA_COMMIT) or (
            action is Action.REPLACE_COMMIT and instant.is_completed
        ):
            metadata = decode_commit_metadata(data, what=f"commit metadata of {instant}")
            data = encode_commit_metadata(metadata, table_version=6)
        ctx.storage.write_bytes(posixpath.join(ctx.meta_path, instant_file_name(old)), data)
        fault_point("downgrade.during_timeline")
    return len(files)


def delete_layout_2_timeline(ctx: TableContext) -> int:
    """Delete the layout-2 timeline files a downgrade left (the table is at layout 1)."""
    files = layout_2_instant_files(ctx)
    for name, _ in files:
        ctx.storage.delete(posixpath.join(ctx.meta_path, LAYOUT_2_FOLDER, name))
    return len(files)


def leftover_layout_2_files(ctx: TableContext) -> bool:
    """A downgraded table (layout 1) still holds layout-2 timeline files: a downgrade stopped
    after switching `hoodie.properties`."""
    return ctx.config.timeline_layout_version < 2 and bool(layout_2_instant_files(ctx))


__all__ = [
    "ARCHIVE_MARKER",
    "DOWNGRADE_TARGETS",
    "check_downgrade",
    "delete_archive_marker",
    "delete_layout_2_timeline",
    "downgraded_properties",
    "finish_downgrade",
    "layout_2_instant_files",
    "leftover_layout_2_files",
]
