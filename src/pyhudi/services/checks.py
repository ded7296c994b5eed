"""Service plans checked before execution: every partition they write is a folder of the table.

A plan on the timeline may come from another tool; its partition paths are checked with the same
rules as incoming partition values (`pyhudi.storage.segments`) before the instant moves to
inflight, so a bad plan fails with its instant named and nothing written.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyhudi.exceptions import CorruptFileError
from pyhudi.storage.segments import partition_path_problem


def check_plan_partitions(partitions: Iterable[str], instant: object, service: str) -> None:
    """`CorruptFileError` naming the instant and the partition path a plan must not write."""
    for partition in partitions:
        if not partition:
            continue  # a non-partitioned table
        problem = partition_path_problem(partition)
        if problem is not None:
            raise CorruptFileError(
                f"{service} plan {instant} names partition path {partition!r}, which has "
                f"{problem}; refusing to execute it (nothing was written)"
            )
