"""`HoodieArchivedMetaEntry` records and the archive log files that hold them (§1.5, table version 6).

An archive file is a Hudi log file (§5) with fileId `commits`, an empty base instant and the
extension `archive`: `.hoodie/archived/.commits_.archive.<N>_<writeToken>`.

| bytes          | content                                                                        |
|----------------|--------------------------------------------------------------------------------|
| block 1..k     | AVRO_DATA_BLOCK, header `{SCHEMA: HoodieArchivedMetaEntry schema JSON}` only    |
| block content  | `int32 3`, `int32 count`, per record `int32 length` + Avro binary of the record |

Hudi (`HoodieTimelineArchiver.writeToFile`) puts no INSTANT_TIME header on these blocks and starts
a new block every `hoodie.commits.archival.batch` records. One record per archived timeline
*file* (requested, inflight and completed files each get one; `MetadataConversionUtils`):

| field               | value                                                                  |
|---------------------|------------------------------------------------------------------------|
| commitTime          | the instant time                                                       |
| actionType          | the file's action (`commit` for a completed compaction)                |
| actionState         | `REQUESTED`, `INFLIGHT` or `COMPLETED`                                 |
| stateTransitionTime | 0.14/0.15: the file's modification time as `yyyyMMddHHmmssSSS`, or null |
| version             | null: Hudi builds the record with the no-arg constructor               |

and at most one metadata member, by action and state:

| action                 | state     | member                                                  |
|------------------------|-----------|---------------------------------------------------------|
| commit, deltacommit    | any       | `hoodieCommitMetadata` (JSON converted, see below)       |
| replacecommit          | COMPLETED | `hoodieReplaceCommitMetadata`                            |
| replacecommit          | INFLIGHT  | `HoodieInflightReplaceMetadata` (none when the file is empty) |
| replacecommit          | REQUESTED | `hoodieRequestedReplaceMetadata` (none when empty)       |
| clean                  | COMPLETED / pending | `hoodieCleanMetadata` / `hoodieCleanerPlan`    |
| rollback, savepoint    | COMPLETED | `hoodieRollbackMetadata`, `hoodieSavePointMetadata`      |
| compaction, logcompaction | pending | `hoodieCompactionPlan` (of the `.requested` file)       |

A completed file that is empty (left by a crash) gets no member. The JSON commit metadata becomes
the Avro `HoodieCommitMetadata` the way Jackson's `convertValue` maps it: fields by name, so the
Avro `HoodieWriteStat` keeps 16 of the JSON stat's fields (`totalLogFiles` has no JSON
counterpart and stays null); `version` is null; `extraMetadata` gains `"ROLLING_STAT": ""`; a
`compacted` commit gets `operationType = "COMPACT"`.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import fastavro

from pyhudi.codec.avro_schemas import schema
from pyhudi.codec.commit_metadata import decode_commit_metadata
from pyhudi.codec.file_names import UNKNOWN_WRITE_TOKEN, log_file_name
from pyhudi.codec.log.avro_content import decode_avro_records, encode_avro_records
from pyhudi.codec.log.block import LogBlock
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import HeaderMetadataType, LogBlockType, WriteOperationType
from pyhudi.model.instant import Action, Instant, InstantTime, State

ARCHIVED_META_ENTRY = "HoodieArchivedMetaEntry"
#: fileId and extension of archive log files (`HoodieArchivedTimeline.getArchiveLogPath`).
ARCHIVE_FILE_ID = "commits"
ARCHIVE_EXTENSION = "archive"
#: `HoodieRollingStatMetadata.ROLLING_STAT_METADATA_KEY`, blanked in every archived commit.
ROLLING_STAT_KEY = "ROLLING_STAT"

# (Avro field of HoodieWriteStat, WriteStat attribute); None = no JSON counterpart, always null.
_AVRO_STAT_FIELDS = (
    ("fileId", "file_id"),
    ("path", "path"),
    ("prevCommit", "prev_commit"),
    ("numWrites", "num_writes"),
    ("numDeletes", "num_deletes"),
    ("numUpdateWrites", "num_update_writes"),
    ("totalWriteBytes", "total_write_bytes"),
    ("totalWriteErrors", "total_write_errors"),
    ("partitionPath", "partition_path"),
    ("totalLogRecords", "total_log_records"),
    ("totalLogFiles", None),
    ("totalUpdatedRecordsCompacted", "total_updated_records_compacted"),
    ("numInserts", "num_inserts"),
    ("totalLogBlocks", "total_log_blocks"),
    ("totalCorruptLogBlock", "total_corrupt_log_blocks"),
    ("totalRollbackBlocks", "total_rollback_blocks"),
    ("fileSizeInBytes", "file_size_bytes"),
)
# Members holding JSON commit metadata converted to Avro (the rest hold Avro metadata as is).
_COMMIT_MEMBERS = frozenset(
    {"hoodieCommitMetadata", "hoodieReplaceCommitMetadata", "HoodieInflightReplaceMetadata"}
)
_AVRO_MEMBER_RECORDS = {
    "hoodieRequestedReplaceMetadata": "HoodieRequestedReplaceMetadata",
    "hoodieCleanMetadata": "HoodieCleanMetadata",
    "hoodieCleanerPlan": "HoodieCleanerPlan",
    "hoodieRollbackMetadata": "HoodieRollbackMetadata",
    "hoodieSavePointMetadata": "HoodieSavepointMetadata",
    "hoodieCompactionPlan": "HoodieCompactionPlan",
    "hoodieIndexCommitMetadata": "HoodieIndexCommitMetadata",
}
ArchivedMetadata = CommitMetadata | dict[str, Any] | None


#: The writer schema text of archive blocks, exactly as Hudi 0.15 writes it
#: (`HoodieArchivedMetaEntry.getClassSchema()`, taken from an archive file Hudi 0.15 wrote): its
#: strings carry `"avro.java.string": "String"`, which Hudi 1.x's upgrade relies on (it reads the
#: entries as generic records and casts their strings), and its clean metadata has
#: `extraMetadata`.
ARCHIVED_ENTRY_WRITTEN = "written-0.15/HoodieArchivedMetaEntry.json"
#: The same as Hudi 1.2 writes it (`TimelineArchiverV1.flushArchiveEntries`, when its downgrade to
#: version 6 turns the LSM history back into archive files): its members are Hudi 1.2's records
#: (a write stat has `numUpdates`, `totalLogReadTimeMs`, ...).
ARCHIVED_ENTRY_WRITTEN_1X = "written-1.2/HoodieArchivedMetaEntry.json"


@cache
def archived_entry_schema_json(written: str = ARCHIVED_ENTRY_WRITTEN) -> str:
    """The `HoodieArchivedMetaEntry` writer schema as JSON (the SCHEMA header of every block):
    Hudi 0.15's text, or the one `written` names (`ARCHIVED_ENTRY_WRITTEN_1X`)."""
    entry = resources.files("pyhudi.codec").joinpath("avsc", *written.split("/"))
    return entry.read_text(encoding="utf-8")


