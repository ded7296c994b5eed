"""Who holds a table's lock, and which writers are beating: what `pyhudi show locks|heartbeats` print."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone

from pyhudi.config.concurrency import FILE_SYSTEM_LOCK, FILESYSTEM_LOCK_EXPIRE, STORAGE_BASED_LOCK
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.instant import State
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import HEARTBEAT_FOLDER
from pyhudi.table.lock.files import read_if_present
from pyhudi.table.lock.filesystem import lock_file_path
from pyhudi.table.lock.lease import decode_lock, lock_path


@dataclass(frozen=True)
class LockState:
    provider: str
    path: str
    holder: str
    since: str
    expires: str


@dataclass(frozen=True)
class HeartbeatState:
    instant_time: str
    last_beat: str
    age_s: float
    instant_state: str
    live: bool


def _iso(epoch_ms: float) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds")


def lock_states(
    storage: Storage, base_path: str, lock_folder: str | None, expire_minutes: int = 0
) -> list[LockState]:
    """The table's locks that may be held now: Hudi's lock file, and the storage-based lock
    (in the table, and in `lock_folder` where pyhudi's earlier name puts it) unless released."""
    states = []
    file_storage, file_path = lock_file_path(storage, base_path, lock_folder)
    content = read_if_present(file_storage, file_path)
    if content is not None:
        states.append(_file_lock_state(file_storage, file_path, content, expire_minutes))
    places = [lock_path(storage, base_path, None)]
    if lock_folder:
        places.append(lock_path(storage, base_path, lock_folder))
    for lock_storage, path in places:
        state = _storage_lock_state(lock_storage, path)
        if state is not None:
            states.append(state)
    return states


def _storage_lock_state(storage: Storage, path: str) -> LockState | None:
    """`since` is the last write (acquisition or renewal): Hudi's format keeps no start time."""
    content = read_if_present(storage, path)
    if content is None:
        return None
    try:
        data = decode_lock(content, storage.uri(path))
    except CorruptFileError as err:
        return LockState(STORAGE_BASED_LOCK, storage.uri(path), f"unreadable: {err}", "", "")
    if data.expired:
        return None  # released: Hudi's provider keeps the object, marked expired
    status = storage.status(path)
    written_ms = (status.mtime_ns or 0) / 1_000_000 if status else 0
    lapsed = not data.is_live(int(time.time() * 1000))
    return LockState(
        STORAGE_BASED_LOCK,
        storage.uri(path),
        data.owner or "unknown owner",
        _iso(written_ms),
        _iso(data.valid_until_ms) + (" (expired)" if lapsed else ""),
    )


def _file_lock_state(storage: Storage, path: str, content: bytes, expire_minutes: int) -> LockState:
    try:
        info = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        info = {}
    stacks = info.get("lockStacksInfo") or []
    holder = " / ".join(str(x) for x in [info.get("lockThreadName"), *stacks[:1]] if x)
    status = storage.status(path)
    modified_ms = (status.mtime_ns or 0) / 1_000_000 if status else 0
    if expire_minutes > 0:
        expires = _iso(modified_ms + expire_minutes * 60_000)
    else:
        expires = f"never ({FILESYSTEM_LOCK_EXPIRE.key}=0): delete the file if its holder died"
    return LockState(
        FILE_SYSTEM_LOCK,
        storage.uri(path),
        holder or "unknown",
        str(info.get("lockCreateTime") or _iso(modified_ms)),
        expires,
    )


def heartbeat_states(ctx: TableContext, expiry_ms: int) -> list[HeartbeatState]:
    """Every heartbeat file: its instant, last beat, and whether its writer counts as live."""
    folder = f"{ctx.meta_path}/{HEARTBEAT_FOLDER}"
    now_ms = time.time() * 1000
    states = []
    for status in sorted(ctx.storage.list_dir(folder), key=lambda s: s.name):
        if status.is_dir:
            continue
        beat_ms = (status.mtime_ns or 0) / 1_000_000
        state = ctx.active.timeline.state_of(status.name)
        states.append(
            HeartbeatState(
                instant_time=status.name,
                last_beat=_iso(beat_ms),
                age_s=round((now_ms - beat_ms) / 1000, 1),
                instant_state="not on the timeline" if state is None else _state_name(state),
                live=now_ms - beat_ms <= expiry_ms,
            )
        )
    return states


def _state_name(state: State) -> str:
    return state.value.lower()
