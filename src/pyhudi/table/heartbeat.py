"""Writer heartbeats (`.hoodie/.heartbeat/<instant>`): a running write refreshes its file's
modification time, so that a cleaner with `hoodie.cleaner.policy.failed.writes=LAZY` can tell a live
write from a failed one (Hudi's `HoodieHeartbeatClient`).

Hudi writes the file empty and reads only its modification time; pyhudi writes its owner into it
(`codec.heartbeat`: host, process id, process start time), so that the next writer on the same
machine can roll back a write whose process died at once (`writer_is_live`) instead of after the
heartbeat expired. An empty file (Hudi's) has an unknown owner."""

from __future__ import annotations

import os
import posixpath
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

from pyhudi.codec.heartbeat import HeartbeatOwner, decode_owner, encode_owner
from pyhudi.table.context import TableContext
from pyhudi.table.process_owner import this_process, why_owner_is_dead

HEARTBEAT_FOLDER = ".heartbeat"
DEFAULT_INTERVAL_S = 60.0
#: Heartbeat files (by URI) of writes this process gave up (`Heartbeat.abandon`).
_ABANDONED: set[str] = set()
_ABANDONED_LOCK = threading.Lock()


def heartbeat_path(ctx: TableContext, instant_time: str) -> str:
    return posixpath.join(ctx.meta_path, HEARTBEAT_FOLDER, instant_time)


def is_heartbeat_expired(
    ctx: TableContext, instant_time: str, expiry_ms: int, *, now: datetime | None = None
) -> bool:
    """No heartbeat file, or one not refreshed for more than `expiry_ms` (`HoodieHeartbeatClient`)."""
    status = ctx.storage.status(heartbeat_path(ctx, instant_time))
    if status is None or status.mtime_ns is None:
        return True
    now_ms = int((now.timestamp() if now is not None else time.time()) * 1000)
    return now_ms - status.mtime_ns // 1_000_000 > expiry_ms


def last_beat_ms(ctx: TableContext, instant_time: str) -> int | None:
    status = ctx.storage.status(heartbeat_path(ctx, instant_time))
    return None if status is None or status.mtime_ns is None else status.mtime_ns // 1_000_000


def read_owner(ctx: TableContext, instant_time: str) -> HeartbeatOwner | None:
    """The process that keeps the heartbeat of `instant_time`, None if unknown or no heartbeat."""
    try:
        return decode_owner(ctx.storage.read_bytes(heartbeat_path(ctx, instant_time)))
    except FileNotFoundError:
        return None


def dead_owner(ctx: TableContext, instant_time: str) -> str | None:
    """Why the owner of the heartbeat of `instant_time` has provably died (or, being this
    process, gave the write up), or None."""
    owner = read_owner(ctx, instant_time)
    if owner is not None and _key(ctx, instant_time) in _ABANDONED and owner == this_process():
        return f"{owner.describe()} (this process), gave it up when it failed"
    return why_owner_is_dead(owner)


def _key(ctx: TableContext, instant_time: str) -> str:
    return ctx.storage.uri(heartbeat_path(ctx, instant_time))


def writer_is_live(ctx: TableContext, instant_time: str, expiry_ms: int) -> bool:
    """The heartbeat is fresh and its owner is not provably dead."""
    if is_heartbeat_expired(ctx, instant_time, expiry_ms):
        return False
    return dead_owner(ctx, instant_time) is None


@dataclass
class Heartbeat:
    ctx: TableContext
    instant_time: str
    interval_s: float = DEFAULT_INTERVAL_S
    #: The file's content: this process as owner (a Data Source writer pickled to another process
    #: keeps the owner of the process that beats).
    content: bytes = field(default_factory=lambda: encode_owner(this_process()))
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        self._beat()
        self._start_thread()
        return self

    def start_new(self) -> bool:
        """Start with a heartbeat file that must not exist yet (False: another writer has it)."""
        try:
            self.ctx.storage.create_new(heartbeat_path(self.ctx, self.instant_time), self.content)
        except FileExistsError:
            return False
        self._start_thread()
        return True

    def _start_thread(self) -> None:
        with _ABANDONED_LOCK:  # a fixed instant time (bootstrap) may be written again
            _ABANDONED.discard(_key(self.ctx, self.instant_time))
        self._thread = threading.Thread(
            target=self._run, name=f"pyhudi-heartbeat-{self.instant_time}", daemon=True
        )
        self._thread.start()

    def _beat(self) -> None:
        self.ctx.storage.write_bytes(heartbeat_path(self.ctx, self.instant_time), self.content)

    def _refresh(self) -> bool:
        """Refresh the file's modification time; False once the file is gone (the instant was
        committed from another process, e.g. a Data Source commit, or rolled back)."""
        path = heartbeat_path(self.ctx, self.instant_time)
        if self.ctx.storage.is_local:
            try:
                os.utime(path)
            except FileNotFoundError:
                return False
            return True
        if not self.ctx.storage.exists(path):
            return False
        self._beat()
        return True

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                if not self._refresh():
                    return
            except OSError:
                return

    def __getstate__(self) -> dict:
        # Travels with a Data Source writer to other processes: without its thread.
        return {
            "ctx": self.ctx,
            "instant_time": self.instant_time,
            "interval_s": self.interval_s,
            "content": self.content,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def abandon(self) -> None:
        """Stop beating for a write that failed and could not be undone, leaving the file (storage
        may be unreachable): this process's next write rolls the instant back at once
        (`dead_owner`), other processes once the heartbeat expired."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        with _ABANDONED_LOCK:
            _ABANDONED.add(_key(self.ctx, self.instant_time))

    def stop(self, *, delete: bool = True) -> None:
        """Stop beating; delete the file unless another writer shares it (`delete=False`)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if delete:
            self.ctx.storage.delete(heartbeat_path(self.ctx, self.instant_time))