def archive_file_name(version: int, write_token: str = UNKNOWN_WRITE_TOKEN) -> str:
    """`.commits_.archive.<version>_<token>`; Hudi rolls over with the token `1-0-1`."""
    return log_file_name(ARCHIVE_FILE_ID, "", version, write_token, extension=ARCHIVE_EXTENSION)


# ---- building entries ------------------------------------------------------------------------


def member_name(action: Action, state: State) -> str | None:
    """The metadata member `MetadataConversionUtils.createMetaWrapper` fills for a file."""
    completed = state is State.COMPLETED
    if action in (Action.COMMIT, Action.DELTA_COMMIT):
        return "hoodieCommitMetadata"
    if action is Action.REPLACE_COMMIT:
        return {
            State.COMPLETED: "hoodieReplaceCommitMetadata",
            State.INFLIGHT: "HoodieInflightReplaceMetadata",
            State.REQUESTED: "hoodieRequestedReplaceMetadata",
        }[state]
    if action is Action.CLEAN:
        return "hoodieCleanMetadata" if completed else "hoodieCleanerPlan"
    if action in (Action.COMPACTION, Action.LOG_COMPACTION):
        return "hoodieCompactionPlan"
    if action is Action.ROLLBACK:
        return "hoodieRollbackMetadata" if completed else None
    if action is Action.SAVEPOINT:
        return "hoodieSavePointMetadata" if completed else None
    if action is Action.INDEXING:
        return "hoodieIndexCommitMetadata" if completed else None
    raise UnsupportedOperationError(f"instants of action {action.value} cannot be archived")


