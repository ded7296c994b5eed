"""Fault points: named places in a write or table service where a test can stop the process.

A crash-safety test starts a real writer process with `PYHUDI_FAULT_POINT=<name>`; when execution
reaches `fault_point("<name>")` the process kills itself with SIGKILL (no cleanup, no `finally`,
exactly like a lost machine). With `PYHUDI_FAULT_MARK=<file>` it first appends a line to that
file (`<name> <pid>`), so the test knows the point was reached. `PYHUDI_FAULT_POINT` may name
several points, comma-separated: operations running at once in one process (on different tables)
each stop at theirs, and the test kills the process once every one is marked (action `hang`).

`PYHUDI_FAULT_ACTION` chooses what happens at the point:

| action  | effect                                                                               |
|---------|--------------------------------------------------------------------------------------|
| `kill`  | (default) SIGKILL this process                                                       |
| `hang`  | sleep until killed: for points inside Spark tasks, where killing one Python worker   |
|         | only fails a task attempt that Spark retries, the test SIGKILLs the driver's group   |
| `pause` | wait until the file `PYHUDI_FAULT_RELEASE` exists, delete it, continue: a test       |
|         | interleaves two writers deterministically (a live, heartbeating write held open)     |

Without `PYHUDI_FAULT_POINT` set, a fault point costs one environment lookup.

Names: `write.after_requested`, `write.after_inflight`,
`write.during_data_files`, `write.after_data_files`, `write.after_commit`, and for
X in `compaction`, `clustering`, `clean`: `X.after_requested`, `X.after_inflight`,
`X.after_data_files`, `X.after_commit`; with a metadata table, `write.after_metadata_commit` and
`X.after_metadata_commit` (its deltacommit completed, the data instant not yet).
The metadata table's compaction: `metadata_compaction.after_requested`, `.after_inflight`,
`.after_base_files`, `.after_commit`. Archival: `archival.after_pending_files_deleted`, and on
versions 8/9 the LSM history's steps (`pyhudi.services.archival.lsm`). Upgrades
(`pyhudi.table.upgrade`): `upgrade.after_compaction`, `.before_metadata_table_deleted`,
`.during_timeline` (after each layout-2 file), `.after_timeline_written`, `.after_properties`
(an archived timeline moving into the LSM history passes the history's steps);
downgrades (`pyhudi.table.downgrade`): `downgrade.during_timeline`, `.after_timeline_written`,
`.after_properties` (and `upgrade.after_compaction`, their shared first step), and
`downgrade.after_archive_file` after each archive file the LSM history becomes
(`pyhudi.services.archival.migrate`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from pyhudi.exceptions import ConfigError

FAULT_POINT_ENV = "PYHUDI_FAULT_POINT"
FAULT_MARK_ENV = "PYHUDI_FAULT_MARK"
FAULT_ACTION_ENV = "PYHUDI_FAULT_ACTION"
FAULT_RELEASE_ENV = "PYHUDI_FAULT_RELEASE"
_POLL_S = 0.05


def fault_point(name: str) -> None:
    """Stop here (SIGKILL, hang or pause) when `PYHUDI_FAULT_POINT` names this point."""
    points = os.environ.get(FAULT_POINT_ENV)
    if not points or name not in points.split(","):
        return
    _mark(name)
    action = os.environ.get(FAULT_ACTION_ENV, "kill")
    if action == "pause":
        _wait_for_release(os.environ.get(FAULT_RELEASE_ENV, ""))
        return
    if action == "hang":
        while True:
            time.sleep(3600)
    os.kill(os.getpid(), signal.SIGKILL)


def _mark(name: str) -> None:
    mark = os.environ.get(FAULT_MARK_ENV)
    if not mark:
        return
    with open(mark, "a", encoding="utf-8") as handle:
        handle.write(f"{name} {os.getpid()}\n")
        handle.flush()
        os.fsync(handle.fileno())


def _wait_for_release(release: str) -> None:
    if not release:
        raise ConfigError(f"{FAULT_ACTION_ENV}=pause needs {FAULT_RELEASE_ENV} (a file path)")
    while not os.path.exists(release):
        time.sleep(_POLL_S)
    with contextlib.suppress(FileNotFoundError):  # released twice: fine
        os.remove(release)
