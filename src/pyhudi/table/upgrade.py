"""Upgrading a table of version 6 to version 8 or 9, as Apache Hudi 1.2's upgrade handlers do.

Hudi 1.2 (`UpgradeDowngrade.run`, `SixToSevenUpgradeHandler`, `SevenToEightUpgradeHandler`,
`EightToNineUpgradeHandler`) upgrades a table in these steps, which pyhudi follows:

1. failed writes are rolled back (EAGER) and, on a merge-on-read table, every file slice with log
   files is compacted at the old version (one compaction, unbounded, scheduled then executed);
2. every file of the layout-1 timeline (`.hoodie/<t>.<action>[.<state>]`, pending ones too) moves
   to `.hoodie/timeline/`: a completed instant's name gains its completion time, which Hudi takes
   from the file's modification time (`<t>_<completion>.<action>`); commit metadata (commits and
   delta commits in any state, completed replace commits) is re-encoded as Hudi 1.2's Avro; a
   pending clustering replacecommit becomes a `clustering` instant; other files keep their bytes;
3. `hoodie.properties` gains the version's entries (layout 2, timeline path, initial version,
   key generator type, merge mode and strategy id; version 9 also the ordering fields and the
   legacy payload class, dropping the precombine field and the payload class).

Where pyhudi differs, on purpose:

* Hudi moves the timeline file by file and then rewrites `hoodie.properties`; a crash half way
  leaves a version-6 table whose timeline is partly gone. pyhudi first writes the whole new
  timeline beside the old one (a version-6 reader lists `.hoodie/` only), then switches
  `hoodie.properties` (Hudi's backup protocol: a reader that finds no `hoodie.properties` reads
  `hoodie.properties.backup`), then deletes the old files (a version-8/9 reader lists
  `.hoodie/timeline/` only). A crash at any point leaves a table readable at the old version or
  the new one; running the upgrade again finishes it.
* Hudi upgrades the metadata table in place (its own rollback, compaction and timeline rewrite).
  pyhudi deletes it (first dropping its partitions from `hoodie.properties`, so no reader uses a
  half-deleted one) and the next write with `hoodie.metadata.enable` builds it again at the new
  version, as Hudi does with a metadata table that lags the data table.

The archived timeline (`.hoodie/archived/`) moves into the LSM history with the new timeline,
before the switch (`pyhudi.services.archival.migrate`, passed in by the write client).
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.commit_metadata import decode_commit_metadata, encode_commit_metadata
from pyhudi.codec.file_names import parse_instant_file
from pyhudi.config import merge as merge_keys
from pyhudi.config import table as table_keys
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.config import TableConfig
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.metadata_table import metadata_table_base_path
from pyhudi.timeline.active import LAYOUT_2_FOLDER
from pyhudi.timeline.instant_time import format_instant

log = logging.getLogger(__name__)

#: Versions pyhudi upgrades a table to (from version 6; from 8 to 9).
UPGRADE_TARGETS = (8, 9)

_KEY_GENERATOR_TYPES = {
    "SimpleKeyGenerator": "SIMPLE",
    "SimpleAvroKeyGenerator": "SIMPLE_AVRO",
    "ComplexKeyGenerator": "COMPLEX",
    "ComplexAvroKeyGenerator": "COMPLEX_AVRO",
    "TimestampBasedKeyGenerator": "TIMESTAMP",
    "TimestampBasedAvroKeyGenerator": "TIMESTAMP_AVRO",
    "CustomKeyGenerator": "CUSTOM",
    "CustomAvroKeyGenerator": "CUSTOM_AVRO",
    "NonpartitionedKeyGenerator": "NON_PARTITION",
    "NonpartitionedAvroKeyGenerator": "NON_PARTITION_AVRO",
    "GlobalDeleteKeyGenerator": "GLOBAL_DELETE",
}
_BOOTSTRAP_INDEX_TYPES = {
    "org.apache.hudi.common.bootstrap.index.hfile.HFileBootstrapIndex": "HFILE",
    "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex": "HFILE",
    "org.apache.hudi.common.bootstrap.index.NoOpBootstrapIndex": "NO_OP",
}
#: The merge strategy id's version-8 key (version 9 keeps `hoodie.compaction.record.merger.strategy`).
STRATEGY_ID_KEY = "hoodie.record.merge.strategy.id"
_PAYLOAD = "org.apache.hudi.common.model."
DEFAULT_PAYLOAD = _PAYLOAD + "DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = _PAYLOAD + "OverwriteWithLatestAvroPayload"
EVENT_TIME_PAYLOAD = _PAYLOAD + "EventTimeAvroPayload"
_BUILT_IN_PAYLOADS = (DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD, EVENT_TIME_PAYLOAD)


@dataclass(frozen=True)
class UpgradeResult:
    """What an upgrade (or a downgrade) did: the versions, the instants rolled back, the compaction it ran (merge
    on read), whether it deleted the metadata table, and how many timeline files it moved."""

    from_version: int
    to_version: int
    rolled_back: tuple[str, ...] = ()
    compaction: str | None = None
    metadata_table_deleted: bool = False
    timeline_files: int = 0
    archived_instants: int = 0  # moved between the archived timeline and the LSM history

    def __str__(self) -> str:
        verb = "upgraded" if self.to_version >= self.from_version else "downgraded"
        parts = [f"{verb} from version {self.from_version} to {self.to_version}"]
        if self.rolled_back:
            parts.append(f"rolled back {', '.join(self.rolled_back)}")
        if self.compaction:
            parts.append(f"compacted at {self.compaction}")
        if self.metadata_table_deleted:
            parts.append("metadata table deleted (rebuilt by the next write)")
        if self.archived_instants:
            into = "the LSM history" if self.to_version >= 8 else "archive files"
            parts.append(f"{self.archived_instants} archived instants moved to {into}")
        return "; ".join(parts)


def check_upgrade(ctx: TableContext, to_version: int) -> None:
    """Refuse an upgrade pyhudi cannot do (before anything is written): a clear error."""
    version = ctx.config.version
    if to_version not in UPGRADE_TARGETS:
        raise UnsupportedOperationError(
            f"pyhudi upgrades tables to versions {', '.join(map(str, UPGRADE_TARGETS))}, "
            f"not {to_version}"
        )
    if version not in (6, 8) or version >= to_version:
        raise UnsupportedOperationError(
            f"{ctx.uri} is at table version {version}: pyhudi upgrades version 6 to 8 or 9 and "
            f"version 8 to 9, not {version} to {to_version}"
        )
    if version == 6:
        _upgraded_properties(ctx.config.props, to_version)  # unsupported payloads fail here


def finish_upgrade(
    ctx: TableContext,
    to_version: int,
    history: Callable[[TableContext], int] | None = None,
) -> tuple[bool, int, int]:
    """Steps 2 to 4 of an upgrade from version 6 (failed writes rolled back and log files
    compacted by the caller, under the table's write lock): the metadata table deleted, the
    layout-2 timeline written and `history(ctx)` move the archived timeline into the LSM
    history, `hoodie.properties` switched, the layout-1 files deleted. Returns (metadata table
    deleted, timeline files moved, archived instants moved)."""
    check_upgrade(ctx, to_version)
    deleted = delete_metadata_table(ctx)
    moved = _write_layout_2_timeline(ctx, to_version)
    archived = history(ctx) if history is not None else 0
    fault_point("upgrade.after_timeline_written")
    ctx.update_properties(_upgraded_properties(ctx.config.props, to_version))
    fault_point("upgrade.after_properties")
    delete_layout_1_timeline(ctx)
    ctx.reload()
    return deleted, moved, archived


def upgraded_config(config: TableConfig, to_version: int) -> TableConfig:
    """The table config `config` has after an upgrade to `to_version`, nothing written (a write
    checks its options against it before upgrading)."""
    if config.version == 8:
        return config.with_changes(_eight_to_nine(config.props))
    return config.with_changes(_upgraded_properties(config.props, to_version))


def eight_to_nine(ctx: TableContext) -> None:
    """Upgrade a version-8 table to 9: `hoodie.properties` only (EightToNineUpgradeHandler)."""
    check_upgrade(ctx, 9)
    ctx.update_properties(_eight_to_nine(ctx.config.props))


# ---- step 2: the metadata table ----------------------------------------------------------------
def delete_metadata_table(ctx: TableContext) -> bool:
    """Drop the metadata table: its partitions out of `hoodie.properties` first (no reader uses
    a half-deleted table), then its folder. The next write with it enabled builds it again."""
    mdt = metadata_table_base_path(ctx)
    partitions = ctx.config.props.get(table_keys.METADATA_PARTITIONS.key)
    inflight = ctx.config.props.get(table_keys.METADATA_PARTITIONS_INFLIGHT.key)
    if partitions or inflight:
        ctx.update_properties(
            {
                table_keys.METADATA_PARTITIONS.key: "",
                table_keys.METADATA_PARTITIONS_INFLIGHT.key: "",
            }
        )
    if not ctx.storage.exists(mdt):
        return False
    fault_point("upgrade.before_metadata_table_deleted")
    ctx.storage.delete_dir(mdt)
    return True


# ---- step 3: the timeline ----------------------------------------------------------------------
def layout_1_instant_files(ctx: TableContext) -> list[tuple[str, Instant]]:
    """(file name, instant) of every timeline file directly under `.hoodie/` (layout 1)."""
    found = []
    for status in ctx.storage.list_dir(ctx.meta_path):
        if status.is_dir:
            continue
        instant = parse_instant_file(status.name)
        if instant is not None and instant.completion_time is None:
            found.append((status.name, instant))
    return found


def _write_layout_2_timeline(ctx: TableContext, to_version: int) -> int:
    """Write every layout-1 timeline file into `.hoodie/timeline/` under its layout-2 name; the
    old files stay (a version-6 reader still lists them). Rerunning rewrites the same files."""
    target = posixpath.join(ctx.meta_path, LAYOUT_2_FOLDER)
    ctx.storage.mkdirs(posixpath.join(target, "history"))
    files = layout_1_instant_files(ctx)
    for name, instant in files:
        source = posixpath.join(ctx.meta_path, name)
        status = ctx.storage.status(source)
        data = ctx.storage.read_bytes(source)
        new_name = name
        if instant.is_completed:
            assert status is not None and status.mtime_ns is not None, source
            completion = _completion_time(status.mtime_ns, ctx.config.timeline_timezone_utc)
            new_name = f"{instant.time}_{completion}{name[len(instant.time) :]}"
        elif instant.action is Action.REPLACE_COMMIT and _is_clustering(data):
            new_name = name.replace(Action.REPLACE_COMMIT.value, Action.CLUSTERING.value)
        if _is_commit_metadata(instant):
            data = _reencoded(data, f"commit metadata of {instant}", to_version)
        ctx.storage.write_bytes(posixpath.join(target, new_name), data)
        fault_point("upgrade.during_timeline")
    return len(files)


def _reencoded(data: bytes, what: str, to_version: int) -> bytes:
    """Version-6 JSON commit metadata as Hudi 1.2's Avro. Hudi reads the JSON as plain
    `HoodieWriteStat`s, so a delta commit's log fields (version, offset, base file, log files)
    are not carried over: they are null in the Avro, as Hudi writes them."""
    metadata = decode_commit_metadata(data, what=what)
    stats = {
        partition: tuple(
            replace(s, log_version=None, log_offset=None, base_file=None, log_files=None)
            for s in partition_stats
        )
        for partition, partition_stats in metadata.partition_to_write_stats.items()
    }
    return encode_commit_metadata(
        replace(metadata, partition_to_write_stats=stats), table_version=to_version
    )


def delete_layout_1_timeline(ctx: TableContext) -> int:
    """Delete the layout-1 timeline files an upgrade left under `.hoodie/` (the table is at
    layout 2: nothing reads them); returns how many went."""
    files = layout_1_instant_files(ctx)
    for name, _ in sorted(files, key=lambda f: (f[1].state is State.COMPLETED, f[0])):
        ctx.storage.delete(posixpath.join(ctx.meta_path, name))
    return len(files)


def _completion_time(mtime_ns: int, utc: bool) -> str:
    """Hudi 1.2 names a layout-1 file's completion by its modification time, formatted as an
    instant time in the timeline's time zone."""
    moment = datetime.fromtimestamp(mtime_ns / 1e9, tz=timezone.utc)
    return format_instant(moment if utc else moment.astimezone().replace(tzinfo=None))


def _is_commit_metadata(instant: Instant) -> bool:
    if instant.action in (Action.COMMIT, Action.DELTA_COMMIT):
        return True
    return instant.action is Action.REPLACE_COMMIT and instant.is_completed


def _is_clustering(requested_plan: bytes) -> bool:
    if not requested_plan.strip():
        return False
    try:
        record = decode_container(requested_plan, what="requested replacecommit")
    except Exception:  # not a plan: an insert overwrite's own metadata
        return False
    return isinstance(record, dict) and record.get("operationType") == "CLUSTER"


# ---- step 4: hoodie.properties -----------------------------------------------------------------
def _upgraded_properties(props: Mapping[str, str], to_version: int) -> dict[str, str | None]:
    """The entries Hudi 1.2 adds and removes upgrading a version-6 table to `to_version`."""
    changes: dict[str, str | None] = {
        table_keys.VERSION.key: str(to_version),
        table_keys.TIMELINE_LAYOUT_VERSION.key: "2",
        "hoodie.timeline.path": LAYOUT_2_FOLDER,
        table_keys.INITIAL_VERSION.key: props.get(table_keys.VERSION.key, "6"),
    }
    keygen = props.get(table_keys.KEY_GENERATOR_CLASS.key)
    if keygen:
        kind = _KEY_GENERATOR_TYPES.get(keygen.rsplit(".", 1)[-1])
        if kind is None:
            raise UnsupportedOperationError(
                f"key generator {keygen}: pyhudi does not know its Hudi 1.x type; upgrade this "
                "table with Apache Hudi 1.2"
            )
        changes[merge_keys.KEY_GENERATOR_TYPE.key] = kind
    bootstrap_index = props.get(table_keys.BOOTSTRAP_INDEX_CLASS.key)
    if bootstrap_index and bootstrap_index in _BOOTSTRAP_INDEX_TYPES:
        changes["hoodie.bootstrap.index.type"] = _BOOTSTRAP_INDEX_TYPES[bootstrap_index]
    payload = props.get(table_keys.PAYLOAD_CLASS.key) or DEFAULT_PAYLOAD
    if payload not in _BUILT_IN_PAYLOADS:
        raise UnsupportedOperationError(
            f"payload class {payload}: pyhudi upgrades tables of the built-in payloads "
            f"({', '.join(p.rsplit('.', 1)[-1] for p in _BUILT_IN_PAYLOADS)}) only; upgrade this "
            "table with Apache Hudi 1.2"
        )
    ordering = props.get(table_keys.PRECOMBINE_FIELD.key)
    merge_on_read = props.get(table_keys.TYPE.key) == "MERGE_ON_READ"
    # SevenToEightUpgradeHandler.upgradeMergeMode: a merge-on-read table with an ordering field
    # orders by event time; otherwise DefaultHoodieRecordPayload does, the others by commit time.
    if (merge_on_read and ordering) or payload == DEFAULT_PAYLOAD:
        mode, strategy, payload_8 = "EVENT_TIME_ORDERING", merge_keys.EVENT_TIME_STRATEGY_ID, None
    else:
        mode, strategy = "COMMIT_TIME_ORDERING", merge_keys.COMMIT_TIME_STRATEGY_ID
        payload_8 = OVERWRITE_PAYLOAD
    changes[merge_keys.RECORD_MERGE_MODE.key] = mode
    changes[table_keys.RECORD_MERGER_STRATEGY.key] = strategy
    if to_version == 8:  # the strategy id under its 1.x key too (Hudi 1.2 writes both)
        changes[table_keys.PAYLOAD_CLASS.key] = payload_8 or DEFAULT_PAYLOAD
        changes[STRATEGY_ID_KEY] = strategy
        return changes
    nine = _eight_to_nine({**props, **{k: v for k, v in changes.items() if v is not None}})
    nine[merge_keys.LEGACY_PAYLOAD_CLASS.key] = payload  # the version-6 table's own payload
    return {**changes, **nine}


def _eight_to_nine(props: Mapping[str, str]) -> dict[str, str | None]:
    """EightToNineUpgradeHandler: the built-in payload class becomes the legacy one, the
    precombine field the ordering fields."""
    changes: dict[str, str | None] = {table_keys.VERSION.key: "9", STRATEGY_ID_KEY: None}
    payload = props.get(table_keys.PAYLOAD_CLASS.key)
    if payload is not None and payload in _BUILT_IN_PAYLOADS:
        changes[merge_keys.LEGACY_PAYLOAD_CLASS.key] = payload
        changes[table_keys.PAYLOAD_CLASS.key] = None
    ordering = props.get(table_keys.PRECOMBINE_FIELD.key)
    if ordering:
        changes[merge_keys.ORDERING_FIELDS.key] = ordering
        changes[table_keys.PRECOMBINE_FIELD.key] = None
    return changes


def leftover_layout_1_files(ctx: TableContext) -> bool:
    """An upgraded table (layout 2) still holds layout-1 timeline files: an upgrade stopped after
    switching `hoodie.properties`."""
    return ctx.config.timeline_layout_version >= 2 and bool(layout_1_instant_files(ctx))


__all__ = [
    "STRATEGY_ID_KEY",
    "UPGRADE_TARGETS",
    "UpgradeResult",
    "check_upgrade",
    "delete_layout_1_timeline",
    "delete_metadata_table",
    "eight_to_nine",
    "finish_upgrade",
    "layout_1_instant_files",
    "leftover_layout_1_files",
    "upgraded_config",
]
