"""Hudi's meta sync bookkeeping, engine-free: which metastore partitions to add, move or drop.

* Partition values come from a partition path through one of Hudi's `PartitionValueExtractor`s
  (`hoodie.datasource.hive_sync.partition_extractor_class`), named by their Java class.
* After the first sync, only the partitions touched since the table's `last_commit_time_sync` are
  looked at (`TimelineUtils.getWrittenPartitions`): the partitions of every completed commit,
  deltacommit and replacecommit after it. Partitions are dropped as `TimelineUtils
  .getDroppedPartitions` drops them: replaced by a `delete_partition` / `insert_overwrite(_table)`
  replacecommit, or deleted by a clean (`isPartitionDeleted`), and not written again since.
* Without `last_commit_time_sync`, or when it is older than the active timeline (archived), every
  partition on storage is compared with the metastore's (`HiveSyncTool.syncAllPartitions`).
* `MetastoreTable` is the table a sync registers, whatever the catalog (the Hive metastore,
  `pyhudi.spark.hive_metastore`; AWS Glue, `pyhudi.table.glue_sync`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from urllib.parse import urlparse

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.config import sync as skeys
from pyhudi.exceptions import ConfigError
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant
from pyhudi.table.context import TableContext

#: Replacecommit operations whose replaced partitions Hudi drops (`TimelineUtils.isDeletePartition`).
DROPPING_OPERATIONS = {
    WriteOperationType.DELETE_PARTITION,
    WriteOperationType.INSERT_OVERWRITE,
    WriteOperationType.INSERT_OVERWRITE_TABLE,
}


class PartitionEventType(str, Enum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DROP = "DROP"


@dataclass(frozen=True)
class PartitionEvent:
    """One change to a metastore table's partitions (`PartitionEvent`)."""

    kind: PartitionEventType
    values: tuple[str, ...]
    location: str


@dataclass(frozen=True)
class MetastoreTable:
    """A table as the metastore stores it (Hive's `Table` with its `StorageDescriptor`)."""

    database: str
    name: str
    table_type: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[tuple[str, str], ...]
    location: str
    input_format: str
    output_format: str
    serde: str
    serde_properties: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, str] = field(default_factory=dict)


# ---- partition values ----------------------------------------------------------------------------
def _multi_part(path: str) -> list[str]:
    if not path:
        return []
    values = []
    for part in path.split("/"):
        if "=" in part:
            pieces = part.split("=")
            if len(pieces) != 2:
                raise ValueError(f"partition field ({part}) not in expected format")
            part = pieces[1]
        values.append(part)
    return values


def _hive_style(path: str) -> list[str]:
    pieces = path.split("=")
    if len(pieces) != 2:
        raise ValueError(f"partition path {path} is not in the form partition_key=partition_value")
    return [pieces[1]]


def _slash_encoded(count: int, fmt: str) -> Callable[[str], list[str]]:
    def extract(path: str) -> list[str]:
        parts = path.split("/")
        if len(parts) != count:
            raise ValueError(f"partition path {path} does not have {count} parts")
        numbers = [int(p.split("=")[-1]) for p in parts]
        return [fmt.format(*numbers)]

    return extract


EXTRACTORS: dict[str, Callable[[str], list[str]]] = {
    skeys.MULTI_PART_KEYS_EXTRACTOR: _multi_part,
    skeys.HIVE_STYLE_EXTRACTOR: _hive_style,
    skeys.NON_PARTITIONED_EXTRACTOR: lambda path: [],
    skeys.SINGLE_PART_EXTRACTOR: lambda path: [path],
    skeys.SLASH_DAY_EXTRACTOR: _slash_encoded(3, "{:04d}-{:02d}-{:02d}"),
    skeys.SLASH_HOUR_EXTRACTOR: _slash_encoded(4, "{:04d}-{:02d}-{:02d}-{:02d}"),
}


def extractor_class(ctx: TableContext, options: Mapping[str, str]) -> str:
    """The configured extractor, or Hudi's inferred default (`HoodieSyncConfig`)."""
    given = skeys.PARTITION_EXTRACTOR_CLASS.get(options)
    if given is not None:
        if given not in EXTRACTORS:
            raise ConfigError(
                f"{skeys.PARTITION_EXTRACTOR_CLASS.key}={given}: pyhudi implements Hudi's standard "
                f"extractors only: {', '.join(sorted(EXTRACTORS))}"
            )
        return given
    fields = ctx.config.partition_fields
    if not fields:
        return skeys.NON_PARTITIONED_EXTRACTOR
    if len(fields) == 1 and ctx.config.hive_style_partitioning:
        return skeys.HIVE_STYLE_EXTRACTOR
    return skeys.MULTI_PART_KEYS_EXTRACTOR


