"""Keeping a data table's metadata table (`files` partition) in step with its writes.

Hudi 0.14's `HoodieBackedTableMetadataWriter` for table version 6, as pyhudi does it:

* `hoodie.metadata.enable` (`config/metadata.py`, default true as Hudi's): true (or unset)
  creates and maintains the metadata table; false deletes an existing one (WARNING naming its
  partitions; what Hudi does when a writer disables it).
* Partitions pyhudi does not maintain yet (everything but `files`) are disabled with a WARNING
  naming them: removed from `hoodie.table.metadata.partitions` and their folders deleted.
* Initialisation (first enabled write, under the table lock): `...partitions.inflight=files`,
  the metadata table's `hoodie.properties`, a base HFile listing the committed data files at
  Hudi's init instant (`<latest completed data instant>010`, `00000000000000010` on an empty
  table: `createIndexInitTimestamp`), then `hoodie.table.metadata.partitions=files`.
* Every data instant (write, compaction, clustering, bootstrap, clean): a metadata-table
  deltacommit at the data instant's time, completed right before the data instant completes.

Table versions 8 and 9 (Hudi 1.2's `HoodieBackedTableMetadataWriter`): the metadata table is
created at the data table's version (timeline layout 2, Hudi 1.2's properties: key generator type
`HOODIE_TABLE_METADATA`, merge mode `CUSTOM`); partitions initialise at `00000000000000000`, then
`...001`, ... (the first time not on the metadata timeline: `generateUniqueInstantTime`), whatever
the data timeline holds; pyhudi maintains the `files` partition only there (index partitions
another writer built are disabled as above); a rollback of a data instant rolls back its
deltacommit on the metadata table (`rollback_records.roll_back_deltacommit`).
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from pyhudi.codec.metadata_hfile import file_list_record, partition_list_record
from pyhudi.codec.metadata_keys import java_string_hash
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.config import archival as archival_keys
from pyhudi.config import merge as merge_keys
from pyhudi.config import metadata as mkeys
from pyhudi.config import table as tkeys
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.file_group.index_results import FileIndexResult
from pyhudi.metadata.bloom_filters_writer import (
    bloom_filter_updates,
    clean_bloom_filter_updates,
    initial_bloom_filters,
    maintains_bloom_filters,
)
from pyhudi.metadata.column_stats_writer import (
    INDEX_DEFS_PATH_KEY,
    clean_column_stats_updates,
    column_stats_definition,
    column_stats_updates,
    commit_schema,
    initial_column_stats,
    maintains_column_stats,
    write_columns,
    written_files_column_stats,
)
from pyhudi.metadata.column_stats_writer import group_writes as column_stats_groups
from pyhudi.metadata.deltacommit import (
    FILES_FILE_GROUP,
    FILES_PARTITION,
    GroupWrite,
    discard_deltacommit,
    write_base_deltacommit,
    write_base_groups,
    write_log_deltacommit,
    write_log_groups,
)
from pyhudi.metadata.files_records import clean_files_records
from pyhudi.metadata.index_records import (
    BLOOM_FILTERS_PARTITION,
    COLUMN_STATS_PARTITION,
    RECORD_INDEX_PARTITION,
)
from pyhudi.metadata.partition_stats_writer import (
    PARTITION_STATS_PARTITION,
    initial_partition_stats,
    maintains_partition_stats,
    partition_stats_updates,
)
from pyhudi.metadata.reader import (
    MetadataTable,
    has_metadata_table,
    metadata_partition_names,
    metadata_table_path,
)
from pyhudi.metadata.record_index_writer import (
    initial_record_index,
    maintains_record_index,
    record_index_setting,
    record_index_updates,
)
from pyhudi.metadata.rollback_records import rollback_files_records
from pyhudi.metadata.validation import committed_data_files
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import TableType
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

log = logging.getLogger(__name__)
#: Hudi's `SOLO_COMMIT_TIMESTAMP` and the partition-initialisation suffix of `createIndexInitTimestamp`.
SOLO_COMMIT_TIMESTAMP = "00000000000000"
INIT_TIME_SUFFIX = "010"
#: Hudi 1.x's `SOLO_COMMIT_TIMESTAMP` (milliseconds): partitions initialise at it plus n ms.
SOLO_COMMIT_TIMESTAMP_1X = "00000000000000000"
#: The metadata table's key generator type and merge strategy id (versions 8+).
METADATA_KEY_GENERATOR_TYPE = "HOODIE_TABLE_METADATA"
METADATA_MERGE_STRATEGY_ID = "00000000-0000-0000-0000-000000000000"


def metadata_enabled(options: Mapping[str, str]) -> bool:
    """`hoodie.metadata.enable` of a write (Hudi's default: true)."""
    return mkeys.METADATA_ENABLE.get(options)


def maintains_metadata_table(ctx: TableContext, options: Mapping[str, str]) -> bool:
    """Whether a commit into `ctx` with `options` writes the metadata table (creating it when
    the table has none): unless `hoodie.metadata.enable` is false."""
    del ctx  # the table's own state does not matter: enabled writes create it, as Hudi's
    return metadata_enabled(options)


def maintained_partitions(ctx: TableContext, options: Mapping[str, str]) -> tuple[str, ...]:
    """The metadata partitions a write with `options` keeps (the others are disabled), in the
    order they initialise (versions 8 and 9: Hudi 1.2's, `partition_stats` last)."""
    keep = [FILES_PARTITION]
    keep += [COLUMN_STATS_PARTITION] if maintains_column_stats(ctx, options) else []
    if ctx.config.version >= 8:  # Hudi 1.2's order (`MetadataPartitionType`): init instants
        keep += [BLOOM_FILTERS_PARTITION] if maintains_bloom_filters(ctx, options) else []
        keep += [RECORD_INDEX_PARTITION] if maintains_record_index(ctx, options) else []
        keep += [PARTITION_STATS_PARTITION] if maintains_partition_stats(ctx, options) else []
        return tuple(keep)
    keep += [BLOOM_FILTERS_PARTITION] if maintains_bloom_filters(ctx, options) else []
    keep += [RECORD_INDEX_PARTITION] if maintains_record_index(ctx, options) else []
    return tuple(keep)


def prepare_metadata_table(ctx: TableContext, options: Mapping[str, str]) -> None:
    """At the start of a write: delete the metadata table when `hoodie.metadata.enable` is false,
    else drop the partitions the write does not maintain (the commit builds a missing table)."""
    if not metadata_enabled(options):
        disable_metadata_table(ctx)
        return
    if FILES_PARTITION in ctx.config.metadata_partitions and metadata_table_readable(ctx):
        drop_unmaintained_partitions(ctx, maintained_partitions(ctx, options))


def commit_to_metadata_table(
    ctx: TableContext,
    instant_time: str,
    records: Sequence[MetadataRecord],
    commit: CommitMetadata | None = None,
    options: Mapping[str, str] | None = None,
    extra: Sequence[GroupWrite] = (),
    results: Mapping[tuple[str, str], FileIndexResult] | None = None,
) -> None:
    """Write the `files` records of data instant `instant_time` (and, when maintained, the index
    changes of its `commit`, from its write tasks' side `results` where they have them) as one
    metadata-table deltacommit, initialising the metadata table (and the indexes) first when the
    table has none."""
    options = options or {}
    if FILES_PARTITION not in ctx.config.metadata_partitions or not metadata_table_readable(ctx):
        initialise_metadata_table(ctx)
    keep = maintained_partitions(ctx, options)
    drop_unmaintained_partitions(ctx, keep)
    groups = [GroupWrite(FILES_PARTITION, FILES_FILE_GROUP, tuple(records))]
    for name in keep[1:]:
        if name not in ctx.config.metadata_partitions:
            initialise_index_partition(ctx, name, options, commit)
    if commit is not None:
        groups += _index_updates(ctx, instant_time, commit, keep, options, results or {})
    groups += [g for g in extra if g.partition in keep]
    write_log_groups(_open(ctx), instant_time, groups)


def _index_updates(
    ctx: TableContext,
    instant_time: str,
    commit: CommitMetadata,
    keep: Sequence[str],
    options: Mapping[str, str],
    results: Mapping[tuple[str, str], FileIndexResult],
) -> list[GroupWrite]:
    """The `column_stats`, `bloom_filters` and `record_index` changes of a data instant."""
    groups: list[GroupWrite] = []
    if ctx.config.version >= 8 and COLUMN_STATS_PARTITION in keep:  # partition stats need it
        written = written_files_column_stats(ctx, commit, options, results)
        count = _file_group_count(ctx, COLUMN_STATS_PARTITION)
        groups += [g for g in column_stats_groups(written, count) if g.records]
        if PARTITION_STATS_PARTITION in keep:
            columns = write_columns(ctx, options, commit) or ()
            count = _file_group_count(ctx, PARTITION_STATS_PARTITION)
            schema = commit_schema(ctx, commit)
            groups += partition_stats_updates(ctx, commit, written, columns, count, schema)
    elif COLUMN_STATS_PARTITION in keep:
        count = _file_group_count(ctx, COLUMN_STATS_PARTITION)
        groups += column_stats_updates(ctx, commit, options, count, results)
    if BLOOM_FILTERS_PARTITION in keep:
        count = _file_group_count(ctx, BLOOM_FILTERS_PARTITION)
        groups += bloom_filter_updates(ctx, instant_time, commit, count)
    if RECORD_INDEX_PARTITION in keep:
        count = _file_group_count(ctx, RECORD_INDEX_PARTITION)
        groups += record_index_updates(ctx, instant_time, commit, count, results)
    return groups


def wanted_index_results(ctx: TableContext, options: Mapping[str, str]) -> tuple[bool, bool]:
    """(record keys, column ranges): the side results a write's tasks should return for the
    metadata partitions a commit with `options` maintains (`WriteTaskSpec.collect_keys`, ...)."""
    if not maintains_metadata_table(ctx, options):
        return False, False
    keep = maintained_partitions(ctx, options)
    return RECORD_INDEX_PARTITION in keep, COLUMN_STATS_PARTITION in keep


def _file_group_count(ctx: TableContext, partition: str) -> int:
    return len(_open(ctx).view().file_groups(None, [partition]))


def ensure_record_index(ctx: TableContext, options: Mapping[str, str]) -> None:
    """Build the metadata table and its record index now when the write enables them and the
    table has none yet (as Hudi initialises them before the write), so a write with
    `hoodie.index.type=RECORD_INDEX` can tag its records (the caller holds the table lock)."""
    if not record_index_setting(options) or not metadata_enabled(options):
        return
    if RECORD_INDEX_PARTITION in ctx.config.metadata_partitions and metadata_table_readable(ctx):
        return
    if FILES_PARTITION not in ctx.config.metadata_partitions or not metadata_table_readable(ctx):
        initialise_metadata_table(ctx)
    keep = maintained_partitions(ctx, options)
    drop_unmaintained_partitions(ctx, keep)
    if ctx.config.version >= 8:  # Hudi 1.2 builds them in its order, the ones before it first
        for name in keep[1 : keep.index(RECORD_INDEX_PARTITION)]:
            if name not in ctx.config.metadata_partitions:
                initialise_index_partition(ctx, name, options)  # columns: the table's schema
    initialise_index_partition(ctx, RECORD_INDEX_PARTITION, options)


def commit_clean_to_metadata_table(
    ctx: TableContext, instant_time: str, clean_metadata: Mapping[str, Any]
) -> bool:
    """The metadata-table deltacommit of clean `instant_time` (decoded `HoodieCleanMetadata`),
    when the table maintains a `files` partition. True when written."""
    if FILES_PARTITION not in ctx.config.metadata_partitions or not has_metadata_table(ctx):
        return False
    extra: list[GroupWrite] = []
    if COLUMN_STATS_PARTITION in ctx.config.metadata_partitions and metadata_table_readable(ctx):
        count = _file_group_count(ctx, COLUMN_STATS_PARTITION)
        extra = clean_column_stats_updates(ctx, clean_metadata, {}, count)
    if BLOOM_FILTERS_PARTITION in ctx.config.metadata_partitions and metadata_table_readable(ctx):
        count = _file_group_count(ctx, BLOOM_FILTERS_PARTITION)
        extra += clean_bloom_filter_updates(instant_time, clean_metadata, count)
    commit_to_metadata_table(ctx, instant_time, clean_files_records(clean_metadata), extra=extra)
    return True


def commit_rollback_to_metadata_table(
    ctx: TableContext, rollback_time: str, rollback_metadata: Mapping[str, Any]
) -> None:
    """The metadata-table deltacommit of data rollback `rollback_time` (Hudi 0.14
    `processRollbackMetadata`): the log files that got ROLLBACK command blocks and the failed
    write's log files left on storage. The `record` of `table.rollback.rollback_instant` (a
    layer below), passed by every caller that rolls back data instants; nothing when the table
    maintains no `files` partition or nothing stays. Versions 8 and 9: nothing (Hudi 1.x deletes
    a rolled-back write's log files and rolls back its deltacommit, which `rollback_instant`
    does; no listing changes to record)."""
    if ctx.config.version >= 8:  # Hudi 1.x only rolls back the deltacommit (`update(rollback)`)
        return
    if FILES_PARTITION not in ctx.config.metadata_partitions or not metadata_table_readable(ctx):
        return
    records = rollback_files_records(rollback_metadata)
    if records:
        write_log_deltacommit(_open(ctx), rollback_time, records)


def discard_metadata_commit(ctx: TableContext, instant_time: str) -> None:
    """Undo the metadata-table deltacommit of a data instant that failed (table as it was)."""
    if metadata_table_readable(ctx):
        discard_deltacommit(_open(ctx), instant_time)


# ---- initialisation ----------------------------------------------------------------------------


def init_instant_time(ctx: TableContext) -> str:
    """Hudi's initialisation instant: the latest completed data instant (or `SOLO_COMMIT_TIMESTAMP`)
    followed by `010`; versions 8+: `00000000000000000` (the metadata table is created anew)."""
    if ctx.config.version >= 8:
        return SOLO_COMMIT_TIMESTAMP_1X
    latest = ctx.active.reload().timeline.completed().last
    return (latest.time if latest else SOLO_COMMIT_TIMESTAMP) + INIT_TIME_SUFFIX


def initialise_metadata_table(ctx: TableContext) -> str:
    """Create the metadata table from the committed data files; returns its init instant."""
    path = metadata_table_path(ctx)
    if ctx.storage.exists(path):
        log.warning("rebuilding the incomplete metadata table %s of %s", path, ctx.base_path)
        ctx.storage.delete_dir(path)
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: "", tkeys.METADATA_PARTITIONS_INFLIGHT.key: FILES_PARTITION}
    )
    init_time = init_instant_time(ctx)
    listed = committed_data_files(ctx.view(), None, ctx.storage)
    records = [partition_list_record(listed)]
    records += [file_list_record(p, files) for p, files in sorted(listed.items()) if files]
    mdt = TableContext.create(ctx.storage.uri(path), metadata_table_properties(ctx), in_folder=True)
    write_base_deltacommit(mdt, init_time, records)
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: FILES_PARTITION, tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )
    log.info("initialised the metadata table of %s at %s", ctx.base_path, init_time)
    return init_time


