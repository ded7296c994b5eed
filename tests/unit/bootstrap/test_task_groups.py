"""Bootstrap task groups: contiguous runs of source files balanced by bytes, at most one per task."""

from __future__ import annotations

from pyhudi.bootstrap.run import task_groups
from pyhudi.bootstrap.source import SourceJob


def _jobs(*sizes: int) -> list[SourceJob]:
    return [SourceJob(f"/src/f{i}.parquet", "", "", {}, size_bytes=s) for i, s in enumerate(sizes)]


def test_equal_files_split_evenly_in_order() -> None:
    assert task_groups(_jobs(*[100] * 20), 2) == [list(range(10)), list(range(10, 20))]


def test_a_large_file_gets_a_task_of_its_own() -> None:
    assert task_groups(_jobs(900, 10, 10, 10, 10, 10, 10, 10, 10, 10), 2) == [
        [0],
        list(range(1, 10)),
    ]


def test_never_more_tasks_than_files_and_every_file_once() -> None:
    groups = task_groups(_jobs(5, 0, 7), 8)
    assert [i for g in groups for i in g] == [0, 1, 2]
    assert len(groups) == 3


def test_unknown_sizes_count_as_equal() -> None:
    assert task_groups(_jobs(0, 0, 0, 0), 2) == [[0, 1], [2, 3]]