def partition_values(ctx: TableContext, extractor: str, partition: str) -> tuple[str, ...]:
    """The metastore partition values of a partition path (one per partition field)."""
    try:
        values = tuple(EXTRACTORS[extractor](partition))
    except ValueError as err:
        raise ConfigError(f"{extractor} cannot extract partition values: {err}") from err
    fields = ctx.config.partition_fields
    if len(values) != len(fields):
        raise ConfigError(
            f"{extractor} turned partition path {partition!r} of {ctx.base_path} into "
            f"{len(values)} values for {len(fields)} partition fields ({','.join(fields)}): set "
            f"{skeys.PARTITION_EXTRACTOR_CLASS.key} to the extractor of this layout"
        )
    return values


def partition_location(ctx: TableContext, partition: str) -> str:
    return f"{ctx.uri.rstrip('/')}/{partition}" if partition else ctx.uri


def same_location(left: str, right: str) -> bool:
    """Hudi compares locations without scheme and authority (`file:/x` is `file:///x`)."""
    return _path_of(left) == _path_of(right)


def _path_of(location: str) -> str:
    return re.sub("/+", "/", urlparse(location).path).rstrip("/")


# ---- partitions changed since the last sync ---------------------------------------------------
def latest_commit_time(ctx: TableContext) -> str | None:
    last = ctx.active.timeline.commits().last
    return str(last.time) if last else None


def needs_full_listing(ctx: TableContext, last_synced: str | None) -> bool:
    return last_synced is None or ctx.active.timeline.commits().is_before_start(last_synced)


def _commits_after(ctx: TableContext, start_exclusive: str | None) -> list[Instant]:
    return list(ctx.active.timeline.commits().between(start_exclusive, None))


def written_partitions_since(ctx: TableContext, start_exclusive: str | None) -> list[str]:
    """Partitions written or replaced by the commits after `start_exclusive`, in first-seen order."""
    seen: dict[str, None] = {}
    for instant in _commits_after(ctx, start_exclusive):
        metadata = ctx.active.commit_metadata(instant)
        for partition in (*metadata.partition_to_write_stats, *_replaced(metadata, instant)):
            if partition:
                seen.setdefault(partition, None)
    return list(seen)


def _replaced(metadata, instant: Instant) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    if instant.action is not Action.REPLACE_COMMIT:
        return ()
    return tuple(metadata.partition_to_replace_file_ids or {})


def dropped_partitions_since(ctx: TableContext, start_exclusive: str | None) -> set[str]:
    """Partitions deleted since `start_exclusive` and not written again (or after, same instant)."""
    commits = _commits_after(ctx, start_exclusive)
    deleted: dict[str, str] = {}
    for instant in commits:
        if instant.action is not Action.REPLACE_COMMIT:
            continue
        metadata = ctx.active.commit_metadata(instant)
        if metadata.operation_type in DROPPING_OPERATIONS:
            for partition in metadata.partition_to_replace_file_ids or {}:
                deleted[partition] = str(instant.time)
    for clean in ctx.active.timeline.with_actions(Action.CLEAN).completed():
        content = decode_container(ctx.active.read_content(clean), what=f"clean {clean.time}")
        for partition, entry in (content.get("partitionMetadata") or {}).items():
            if entry.get("isPartitionDeleted"):
                deleted[partition] = str(clean.time)
    if not deleted:
        return set()
    earliest = min(deleted.values())
    written: dict[str, str] = {}
    for instant in ctx.active.timeline.commits():
        if instant.time >= earliest:
            for partition in ctx.active.commit_metadata(instant).partition_to_write_stats:
                written[partition] = str(instant.time)
    return {p for p, time in deleted.items() if p and (p not in written or time > written[p])}


def partition_events(
    ctx: TableContext,
    extractor: str,
    metastore: Mapping[tuple[str, ...], str],
    last_synced: str | None,
) -> list[PartitionEvent]:
    """The ADD / UPDATE / DROP events that bring `metastore` (values -> location) up to date."""
    if not ctx.config.partition_fields:
        return []
    if needs_full_listing(ctx, last_synced):
        on_storage = ctx.view().partition_paths()
        events = _write_events(ctx, extractor, metastore, on_storage, set())
        present = {partition_values(ctx, extractor, p) for p in on_storage}
        events += [
            PartitionEvent(PartitionEventType.DROP, values, location)
            for values, location in metastore.items()
            if values not in present
        ]
        return events
    written = written_partitions_since(ctx, last_synced)
    dropped = dropped_partitions_since(ctx, last_synced)
    return _write_events(ctx, extractor, metastore, written, dropped)


def _write_events(
    ctx: TableContext,
    extractor: str,
    metastore: Mapping[tuple[str, ...], str],
    partitions: list[str],
    dropped: set[str],
) -> list[PartitionEvent]:
    events = []
    for partition in partitions:
        values = partition_values(ctx, extractor, partition)
        location = partition_location(ctx, partition)
        if partition in dropped:
            if values in metastore:
                events.append(PartitionEvent(PartitionEventType.DROP, values, location))
        elif values not in metastore:
            events.append(PartitionEvent(PartitionEventType.ADD, values, location))
        elif not same_location(metastore[values], location):
            events.append(PartitionEvent(PartitionEventType.UPDATE, values, location))
    return events