def initialise_index_partition(
    ctx: TableContext,
    name: str,
    options: Mapping[str, str],
    commit: CommitMetadata | None = None,
) -> str:
    """Build index partition `name` (`record_index` from the latest snapshot, `column_stats` from
    the committed base files) in the existing metadata table; its init instant is the first
    unused of `<latest data instant>010`, `011`, ... Versions 8 and 9 (`column_stats`,
    `partition_stats` only): the first unused of `00000000000000000`, `...001`, ...; the columns
    are those of the writer schema of `commit` (the write that builds it), else the table's."""
    if ctx.config.version >= 8:
        return _initialise_index_partition_1x(ctx, name, options, commit)
    mdt = _open(ctx)
    ctx.update_properties({tkeys.METADATA_PARTITIONS_INFLIGHT.key: name})
    base = init_instant_time(ctx)[: -len(INIT_TIME_SUFFIX)]
    taken = set(mdt.active.reload().timeline.times())
    offset = next(i for i in range(1000) if _init_time(base, i) not in taken)
    init_time = _init_time(base, offset)
    ctx.storage.delete_dir(mdt.partition_path(name))  # a failed attempt's
    if name == RECORD_INDEX_PARTITION:
        groups = initial_record_index(ctx, options)
    elif name == BLOOM_FILTERS_PARTITION:
        groups = initial_bloom_filters(ctx, options, committed_data_files(ctx.view(), None))
    else:
        groups = initial_column_stats(ctx, options, committed_data_files(ctx.view(), None))
    write_base_groups(mdt, init_time, groups)
    partitions = ",".join(dict.fromkeys([*ctx.config.metadata_partitions, name]))
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: partitions, tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )
    log.info("initialised metadata partition %s of %s at %s", name, ctx.base_path, init_time)
    return init_time


