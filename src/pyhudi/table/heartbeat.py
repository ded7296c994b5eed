"""Writer heartbeats (`.hoodie/.heartbeat/<instant>`): a running write refreshes its file's
modification time, so that a cleaner with `hoodie.cleaner.policy.failed.writes=LAZY` can tell a live
write from a failed one (Hudi's `HoodieHeartbeatClient`)."""

from __future__ import annotations

import os
import posixpath
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime

from pyhudi.table.context import TableContext

HEARTBEAT_FOLDER = ".heartbeat"
DEFAULT_INTERVAL_S = 60.0


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


@dataclass
class Heartbeat:
    ctx: TableContext
    instant_time: str
    interval_s: float = DEFAULT_INTERVAL_S
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        self._beat()
        self._start_thread()
        return self

    def start_new(self) -> bool:
        """Start with a heartbeat file that must not exist yet (False: another writer has it)."""
        try:
            self.ctx.storage.create_new(heartbeat_path(self.ctx, self.instant_time), b"")
        except FileExistsError:
            return False
        self._start_thread()
        return True

    def _start_thread(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"pyhudi-heartbeat-{self.instant_time}", daemon=True
        )
        self._thread.start()

    def _beat(self) -> None:
        self.ctx.storage.write_bytes(heartbeat_path(self.ctx, self.instant_time), b"")

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
        return {"ctx": self.ctx, "instant_time": self.instant_time, "interval_s": self.interval_s}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def stop(self, *, delete: bool = True) -> None:
        """Stop beating; delete the file unless another writer shares it (`delete=False`)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if delete:
            self.ctx.storage.delete(heartbeat_path(self.ctx, self.instant_time))
