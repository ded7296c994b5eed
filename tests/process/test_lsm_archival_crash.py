"""Archival of a version 9 table (the LSM history) SIGKILLed at each of its steps: the table reads as
before, no instant is lost or counted twice, and the next archival finishes the job; killed before
the active files are gone, the history it leaves is the one an uninterrupted archival writes. The
table is a real Hudi 1.2 table (tests/data/hudi-tables) with a metadata table; no Spark."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from tests.helpers.fixtures import unzip_table

import pyhudi
from pyhudi.table.context import TableContext
from pyhudi.table.faults import FAULT_MARK_ENV, FAULT_POINT_ENV
from pyhudi.timeline.archived import whole_timeline

FIRST = {
    "hoodie.keep.min.commits": "8",
    "hoodie.keep.max.commits": "9",
    "hoodie.cleaner.commits.retained": "1",
}
#: The second archival moves 3 more commits, compacts both layer-0 files and cleans manifest_1.
SECOND = {
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.timeline.compaction.batch.size": "2",
    "hoodie.timeline.manifest.retained.versions": "1",
}
BEFORE_DELETES = [
    "archival.after_history_file",
    "archival.after_manifest",
    "archival.after_version_deleted",
    "archival.after_pending_files_deleted",
]
AFTER_DELETES = [
    "archival.after_compacted_file",
    "archival.after_compaction",
    "archival.after_manifests_cleaned",
]


def _history(path: Path) -> dict[str, bytes]:
    folder = path / ".hoodie/timeline/history"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _active(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie/timeline").iterdir() if p.is_file())


def _instants(path: Path) -> list[tuple[str, str]]:
    return [(i.time, i.action.value) for i in whole_timeline(TableContext.open(str(path)))]


def _rows(path: Path) -> pa.Table:
    return pyhudi.read_arrow(str(path)).sort_by("_hoodie_record_key")


def _archive_killed_at(path: Path, point: str, mark: Path) -> None:
    options = [arg for key, value in SECOND.items() for arg in ("-o", f"{key}={value}")]
    done = subprocess.run(
        [sys.executable, "-m", "pyhudi", "archive", str(path), *options],
        env={**os.environ, FAULT_POINT_ENV: point, FAULT_MARK_ENV: str(mark)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert mark.read_text().split()[0] == point


@pytest.mark.parametrize("point", BEFORE_DELETES + AFTER_DELETES)
def test_archival_killed_at_each_step_loses_nothing_and_is_finished_next_time(tmp_path, point):  # type: ignore[no-untyped-def]
    path = unzip_table("cow__v9_txns_simple_meta", tmp_path / "killed")
    pyhudi.HudiTable(str(path)).archive(FIRST)
    reference = tmp_path / "reference"
    shutil.copytree(path, reference)
    instants, rows = _instants(path), _rows(path)
    assert pyhudi.HudiTable(str(reference)).archive(SECOND).archived

    _archive_killed_at(path, point, tmp_path / "mark")
    assert _instants(path) == instants  # each once, archived or active
    assert _rows(path).equals(rows)

    pyhudi.HudiTable(str(path)).archive(SECOND)
    assert _instants(path) == instants
    assert _active(path) == _active(reference)
    if point in BEFORE_DELETES:
        assert _history(path) == _history(reference)
    assert _rows(path).equals(rows)