def _initialise_index_partition_1x(
    ctx: TableContext, name: str, options: Mapping[str, str], commit: CommitMetadata | None
) -> str:
    known = (
        COLUMN_STATS_PARTITION,
        BLOOM_FILTERS_PARTITION,
        RECORD_INDEX_PARTITION,
        PARTITION_STATS_PARTITION,
    )
    if name not in known:
        raise UnsupportedOperationError(
            f"pyhudi does not write the {name} partition of a version {ctx.config.version} "
            "metadata table"
        )
    mdt = _open(ctx)
    ctx.update_properties({tkeys.METADATA_PARTITIONS_INFLIGHT.key: name})
    taken = set(mdt.active.reload().timeline.times())
    init_time = next(
        t for t in (f"{i:017d}" for i in range(1000)) if t not in taken
    )  # Hudi 1.2's `generateUniqueInstantTime` from SOLO_COMMIT_TIMESTAMP
    ctx.storage.delete_dir(mdt.partition_path(name))  # a failed attempt's
    columns = write_columns(ctx, options, commit) or ()
    if name == COLUMN_STATS_PARTITION:
        listed = committed_data_files(ctx.view(), None)
        groups = initial_column_stats(ctx, options, listed, columns)
    elif name == BLOOM_FILTERS_PARTITION:
        groups = initial_bloom_filters(ctx, options, committed_data_files(ctx.view(), None))
    elif name == RECORD_INDEX_PARTITION:
        groups = initial_record_index(ctx, options)
    else:
        stored = list(MetadataTable.open(ctx).records(COLUMN_STATS_PARTITION).values())
        count = max(1, mkeys.PARTITION_STATS_FILE_GROUP_COUNT.get(options))
        groups = initial_partition_stats(ctx, stored, columns, count)
    write_base_groups(mdt, init_time, groups)
    if name == COLUMN_STATS_PARTITION:
        register_index_definition(ctx, COLUMN_STATS_PARTITION, column_stats_definition(columns))
    elif name == RECORD_INDEX_PARTITION:
        register_index_definition(ctx, RECORD_INDEX_PARTITION, RECORD_INDEX_DEFINITION)
    partitions = ",".join(sorted({*ctx.config.metadata_partitions, name}))
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: partitions, tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )
    log.info("initialised metadata partition %s of %s at %s", name, ctx.base_path, init_time)
    return init_time


