"""The owner of a writer heartbeat, as pyhudi records it in `.hoodie/.heartbeat/<instant>`.

| part    | bytes                                                                                 |
|---------|---------------------------------------------------------------------------------------|
| Hudi    | empty: `HoodieHeartbeatClient` creates the file empty and only reads its modification  |
|         | time, so a Hudi-written heartbeat has no owner                                         |
| pyhudi  | UTF-8 JSON `{"writer": "pyhudi", "host", "pid", "startTicks", "bootId", "pidNamespace"}`|
|         | `startTicks`: field 22 of `/proc/<pid>/stat` (clock ticks after boot), `bootId`:       |
|         | `/proc/sys/kernel/random/boot_id`, `pidNamespace`: the link `/proc/self/ns/pid`; each  |
|         | of the three is null where `/proc` is absent                                           |

Decoding never fails: empty, unreadable or foreign content is an unknown owner (None).

>>> owner = HeartbeatOwner("h", 42, 7, "b", "pid:[1]")
>>> decode_owner(encode_owner(owner)) == owner, decode_owner(b"")
(True, None)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

_WRITER = "pyhudi"


@dataclass(frozen=True)
class HeartbeatOwner:
    """The process that keeps a heartbeat fresh: host name, process id and what tells that
    process apart from a later one with the same id on the same kernel."""

    host: str
    pid: int
    start_ticks: int | None = None
    boot_id: str | None = None
    pid_namespace: str | None = None

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}"


def encode_owner(owner: HeartbeatOwner) -> bytes:
    record = {
        "writer": _WRITER,
        "host": owner.host,
        "pid": owner.pid,
        "startTicks": owner.start_ticks,
        "bootId": owner.boot_id,
        "pidNamespace": owner.pid_namespace,
    }
    return json.dumps(record, separators=(",", ":")).encode("utf-8")


def decode_owner(content: bytes) -> HeartbeatOwner | None:
    if not content.strip():
        return None  # Hudi's (and pyhudi's before owners) empty heartbeat
    try:
        record = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("writer") != _WRITER:
        return None
    host, pid, ticks = record.get("host"), record.get("pid"), record.get("startTicks")
    if not isinstance(host, str) or type(pid) is not int:
        return None
    return HeartbeatOwner(
        host,
        pid,
        ticks if type(ticks) is int else None,
        _text(record.get("bootId")),
        _text(record.get("pidNamespace")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
