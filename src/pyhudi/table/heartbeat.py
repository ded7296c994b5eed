"""Writer heartbeats (`.hoodie/.heartbeat/<instant>`): a running write refreshes its file's
modification time, so that a cleaner with `hoodie.cleaner.policy.failed.writes=LAZY` can tell a live
write from a failed one (Hudi's `HoodieHeartbeatClient`)."""

from __future__ import annotations

import posixpath
import threading
from dataclasses import dataclass, field

from pyhudi.table.context import TableContext

HEARTBEAT_FOLDER = ".heartbeat"
DEFAULT_INTERVAL_S = 60.0


def heartbeat_path(ctx: TableContext, instant_time: str) -> str:
    return posixpath.join(ctx.meta_path, HEARTBEAT_FOLDER, instant_time)


@dataclass
class Heartbeat:
    ctx: TableContext
    instant_time: str
    interval_s: float = DEFAULT_INTERVAL_S
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Heartbeat:
        self._beat()
        self._thread = threading.Thread(
            target=self._run, name=f"pyhudi-heartbeat-{self.instant_time}", daemon=True
        )
        self._thread.start()
        return self

    def _beat(self) -> None:
        self.ctx.storage.write_bytes(heartbeat_path(self.ctx, self.instant_time), b"")

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._beat()
            except OSError:
                return

    def __getstate__(self) -> dict:
        # Travels with a Data Source writer to other processes: without its thread.
        return {"ctx": self.ctx, "instant_time": self.instant_time, "interval_s": self.interval_s}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def stop(self) -> None:
        self._stop.set()
        self.ctx.storage.delete(heartbeat_path(self.ctx, self.instant_time))