def _init_time(base: str, offset: int) -> str:
    """Hudi's `createIndexInitTimestamp(base, offset)`."""
    return f"{base}{int(INIT_TIME_SUFFIX) + offset:03d}"


def metadata_table_properties(ctx: TableContext) -> dict[str, str]:
    """The metadata table's `hoodie.properties` (Hudi 0.14 `initializeMetaClient`, version 6;
    Hudi 1.2's at versions 8 and 9: the data table's version)."""
    if ctx.config.version >= 8:
        return _metadata_table_properties_1x(ctx)
    return {
        tkeys.NAME.key: ctx.config.name + mkeys.METADATA_TABLE_NAME_SUFFIX,
        tkeys.TYPE.key: TableType.MERGE_ON_READ.value,
        tkeys.VERSION.key: "6",
        tkeys.TIMELINE_LAYOUT_VERSION.key: "1",
        tkeys.BASE_FILE_FORMAT.key: "HFILE",
        tkeys.RECORD_KEY_FIELDS.key: mkeys.METADATA_RECORD_KEY_FIELD,
        tkeys.POPULATE_META_FIELDS.key: "false",
        tkeys.PAYLOAD_CLASS.key: mkeys.METADATA_PAYLOAD_CLASS,
        tkeys.KEY_GENERATOR_CLASS.key: mkeys.METADATA_KEY_GENERATOR_CLASS,
        tkeys.ARCHIVELOG_FOLDER.key: str(tkeys.ARCHIVELOG_FOLDER.default),
    }


