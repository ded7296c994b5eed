"""File names of the table: base files, log files, instants, markers (reference §2.2, §3).

| kind        | pattern                                                    | example                                  |
|-------------|------------------------------------------------------------|------------------------------------------|
| base file   | `<fileId>_<writeToken>_<instant><ext>`                     | `d03…-0_0-13-60_20250331030642808.parquet` |
| log file    | `.<fileId>_<baseInstant>.log.<ver>[_<writeToken>][.cdc]`   | `.d03…-0_20250331030642808.log.1_0-26-85` |
| write token | `<taskPartitionId>-<stageId>-<taskAttemptId>`              | `0-13-60`                                |
| file id     | `<uuid4>-<n>` (bootstrap skeletons: bare uuid)             | `d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0` |
| instant     | `<time>.<action>[.<state>]`; v8: `<time>_<completion>.<action>` | `20240418172802262.commit.requested` |
| marker      | `<dataFileName>.marker.<IOType>`                           | `…parquet.marker.CREATE`                 |
"""

from __future__ import annotations

import hashlib
import re
import uuid

from pyhudi.model.enums import IOType
from pyhudi.model.file import BaseFile, LogFile
from pyhudi.model.instant import Action, Instant, InstantTime, State

#: Hudi's `FSUtils.LOG_FILE_PATTERN`.
LOG_FILE_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")
_WRITE_TOKEN_RE = re.compile(r"^\d+-\d+-\d+$")
PARTITION_METAFILE_PREFIX = ".hoodie_partition_metadata"
DEFAULT_WRITE_TOKEN = "0-0-0"
#: Used for log rollovers without a task context (rollback command blocks) and the bootstrap index.
UNKNOWN_WRITE_TOKEN = "1-0-1"
MARKER_INFIX = ".marker."


def new_file_id_prefix() -> str:
    return str(uuid.uuid4())


def new_file_id(index: int = 0, prefix: str | None = None) -> str:
    """`<uuid4>-<n>`, Hudi's `FSUtils.createNewFileId`."""
    return f"{prefix or new_file_id_prefix()}-{index}"


def new_bucket_file_id(instant_time: str, partition: str, bucket: int) -> str:
    """A new bucket's file id (Hudi's shape: the 8-digit bucket, the rest of a UUID, `-0`) whose
    UUID-shaped tail is hashed from (instant, partition, bucket): every task of a write names a
    bucket the same way. `pyhudi.index.bucket` computes the same id as a Spark expression."""
    digest = hashlib.sha256(f"pyhudi:{instant_time}:{partition}:{bucket}".encode()).hexdigest()
    tail = "-".join((digest[0:4], digest[4:8], digest[8:12], digest[12:24]))
    return f"{bucket:08d}-{tail}-0"


def make_write_token(task_partition_id: int, stage_id: int, task_attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{task_attempt_id}"


def base_file_name(
    file_id: str, write_token: str, instant_time: str, extension: str = ".parquet"
) -> str:
    if "_" in file_id or "_" in write_token:
        raise ValueError(
            f"file id and write token must not contain '_': {file_id!r}, {write_token!r}"
        )
    return f"{file_id}_{write_token}_{instant_time}{extension}"


def log_file_name(
    file_id: str,
    base_instant_time: str,
    version: int,
    write_token: str | None,
    *,
    extension: str = "log",
    cdc: bool = False,
) -> str:
    name = f".{file_id}_{base_instant_time}.{extension}.{version}"
    if write_token is not None:
        if not _WRITE_TOKEN_RE.match(write_token):
            raise ValueError(f"log write tokens are <int>-<int>-<int>, got {write_token!r}")
        name += f"_{write_token}"
        if cdc:
            name += ".cdc"
    return name


def is_partition_metafile(name: str) -> bool:
    return name.startswith(PARTITION_METAFILE_PREFIX)


def parse_base_file(partition_path: str, name: str, size_bytes: int = -1) -> BaseFile | None:
    """A base file of the table, or None when `name` is not one (log, marker, hidden file)."""
    if name.startswith(".") or "_" not in name:
        return None
    parts = name.split("_")
    if len(parts) < 3:
        return None
    file_id, write_token = parts[0], parts[1]
    instant = parts[2].split(".", 1)[0]
    if not InstantTime.is_valid(instant):
        return None
    return BaseFile(
        partition_path=partition_path,
        file_name=name,
        file_id=file_id,
        write_token=write_token,
        instant_time=InstantTime(instant),
        size_bytes=size_bytes,
    )


def parse_log_file(partition_path: str, name: str, size_bytes: int = -1) -> LogFile | None:
    match = LOG_FILE_RE.match(name)
    if not match:
        return None
    base_instant = match.group(2)
    return LogFile(
        partition_path=partition_path,
        file_name=name,
        file_id=match.group(1),
        # Archived timeline logs (`.commits_.archive.N_…`) have an empty base instant.
        base_instant_time=InstantTime(base_instant) if base_instant else base_instant,  # type: ignore[arg-type]
        version=int(match.group(4)),
        write_token=match.group(6),
        suffix=match.group(10) or "",
        extension=match.group(3),
        size_bytes=size_bytes,
    )


def marker_name(data_file_name: str, io_type: IOType) -> str:
    return f"{data_file_name}{MARKER_INFIX}{io_type.value}"


def parse_marker(name: str) -> tuple[str, IOType] | None:
    if MARKER_INFIX not in name:
        return None
    data_file, io_type = name.rsplit(MARKER_INFIX, 1)
    try:
        return data_file, IOType(io_type)
    except ValueError:
        return None


# ---- instant files -------------------------------------------------------------------------

_INSTANT_FILE_RE = re.compile(r"^(\d+)(?:_(\d+))?(\.[a-z]+)(\.[a-z]+)?$")


def instant_file_name(instant: Instant) -> str:
    """The `.hoodie/` file name of an instant in table version 6 (layout 1, §2.2)."""
    t, action, state = instant.time, instant.action, instant.state
    if state is State.COMPLETED:
        return f"{t}.{action.completed_action.value}"
    if state is State.INFLIGHT:
        return f"{t}.inflight" if action is Action.COMMIT else f"{t}.{action.value}.inflight"
    return f"{t}.{action.value}.requested"


def parse_instant_file(name: str) -> Instant | None:
    """An instant from a timeline file name (v6 or v8), or None for any other file."""
    match = _INSTANT_FILE_RE.match(name)
    if not match:
        return None
    time, completion, action_ext, state_ext = match.groups()
    if not InstantTime.is_valid(time):
        return None
    action_name = action_ext[1:]
    if action_name == "inflight" and state_ext is None:
        return Instant(InstantTime(time), Action.COMMIT, State.INFLIGHT)
    try:
        action = Action(action_name)
    except ValueError:
        return None
    if state_ext is None:
        state = State.COMPLETED
    elif state_ext == ".inflight":
        state = State.INFLIGHT
    elif state_ext == ".requested":
        state = State.REQUESTED
    else:
        return None
    if state is State.COMPLETED and action is not action.completed_action:
        return None  # e.g. "<t>.compaction" is not a valid completed file
    completion_time = InstantTime(completion) if completion else None
    return Instant(InstantTime(time), action, state, completion_time)
