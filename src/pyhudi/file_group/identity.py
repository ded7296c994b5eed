"""Who is writing: the running Spark task's partition id and Hudi write token (or a local task's)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pyhudi.codec.file_names import (
    make_write_token,
)

_LOCAL = threading.local()


@contextmanager
def local_task(task_id: int) -> Iterator[None]:
    """Run the enclosed work as local task `task_id` (a thread standing in for a Spark task)."""
    _LOCAL.task_id = task_id
    try:
        yield
    finally:
        del _LOCAL.task_id


def task_identity() -> tuple[int, str]:
    """(task partition id, write token) of the running Spark task (or local task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:  # a local task, or outside Spark (unit tests)
        task_id = getattr(_LOCAL, "task_id", 0)
        return task_id, make_write_token(task_id, 0, 0)

    return context.partitionId(), make_write_token(
        context.partitionId(), context.stageId(), context.taskAttemptId()
    )