def _metadata_table_properties_1x(ctx: TableContext) -> dict[str, str]:
    """What Hudi 1.2 writes for a metadata table of version 8 or 9 (checked against tables it
    wrote: timeline layout 2, `history` for the archived timeline, merge mode CUSTOM with the
    metadata payload and the all-zero strategy id)."""
    version = str(ctx.config.version)
    return {
        tkeys.NAME.key: ctx.config.name + mkeys.METADATA_TABLE_NAME_SUFFIX,
        tkeys.TYPE.key: TableType.MERGE_ON_READ.value,
        tkeys.VERSION.key: version,
        tkeys.INITIAL_VERSION.key: version,
        tkeys.TIMELINE_LAYOUT_VERSION.key: "2",
        archival_keys.TIMELINE_PATH.key: "timeline",
        archival_keys.TIMELINE_HISTORY_PATH.key: "history",
        tkeys.ARCHIVELOG_FOLDER.key: "history",
        tkeys.BASE_FILE_FORMAT.key: "HFILE",
        tkeys.RECORD_KEY_FIELDS.key: mkeys.METADATA_RECORD_KEY_FIELD,
        tkeys.POPULATE_META_FIELDS.key: "false",
        tkeys.DROP_PARTITION_COLUMNS.key: "false",
        tkeys.PAYLOAD_CLASS.key: mkeys.METADATA_PAYLOAD_CLASS,
        merge_keys.KEY_GENERATOR_TYPE.key: METADATA_KEY_GENERATOR_TYPE,
        merge_keys.RECORD_MERGE_MODE.key: "CUSTOM",
        merge_keys.RECORD_MERGE_STRATEGY_ID.key: METADATA_MERGE_STRATEGY_ID,
    }


