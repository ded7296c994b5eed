"""Which process owns a heartbeat, and whether it provably died (standard library and `/proc` only).

A pending write whose owner is provably dead can be rolled back at once instead of after its
heartbeat expired. "Provably" is deliberately narrow; a wrong "dead" rolls back a live write:

* same machine: the same host name, the same kernel boot (`/proc/sys/kernel/random/boot_id`;
  another machine or container host may carry the same host name) and the same process id
  namespace (`/proc/self/ns/pid`; containers sharing a host name number processes apart);
* and the process id is gone, is a zombie, or is now another process (another start time,
  field 22 of `/proc/<pid>/stat`, so a reused process id is not taken for the owner).

Anything else (another host, an owner recorded without these facts, no `/proc` here, as on macOS
or Windows) is not provably dead: the caller waits for the heartbeat to expire.
"""

from __future__ import annotations

import functools
import os
import socket

from pyhudi.codec.heartbeat import HeartbeatOwner

PROC_ROOT = "/proc"


def this_process(proc_root: str = PROC_ROOT) -> HeartbeatOwner:
    """The calling process as a heartbeat owner (facts `/proc` lacks are None)."""
    pid = os.getpid()
    stat = process_stat(pid, proc_root)
    host, boot_id, namespace = _machine(proc_root)
    return HeartbeatOwner(host, pid, None if stat is None else stat[1], boot_id, namespace)


@functools.lru_cache(maxsize=4)
def _machine(proc_root: str) -> tuple[str, str | None, str | None]:
    """Host name, boot id and process id namespace: fixed for a process's life (and a fork's)."""
    try:
        with open(os.path.join(proc_root, "sys/kernel/random/boot_id")) as handle:
            boot_id: str | None = handle.read().strip() or None
    except OSError:
        boot_id = None
    try:
        namespace: str | None = os.readlink(os.path.join(proc_root, "self/ns/pid"))
    except OSError:
        namespace = None
    return socket.gethostname(), boot_id, namespace


def process_stat(pid: int, proc_root: str = PROC_ROOT) -> tuple[str, int] | None:
    """(state, start time in clock ticks after boot) of a process, None if there is none."""
    try:
        with open(os.path.join(proc_root, str(pid), "stat")) as handle:
            text = handle.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses; fields follow the last ")".
    fields = text[text.rfind(")") + 1 :].split()
    try:
        return fields[0], int(fields[19])  # fields 3 and 22 of proc(5)
    except (IndexError, ValueError):
        return None


def why_owner_is_dead(
    owner: HeartbeatOwner | None, *, proc_root: str = PROC_ROOT, here: HeartbeatOwner | None = None
) -> str | None:
    """Why `owner` has provably died ("pid 12 on h is gone"), or None if that is not certain."""
    if owner is None:
        return None
    here = this_process(proc_root) if here is None else here
    if not _same_machine(owner, here) or owner.start_ticks is None:
        return None
    stat = process_stat(owner.pid, proc_root)
    if stat is None:
        return f"{owner.describe()} is gone"
    state, start_ticks = stat
    if state in ("Z", "X"):
        return f"{owner.describe()} is dead (state {state})"
    if start_ticks != owner.start_ticks:
        return f"{owner.describe()} is gone (the id now names a process started later)"
    return None


def _same_machine(owner: HeartbeatOwner, here: HeartbeatOwner) -> bool:
    facts = (owner.boot_id, owner.pid_namespace, here.boot_id, here.pid_namespace)
    return (
        all(facts)
        and owner.host == here.host
        and owner.boot_id == here.boot_id
        and owner.pid_namespace == here.pid_namespace
    )
