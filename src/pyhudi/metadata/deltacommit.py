"""Writing one instant of the metadata table's `files` partition (table version 6, Hudi 0.14 layout).

| what                 | file (under `.hoodie/metadata/`)                                   |
|----------------------|--------------------------------------------------------------------|
| file group           | `files-0000-0` (`HoodieTableMetadataUtil.getFileIDForFileGroup`)   |
| initialisation       | base HFile `files/files-0000-0_0-0-0_<init>.hfile`, deltacommit `<init>` (BULK_INSERT_PREPPED) |
| a data-table instant | log file `files/.files-0000-0_<slice base instant>.log.<next version>_0-0-0` with one HFILE_DATA_BLOCK, deltacommit at the data instant's time (UPSERT_PREPPED) |
| markers              | `.hoodie/.temp/<instant>/files/<base file name>.marker.{CREATE,APPEND}`, removed on completion |

Every deltacommit writes the next log version of the latest slice: Hudi appends to the latest log
file where storage supports append and rolls over to a new version where it does not (local disk,
S3, GCS, ...), which is what pyhudi always does. A deltacommit for an instant the metadata table
already has (a re-executed compaction or clustering, a re-run clean, an undone write) first
discards the earlier attempt: completed file, its log files, pending files, markers.

Table versions 8 and 9 (Hudi 1.2's layout, the metadata table at the data table's version):

| what                 | file (under `.hoodie/metadata/`)                                   |
|----------------------|--------------------------------------------------------------------|
| initialisation       | first a log file `files/.files-0000-0_<init>.log.1_0-0-0` holding one empty DELETE block (`initializeFileGroups`: a file group exists before it has records), then the base HFile `files/files-0000-0_0-0-0_<init>.hfile` of the BULK_INSERT_PREPPED deltacommit `<init>`; a file group without records keeps the log file only |
| a data-table instant | log file `files/.files-0000-0_<instant>.log.1_0-0-0`: every deltacommit writes a log file of its own, named by its instant (version 1); the completion time files it into a slice |
| records              | Hudi 1.2's `HoodieMetadataRecord` schema text (with the meta fields in HFiles and block headers, without in the commit's `schema`), in HFiles laid out as Hudi 1.2's own `hudi-io` writer does |
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import (
    DEFAULT_WRITE_TOKEN,
    base_file_name,
    log_file_name,
    parse_log_file,
)
from pyhudi.codec.log.delete_content import DeleteRecord
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.log.writer import delete_block, encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import write_metadata_hfile, written_metadata_schema
from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table import layout
from pyhudi.table.context import TableContext

FILES_PARTITION = "files"
#: The `files` partition's one file group (Hudi 0.14: `<prefix><index:04d>-<n>`).
FILES_FILE_GROUP = "files-0000-0"
_HFILE = ".hfile"


@dataclass(frozen=True)
class GroupWrite:
    """What one deltacommit writes into one metadata file group: records (an HFILE_DATA_BLOCK, or
    the base HFile on initialisation) and keys to delete (a DELETE block; logs only)."""

    partition: str
    file_id: str
    records: tuple[MetadataRecord, ...] = ()
    deleted: tuple[DeleteRecord, ...] = ()


def write_base_deltacommit(
    mdt: TableContext, instant_time: str, records: Sequence[MetadataRecord]
) -> None:
    """The initialising deltacommit of `files`: a new base HFile of `files-0000-0`."""
    write_base_groups(
        mdt, instant_time, [GroupWrite(FILES_PARTITION, FILES_FILE_GROUP, tuple(records))]
    )


def write_base_groups(mdt: TableContext, instant_time: str, groups: Sequence[GroupWrite]) -> None:
    """An initialising deltacommit (BULK_INSERT_PREPPED): one new base HFile per file group
    (version 8+: after each file group's empty first log file; a base file for records only)."""
    version = mdt.config.version
    if version >= 8:
        for group in groups:
            _initial_log_file(mdt, instant_time, group)
        groups = [g for g in groups if g.records]
    inflight = _start(mdt, instant_time, WriteOperationType.BULK_INSERT_PREPPED, groups)
    schema = written_metadata_schema(version)
    stats = []
    for group in groups:
        name = base_file_name(group.file_id, DEFAULT_WRITE_TOKEN, instant_time, _HFILE)
        _marker(mdt, instant_time, group.partition, name, IOType.CREATE)
        path = mdt.path(posixpath.join(group.partition, name))
        content = write_metadata_hfile(
            group.records, base_file_name=name, schema_json=schema, hudi_io=version >= 8
        )
        mdt.storage.create_new(path, content)
        stats.append(_stat(group, name, "null", len(group.records), _size(mdt, path)))
    _complete(mdt, inflight, stats, WriteOperationType.BULK_INSERT_PREPPED)


def write_log_deltacommit(
    mdt: TableContext, instant_time: str, records: Sequence[MetadataRecord]
) -> None:
    """A deltacommit at `instant_time` of `files` only."""
    write_log_groups(
        mdt, instant_time, [GroupWrite(FILES_PARTITION, FILES_FILE_GROUP, tuple(records))]
    )


def write_log_groups(mdt: TableContext, instant_time: str, groups: Sequence[GroupWrite]) -> None:
    """A deltacommit at `instant_time`: the next log file of each file group, with one HFILE
    block (its records) and one DELETE block (its deleted keys), each only when not empty."""
    discard_deltacommit(mdt, instant_time)
    inflight = _start(mdt, instant_time, WriteOperationType.UPSERT_PREPPED, groups)
    stats = [_append(mdt, instant_time, group) for group in groups]
    _complete(mdt, inflight, stats, WriteOperationType.UPSERT_PREPPED)


def _initial_log_file(mdt: TableContext, instant_time: str, group: GroupWrite) -> None:
    """Version 8+: the first log file of a new file group, one DELETE block of no keys at the
    initialising instant (Hudi 1.2's `initializeFileGroups`, before the deltacommit starts)."""
    name = log_file_name(group.file_id, instant_time, 1, DEFAULT_WRITE_TOKEN)
    path = mdt.path(posixpath.join(group.partition, name))
    mdt.storage.delete(path)  # a failed attempt's
    block = delete_block(instant_time, ())
    mdt.storage.create_new(path, encode_blocks([block], table_version=mdt.config.version))


def _append(mdt: TableContext, instant_time: str, group: GroupWrite) -> WriteStat:
    table_version = mdt.config.version
    if table_version >= 8:  # a log file of its own, named by its instant
        base_instant, version = instant_time, 1
    else:
        base_instant, version = _next_log(mdt, group.partition, group.file_id)
    name = log_file_name(group.file_id, base_instant, version, DEFAULT_WRITE_TOKEN)
    base_name = base_file_name(group.file_id, DEFAULT_WRITE_TOKEN, base_instant, _HFILE)
    _marker(mdt, instant_time, group.partition, base_name, IOType.APPEND)
    schema = written_metadata_schema(table_version)
    blocks = []
    if group.records or not group.deleted:
        content = write_metadata_hfile(
            group.records, schema_json=schema, hudi_io=table_version >= 8
        )
        blocks.append(hfile_data_block(instant_time, schema, content))
    if group.deleted:
        blocks.append(delete_block(instant_time, group.deleted))
    path = mdt.path(posixpath.join(group.partition, name))
    mdt.storage.create_new(path, encode_blocks(blocks, table_version=table_version))
    written = len(group.records) + len(group.deleted)
    return _stat(group, name, base_instant, written, _size(mdt, path)).with_changes(
        log_version=version,
        log_offset=0,
        base_file="" if table_version >= 8 else base_name,
        log_files=(name,),
        total_log_blocks=len(blocks),
        num_update_writes=len(group.records),
        num_deletes=len(group.deleted),
        num_inserts=0,
    )


def discard_deltacommit(mdt: TableContext, instant_time: str) -> bool:
    """Remove every trace of the metadata-table instant `instant_time` (any state): its completed
    file first (so a crash midway leaves a pending instant readers ignore), its log files, its
    pending files and markers. True when there was something to remove."""
    mdt.active.reload()
    found = [
        i for i in mdt.active.timeline if i.time == instant_time and i.action is Action.DELTA_COMMIT
    ]
    if not found:  # its log file is written after its requested file and deleted before it
        return False
    logs = _logs_written_by(mdt, instant_time)
    for instant in found:
        mdt.storage.delete(mdt.active.instant_path(instant.with_state(State.COMPLETED)))
    for path in logs:
        mdt.storage.delete(path)
    for instant in found:
        for state in (State.INFLIGHT, State.REQUESTED):
            mdt.storage.delete(mdt.active.instant_path(instant.with_state(state)))
    mdt.storage.delete_dir(mdt.marker_folder(instant_time))
    mdt.active.reload()
    return True


# ---- steps -----------------------------------------------------------------------------------------


def _start(
    mdt: TableContext,
    instant_time: str,
    operation: WriteOperationType,
    groups: Sequence[GroupWrite],
) -> Instant:
    requested = mdt.active.create_requested(instant_time, Action.DELTA_COMMIT)
    if mdt.config.version < 8:
        profile = encode_commit_metadata(CommitMetadata(operation_type=operation))
    elif operation is WriteOperationType.BULK_INSERT_PREPPED:
        profile = b""  # Hudi 1.2's initialising deltacommit has an empty inflight file
    else:
        profile = encode_commit_metadata(
            _workload_profile(mdt, groups), table_version=mdt.config.version
        )
    for partition in sorted({g.partition for g in groups}):
        layout.ensure_partition_metadata(
            mdt.storage, mdt.partition_path(partition), partition, instant_time
        )
    return mdt.active.transition_to_inflight(requested, profile)


def _workload_profile(mdt: TableContext, groups: Sequence[GroupWrite]) -> CommitMetadata:
    """Version 8+: the inflight deltacommit as Hudi 1.2 writes it (its `WorkloadProfile`): per
    partition an empty stat, then one per file group naming its latest slice's base instant and
    the records it updates."""
    view = mdt.view()
    partitions = sorted({g.partition for g in groups})
    latest = {
        (p, g.file_id): g.slices[0].base_instant_time
        for p in partitions
        for g in view.file_groups(None, [p], include_replaced=True)
        if g.slices
    }
    stats: dict[str, list[WriteStat]] = {p: [WriteStat("", None, None)] for p in partitions}
    for group in groups:
        stats[group.partition].append(
            WriteStat(
                group.file_id,
                None,
                None,
                prev_commit=latest.get((group.partition, group.file_id), "null"),
                num_update_writes=len(group.records) + len(group.deleted),
            )
        )
    return CommitMetadata(
        partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
        operation_type=WriteOperationType.UPSERT_PREPPED,
    )


def _marker(mdt: TableContext, instant_time: str, partition: str, name: str, io: IOType) -> None:
    path = layout.marker_path(mdt.base_path, instant_time, partition, name, io)
    mdt.storage.create_new(path)


def _stat(group: GroupWrite, name: str, prev_commit: str, records: int, size: int) -> WriteStat:
    return WriteStat(
        file_id=group.file_id,
        path=posixpath.join(group.partition, name),
        partition_path=group.partition,
        prev_commit=prev_commit,
        num_writes=records,
        num_inserts=records,
        total_write_bytes=size,
        file_size_bytes=size,
    )


def _complete(
    mdt: TableContext, inflight: Instant, stats: Sequence[WriteStat], operation: WriteOperationType
) -> None:
    by_partition: dict[str, list[WriteStat]] = {}
    for stat in stats:
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    version = mdt.config.version
    metadata = CommitMetadata(
        partition_to_write_stats={p: tuple(s) for p, s in by_partition.items()},
        operation_type=operation,
        extra_metadata={"schema": written_metadata_schema(version, meta_fields=False)},
    )
    mdt.active.complete(inflight, encode_commit_metadata(metadata, table_version=version))
    mdt.storage.delete_dir(mdt.marker_folder(inflight.time))


def _next_log(mdt: TableContext, partition: str, file_id: str) -> tuple[str, int]:
    """(base instant of the latest slice of `file_id`, the next log version in it)."""
    groups = mdt.view().file_groups(None, [partition], include_replaced=True)
    group = next((g for g in groups if g.file_id == file_id and g.slices), None)
    if group is None:
        raise FileNotFoundError(
            f"metadata table {mdt.base_path} has no file group {file_id} in '{partition}'"
        )
    latest = group.slices[0]
    # Every log file of the slice counts, also one a failed attempt left (never reuse a name).
    versions = [
        log.version
        for status in mdt.storage.list_dir(mdt.partition_path(partition))
        if (log := parse_log_file(partition, status.name)) is not None
        and log.file_id == file_id
        and log.base_instant_time == latest.base_instant_time
    ]
    return latest.base_instant_time, max(versions, default=0) + 1


def _size(mdt: TableContext, path: str) -> int:
    status = mdt.storage.status(path)
    assert status is not None, path
    return status.size_bytes


def _logs_written_by(mdt: TableContext, instant_time: str) -> list[str]:
    """Log files (of any metadata partition) whose first block is of `instant_time`."""
    found = []
    folders = [s.name for s in mdt.storage.list_dir(mdt.base_path) if s.is_dir]
    for partition in (name for name in folders if not name.startswith(".")):
        for status in mdt.storage.list_dir(mdt.partition_path(partition)):
            if parse_log_file(partition, status.name) is None:
                continue
            with mdt.storage.open_input(status.path) as handle:
                first = next(iter_blocks(handle), None)
            if first is not None and not first.is_corrupt and first.instant_time == instant_time:
                found.append(status.path)
    return found