# ---- keeping it consistent ---------------------------------------------------------------------


def drop_unmaintained_partitions(
    ctx: TableContext, keep: Sequence[str] = (FILES_PARTITION,)
) -> None:
    """Disable, with a WARNING naming them, the metadata partitions not in `keep` (the ones pyhudi
    cannot maintain yet, or a record index the write disables)."""
    others = [p for p in metadata_partition_names(ctx) if p not in keep]
    if not others:
        return
    log.warning(
        "disabling metadata partitions of %s that pyhudi does not maintain (yet, or as this "
        "write is configured): %s (removed from %s and deleted; Hudi rebuilds them when it next "
        "writes with them enabled)",
        ctx.base_path,
        ", ".join(others),
        tkeys.METADATA_PARTITIONS.key,
    )
    for name in others:
        ctx.storage.delete_dir(f"{metadata_table_path(ctx)}/{name}")
    drop_index_definitions(ctx, others)
    kept = [p for p in ctx.config.metadata_partitions if p in keep]
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: ",".join(kept), tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )


#: Versions 8+: the index definitions file, relative to the table's base path.
INDEX_DEFS_PATH = ".hoodie/.index_defs/index.json"


def register_index_definition(ctx: TableContext, name: str, definition: Mapping[str, Any]) -> None:
    """Versions 8+: add (or replace) index `name` in the index definitions file, creating it and
    `hoodie.table.index.defs.path` when the table has none (Hudi 1.2's `register`)."""
    relative = ctx.config.props.get(INDEX_DEFS_PATH_KEY) or INDEX_DEFS_PATH
    path = posixpath.join(ctx.base_path, relative)
    document: dict[str, Any] = {"indexDefinitions": {}}
    if ctx.storage.exists(path):
        document = json.loads(ctx.storage.read_bytes(path))
    definitions = dict(document.get("indexDefinitions") or {})
    definitions[name] = dict(definition)
    document["indexDefinitions"] = {k: definitions[k] for k in _java_hash_map_order(definitions)}
    folder, file_name = posixpath.split(path)
    ctx.storage.delete(posixpath.join(folder, f".{file_name}.crc"))
    ctx.storage.delete(path)
    ctx.storage.write_bytes(path, jackson_pretty_json(document).encode("utf-8"))
    if ctx.config.props.get(INDEX_DEFS_PATH_KEY) != relative:
        ctx.update_properties({INDEX_DEFS_PATH_KEY: relative})


#: Hudi 1.2's definition of the (global) record index in `index.json`.
RECORD_INDEX_DEFINITION: dict[str, Any] = {
    "indexName": RECORD_INDEX_PARTITION,
    "indexType": RECORD_INDEX_PARTITION,
    "indexFunction": "",
    "sourceFields": [],
    "indexOptions": {"isPartitioned": "false"},
    "version": "V1",
}