def build_entry(
    instant: Instant, content: bytes, *, state_transition_time: str | None = None
) -> dict[str, Any]:
    """The `HoodieArchivedMetaEntry` of one timeline file of `instant` holding `content`.

    For pending compaction and log compaction pass the `.requested` file's plan as `content`.
    """
    action = instant.action.completed_action if instant.is_completed else instant.action
    entry: dict[str, Any] = {
        "commitTime": str(instant.time),
        "actionType": action.value,
        "actionState": instant.state.value,
        "stateTransitionTime": state_transition_time,
        "version": None,
    }
    member = member_name(action, instant.state)
    if member is None or (instant.is_completed and not content):
        return entry  # Hudi's createMetaWrapperForEmptyInstant: no metadata member
    what = f"timeline file of {instant}"
    if member in _COMMIT_MEMBERS:
        if member == "HoodieInflightReplaceMetadata" and not content:
            return entry
        metadata = decode_commit_metadata(content, what=what)
        entry[member] = commit_metadata_to_avro(
            metadata, replace=member == "hoodieReplaceCommitMetadata"
        )
    else:
        value = read_avro_metadata(_AVRO_MEMBER_RECORDS[member], content, what=what)
        if value is not None:
            entry[member] = value
    return entry


def commit_metadata_to_avro(metadata: CommitMetadata, *, replace: bool = False) -> dict[str, Any]:
    """Avro `HoodieCommitMetadata` (or `HoodieReplaceCommitMetadata`) as Jackson maps the JSON."""
    extra = dict(metadata.extra_metadata)
    extra[ROLLING_STAT_KEY] = ""
    operation = metadata.operation_type
    if metadata.compacted and not replace:
        operation = WriteOperationType.COMPACT
    record: dict[str, Any] = {
        "partitionToWriteStats": {
            partition: [_stat_to_avro(stat) for stat in stats]
            for partition, stats in metadata.partition_to_write_stats.items()
        },
        "extraMetadata": extra,
        "version": None,
        "operationType": operation.value,
    }
    if replace:
        replaced = metadata.partition_to_replace_file_ids or {}
        record["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced.items()}
    return record


def _stat_to_avro(stat: WriteStat) -> dict[str, Any]:
    return {
        name: None if attribute is None else getattr(stat, attribute)
        for name, attribute in _AVRO_STAT_FIELDS
    }


def read_avro_metadata(record_name: str, data: bytes, *, what: str) -> dict[str, Any] | None:
    """The record of a single-record Avro container, resolved to Hudi 0.14's schema when possible."""
    if not data:
        return None
    try:
        try:
            records = list(fastavro.reader(io.BytesIO(data), reader_schema=schema(record_name)))
        except fastavro.read.SchemaResolutionError:
            records = list(fastavro.reader(io.BytesIO(data)))
    except (ValueError, EOFError, TypeError, KeyError) as err:
        raise CorruptFileError(f"cannot decode {what} as {record_name}: {err}") from err
    return dict(records[0]) if records and isinstance(records[0], dict) else None


# ---- reading entries back --------------------------------------------------------------------


def entry_to_instant(record: Mapping[str, Any]) -> tuple[Instant, ArchivedMetadata]:
    """The instant (as its archived file names it) and its metadata.

    Commit-like members come back as `CommitMetadata` (with the Avro stat fields only, and without
    the `ROLLING_STAT` marker); other members as the decoded Avro dict; None when absent.
    """
    try:
        time = InstantTime(str(record["commitTime"]))
        action = Action(str(record["actionType"]))
        state = State(str(record["actionState"]).upper())
    except (KeyError, ValueError) as err:
        raise CorruptFileError(f"not a usable HoodieArchivedMetaEntry: {err}") from err
    instant = Instant(time, action, state)
    member = member_name(action, state)
    value = record.get(member) if member else None
    if value is None:
        return instant, None
    if member in _COMMIT_MEMBERS:
        return instant, commit_metadata_from_avro(value)
    return instant, dict(value)


def commit_metadata_from_avro(record: Mapping[str, Any]) -> CommitMetadata:
    operation_name = str(record.get("operationType") or "UNKNOWN").upper()
    try:
        operation = WriteOperationType(operation_name)
    except ValueError:
        operation = WriteOperationType.UNKNOWN
    extra = {k: v for k, v in (record.get("extraMetadata") or {}).items() if v is not None}
    if extra.get(ROLLING_STAT_KEY) == "":
        del extra[ROLLING_STAT_KEY]
    replaced = record.get("partitionToReplaceFileIds")
    return CommitMetadata(
        partition_to_write_stats={
            partition: tuple(_stat_from_avro(s) for s in (stats or []))
            for partition, stats in (record.get("partitionToWriteStats") or {}).items()
        },
        operation_type=operation,
        extra_metadata=extra,
        compacted=operation is WriteOperationType.COMPACT,
        partition_to_replace_file_ids=(
            {p: tuple(ids or ()) for p, ids in replaced.items()} if replaced is not None else None
        ),
    )


def _stat_from_avro(data: Mapping[str, Any]) -> WriteStat:
    kwargs: dict[str, Any] = {}
    for name, attribute in _AVRO_STAT_FIELDS:
        if attribute is not None and data.get(name) is not None:
            kwargs[attribute] = data[name]
    kwargs.setdefault("file_id", "")
    kwargs.setdefault("path", None)
    kwargs.setdefault("partition_path", None)
    return WriteStat(**kwargs)


# ---- archive log files -----------------------------------------------------------------------


def encode_archive_log(
    entries: Iterable[Mapping[str, Any]], *, batch_size: int = 10, schema_json: str | None = None
) -> bytes:
    """The bytes of a new archive file: one AVRO_DATA_BLOCK per `batch_size` entries, written
    with `schema_json` (Hudi 0.15's `HoodieArchivedMetaEntry` text when None)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if schema_json is None:
        schema_json = archived_entry_schema_json()
    header = {HeaderMetadataType.SCHEMA: schema_json}
    items = list(entries)
    blocks = []
    for start in range(0, len(items), batch_size):
        content = encode_avro_records(schema_json, items[start : start + batch_size])
        blocks.append(LogBlock(LogBlockType.AVRO_DATA_BLOCK, header, content).encode())
    return b"".join(blocks)


def decode_archive_log(data: bytes, *, what: str = "archive file") -> list[dict[str, Any]]:
    """Every entry of an archive file, in file order.

    Corrupt ranges (a torn tail after a crash) and non-data blocks are skipped, as the archiver
    deletes the timeline files only after the archive file is complete: such entries are still
    in the active timeline.
    """
    entries: list[dict[str, Any]] = []
    for block in iter_blocks(data):
        if block.is_corrupt or block.block_type is not LogBlockType.AVRO_DATA_BLOCK:
            continue
        schema_json = block.schema_json
        if schema_json is None:
            raise CorruptFileError(f"{what}: Avro data block at {block.offset} has no SCHEMA")
        entries.extend(decode_avro_records(block.content, schema_json))
    return entries
