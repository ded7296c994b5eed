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
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import (
    DEFAULT_WRITE_TOKEN,
    base_file_name,
    log_file_name,
    parse_log_file,
)
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.log.writer import encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import metadata_schema_json, write_metadata_hfile
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


def write_base_deltacommit(
    mdt: TableContext, instant_time: str, records: Sequence[MetadataRecord]
) -> None:
    """The initialising deltacommit: a new base HFile of `files-0000-0` holding `records`."""
    name = base_file_name(FILES_FILE_GROUP, DEFAULT_WRITE_TOKEN, instant_time, _HFILE)
    inflight = _start(mdt, instant_time, WriteOperationType.BULK_INSERT_PREPPED)
    _marker(mdt, instant_time, name, IOType.CREATE)
    path = mdt.path(posixpath.join(FILES_PARTITION, name))
    mdt.storage.create_new(path, write_metadata_hfile(records, base_file_name=name))
    stat = _stat(name, "null", len(records), _size(mdt, path))
    _complete(mdt, inflight, stat, WriteOperationType.BULK_INSERT_PREPPED)


def write_log_deltacommit(
    mdt: TableContext, instant_time: str, records: Sequence[MetadataRecord]
) -> None:
    """A deltacommit at `instant_time`: the next log file of `files-0000-0` with one HFILE block."""
    discard_deltacommit(mdt, instant_time)
    base_instant, version = _next_log(mdt)
    name = log_file_name(FILES_FILE_GROUP, base_instant, version, DEFAULT_WRITE_TOKEN)
    inflight = _start(mdt, instant_time, WriteOperationType.UPSERT_PREPPED)
    base_name = base_file_name(FILES_FILE_GROUP, DEFAULT_WRITE_TOKEN, base_instant, _HFILE)
    _marker(mdt, instant_time, base_name, IOType.APPEND)
    schema = metadata_schema_json()
    block = hfile_data_block(instant_time, schema, write_metadata_hfile(records))
    path = mdt.path(posixpath.join(FILES_PARTITION, name))
    mdt.storage.create_new(path, encode_blocks([block]))
    size = _size(mdt, path)
    stat = _stat(name, base_instant, len(records), size).with_changes(
        log_version=version,
        log_offset=0,
        base_file=base_name,
        log_files=(name,),
        total_log_blocks=1,
        num_update_writes=len(records),
        num_inserts=0,
    )
    _complete(mdt, inflight, stat, WriteOperationType.UPSERT_PREPPED)


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


def _start(mdt: TableContext, instant_time: str, operation: WriteOperationType) -> Instant:
    requested = mdt.active.create_requested(instant_time, Action.DELTA_COMMIT)
    profile = encode_commit_metadata(CommitMetadata(operation_type=operation))
    layout.ensure_partition_metadata(
        mdt.storage, mdt.partition_path(FILES_PARTITION), FILES_PARTITION, instant_time
    )
    return mdt.active.transition_to_inflight(requested, profile)


def _marker(mdt: TableContext, instant_time: str, name: str, io_type: IOType) -> None:
    path = layout.marker_path(mdt.base_path, instant_time, FILES_PARTITION, name, io_type)
    mdt.storage.create_new(path)


def _stat(name: str, prev_commit: str, records: int, size_bytes: int) -> WriteStat:
    return WriteStat(
        file_id=FILES_FILE_GROUP,
        path=posixpath.join(FILES_PARTITION, name),
        partition_path=FILES_PARTITION,
        prev_commit=prev_commit,
        num_writes=records,
        num_inserts=records,
        total_write_bytes=size_bytes,
        file_size_bytes=size_bytes,
    )


def _complete(
    mdt: TableContext, inflight: Instant, stat: WriteStat, operation: WriteOperationType
) -> None:
    metadata = CommitMetadata(
        partition_to_write_stats={FILES_PARTITION: (stat,)},
        operation_type=operation,
        extra_metadata={"schema": metadata_schema_json()},
    )
    mdt.active.complete(inflight, encode_commit_metadata(metadata))
    mdt.storage.delete_dir(mdt.marker_folder(inflight.time))


def _next_log(mdt: TableContext) -> tuple[str, int]:
    """(base instant of the latest `files-0000-0` slice, the next log version in it)."""
    groups = mdt.view().file_groups(None, [FILES_PARTITION], include_replaced=True)
    group = next((g for g in groups if g.file_id == FILES_FILE_GROUP and g.slices), None)
    if group is None:
        raise FileNotFoundError(
            f"metadata table {mdt.base_path} has no file group {FILES_FILE_GROUP} in "
            f"'{FILES_PARTITION}'"
        )
    latest = group.slices[0]
    # Every log file of the slice counts, also one a failed attempt left (never reuse a name).
    versions = [
        log.version
        for status in mdt.storage.list_dir(mdt.partition_path(FILES_PARTITION))
        if (log := parse_log_file(FILES_PARTITION, status.name)) is not None
        and log.file_id == FILES_FILE_GROUP
        and log.base_instant_time == latest.base_instant_time
    ]
    return latest.base_instant_time, max(versions, default=0) + 1


def _size(mdt: TableContext, path: str) -> int:
    status = mdt.storage.status(path)
    assert status is not None, path
    return status.size_bytes


def _logs_written_by(mdt: TableContext, instant_time: str) -> list[str]:
    """Log files of the `files` partition whose first block is of `instant_time`."""
    found = []
    for status in mdt.storage.list_dir(mdt.partition_path(FILES_PARTITION)):
        if parse_log_file(FILES_PARTITION, status.name) is None:
            continue
        with mdt.storage.open_input(status.path) as handle:
            first = next(iter_blocks(handle), None)
        if first is not None and not first.is_corrupt and first.instant_time == instant_time:
            found.append(status.path)
    return found