def _java_hash_map_order(names: Sequence[str] | Mapping[str, Any]) -> list[str]:
    """`names` in the order a small Java `HashMap` iterates them (Hudi's definitions map, as
    Jackson writes it): by bucket of the spread `String.hashCode`, then as inserted."""

    def bucket(name: str) -> int:
        h = java_string_hash(name) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 15

    return sorted(names, key=bucket)


def drop_index_definitions(ctx: TableContext, names: Sequence[str]) -> None:
    """Versions 8+: remove the definitions of the dropped indexes `names` from the index
    definitions file, as Hudi 1.2 does when a writer disables an index (the file stays, maybe
    with no definition left); Hadoop's stale `.index.json.crc` goes with the old content."""
    relative = ctx.config.props.get(INDEX_DEFS_PATH_KEY)
    if ctx.config.version < 8 or not relative:
        return
    path = posixpath.join(ctx.base_path, relative)
    if not ctx.storage.exists(path):
        return
    document = json.loads(ctx.storage.read_bytes(path))
    definitions = document.get("indexDefinitions") or {}
    kept = {k: v for k, v in definitions.items() if k not in names}
    if kept == definitions:
        return
    document["indexDefinitions"] = kept
    folder, name = posixpath.split(path)
    ctx.storage.delete(posixpath.join(folder, f".{name}.crc"))
    ctx.storage.delete(path)
    ctx.storage.write_bytes(path, jackson_pretty_json(document).encode("utf-8"))


def jackson_pretty_json(value: Any, level: int = 0) -> str:
    """`value` as Jackson's default pretty printer writes it (Hudi's index definitions file):
    two-space indents, `" : "`, arrays on one line, empty containers `{ }` and `[ ]`."""
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        inner = "  " * (level + 1)
        fields = [
            f"{inner}{json.dumps(str(k))} : {jackson_pretty_json(v, level + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(fields) + "\n" + "  " * level + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty_json(v, level) for v in value) + " ]"
    return json.dumps(value)


def metadata_table_readable(ctx: TableContext) -> bool:
    """The metadata table has its `hoodie.properties` (a folder without one is rebuilt)."""
    return has_metadata_table(ctx) and TableContext.exists(
        ctx.storage.uri(metadata_table_path(ctx))
    )


def remove_orphan_deltacommits(ctx: TableContext) -> list[str]:
    """Discard metadata-table deltacommits of data instants no longer on the data timeline (rolled
    back after a crash between the two commits), which readers would otherwise take for metadata-
    table-only instants. The metadata timeline is read before the data timeline, so a concurrent
    writer's deltacommit always finds its (pending) data instant."""
    if not metadata_table_readable(ctx):
        return []
    mdt = _open(ctx)
    times = {i.time for i in mdt.active.timeline if i.action is Action.DELTA_COMMIT}
    data = ctx.active.reload().timeline
    known = {i.time for i in data}
    first = data.first
    orphans: list[str] = sorted(
        t
        for t in times
        if t not in known and not _is_metadata_only_time(t) and (first is None or t > first.time)
    )
    for time in orphans:
        log.warning("discarding metadata-table deltacommit %s: data instant is gone", time)
        discard_deltacommit(mdt, time)
    return orphans


def _is_metadata_only_time(time: str) -> bool:
    """Initialisation (and other reserved) instants: `00000000000000xxx` or 20 digits."""
    return len(time) == 20 or (len(time) == 17 and time.startswith(SOLO_COMMIT_TIMESTAMP))


def disable_metadata_table(ctx: TableContext) -> None:
    """Delete the metadata table and clear the metadata partitions, with a WARNING that names every
    metadata partition it disables (never silently); nothing when the table has none."""
    path = metadata_table_path(ctx)
    if not ctx.config.metadata_partitions and not ctx.storage.exists(path):
        return
    partitions = metadata_partition_names(ctx)
    log.warning(
        "disabling the metadata table of %s (hoodie.metadata.enable is false): deleting %s and clearing %s; metadata partitions disabled: %s "
        "(Hudi rebuilds them when it next writes with hoodie.metadata.enable=true)",
        ctx.base_path,
        path,
        tkeys.METADATA_PARTITIONS.key,
        ", ".join(partitions) or "(none listed)",
    )
    ctx.storage.delete_dir(path)
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: "", tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )


def _open(ctx: TableContext) -> TableContext:
    return TableContext.open_at(ctx.storage, metadata_table_path(ctx))
