"""Asynchronous table services: a thread pool in the writer's process, on the same SparkSession.

Executions run in background threads (their Spark jobs in the `pyhudi-services` scheduler pool) so
the next ingestion commit never waits for them. One execution per service kind and table at a time;
a failure is logged and reported, and retried at a later trigger (its plan stays pending).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass
class ServiceRunner:
    table_uri: str
    executor: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(
            max_workers=3, thread_name_prefix="pyhudi-service"
        )
    )
    running: dict[str, Future] = field(default_factory=dict)
    outcomes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def submit(self, kind: str, action: Callable[[], object]) -> bool:
        """Start `action` unless a run of the same kind is still going; True when started."""
        with self.lock:
            current = self.running.get(kind)
            if current is not None and not current.done():
                return False
            self.running[kind] = self.executor.submit(self._guarded, kind, action)
            return True

    def _guarded(self, kind: str, action: Callable[[], object]) -> None:
        try:
            result = action()
            if result:
                self.outcomes.append(f"{kind}: {result}")
        except Exception as err:  # never let a service failure reach ingestion
            log.exception(
                "async %s of %s failed; it is retried at a later trigger", kind, self.table_uri
            )
            self.failures.append(f"{kind}: {err}")

    def wait(self, timeout: float | None = None) -> None:
        """Wait for every running service (bounded streams, shutdown, tests)."""
        with self.lock:
            futures = list(self.running.values())
        for future in futures:
            future.result(timeout=timeout)

    def busy(self) -> bool:
        with self.lock:
            return any(not f.done() for f in self.running.values())


_runners: dict[str, ServiceRunner] = {}
_runners_lock = threading.Lock()


def runner_for(table_uri: str) -> ServiceRunner:
    with _runners_lock:
        runner = _runners.get(table_uri)
        if runner is None:
            runner = _runners[table_uri] = ServiceRunner(table_uri)
        return runner
