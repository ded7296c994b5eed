"""The in-process commit lock of a table.

pyhudi runs one writer per table, with its async table services in the same process. A write holds
the table's lock from the start of its instant to its commit; a service takes it only to check for
conflicts and commit. So a clustering never completes between a write's index lookup and that
write's commit, and its conflict check sees every write that touched its input file groups.
"""

from __future__ import annotations

import threading

_locks: dict[str, threading.RLock] = {}
_guard = threading.Lock()


def table_lock(table_uri: str) -> threading.RLock:
    with _guard:
        lock = _locks.get(table_uri)
        if lock is None:
            lock = _locks[table_uri] = threading.RLock()
        return lock
