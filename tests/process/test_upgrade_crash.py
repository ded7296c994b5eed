"""An upgrade (6 -> 9) or a downgrade (9 -> 6) SIGKILLed at each of its steps leaves a table that
reads at one version or the other, never between: the same instants, the same rows; the next run
finishes it, to the very timeline an uninterrupted one writes. The table is a real Hudi 0.15
table (tests/data/hudi-tables), changed by the CLI in a child process; no Spark."""

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
from pyhudi.codec.archived_entry import decode_archive_log
from pyhudi.codec.avro_schemas import decode_container
from pyhudi.table.context import TableContext
from pyhudi.table.downgrade import ARCHIVE_MARKER
from pyhudi.table.faults import FAULT_MARK_ENV, FAULT_POINT_ENV

#: (upgrade.after_compaction: before anything changed, on this copy-on-write table)
POINTS = [
    "upgrade.during_timeline",
    "upgrade.after_timeline_written",
    "upgrade.after_properties",
]


DOWNGRADE_POINTS = [
    "downgrade.during_timeline",
    "downgrade.after_properties",
]


def _upgrade(
    path: Path,
    env: dict[str, str] | None = None,
    *,
    action: str = "upgrade",
    to: int = 9,
    extra: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pyhudi",
            "table",
            action,
            str(path),
            "--to",
            str(to),
            *(extra or []),
        ],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _instants(path: Path) -> list[tuple[str, str, str]]:
    timeline = TableContext.open(str(path)).active.timeline
    return [(i.time, i.action.completed_action.value, i.state.value) for i in timeline]


def _rows(path: Path) -> pa.Table:
    return pyhudi.read_arrow(str(path)).sort_by("_hoodie_record_key")


def _timeline_files(path: Path, folder: str = ".hoodie/timeline") -> list[str]:
    return sorted(p.name for p in (path / folder).iterdir() if p.is_file() and p.name[0].isdigit())


@pytest.mark.parametrize("point", POINTS)
def test_an_upgrade_killed_at_each_step_reads_at_one_version(tmp_path: Path, point: str) -> None:
    path = unzip_table("cow__v6_simplekeygen_nonhivestyle", tmp_path / "killed")
    reference = tmp_path / "reference"
    shutil.copytree(path, reference)  # modification times kept: the same completion times
    instants, rows = _instants(path), _rows(path)

    mark = tmp_path / "mark"
    done = _upgrade(path, {FAULT_POINT_ENV: point, FAULT_MARK_ENV: str(mark)})
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert mark.read_text().split()[0] == point
    version = TableContext.open(str(path)).config.version
    assert version == (9 if point == "upgrade.after_properties" else 6)
    assert _instants(path) == instants
    assert _rows(path).equals(rows)

    assert _upgrade(path).returncode == 0
    assert _upgrade(reference).returncode == 0
    for table in (path, reference):
        assert TableContext.open(str(table)).config.version == 9
        assert _instants(table) == instants
        assert _rows(table).equals(rows)
    assert _timeline_files(path) == _timeline_files(reference)
    assert not [p for p in (path / ".hoodie").iterdir() if p.is_file() and p.name[0].isdigit()]
    for name in _timeline_files(path):  # the same content (Avro: but its random sync markers)
        mine, theirs = ((t / ".hoodie/timeline" / name).read_bytes() for t in (path, reference))
        assert _content(mine) == _content(theirs), name


def _content(data: bytes) -> object:
    return decode_container(data) if data.startswith(b"Obj\x01") else data


@pytest.mark.parametrize("point", DOWNGRADE_POINTS)
def test_a_downgrade_killed_at_each_step_reads_at_one_version(tmp_path: Path, point: str) -> None:
    path = unzip_table("cow__v6_simplekeygen_nonhivestyle", tmp_path / "killed")
    pyhudi.upgrade_table(str(path), 9)
    reference = tmp_path / "reference"
    shutil.copytree(path, reference)
    instants, rows = _instants(path), _rows(path)

    mark = tmp_path / "mark"
    env = {FAULT_POINT_ENV: point, FAULT_MARK_ENV: str(mark)}
    done = _upgrade(path, env, action="downgrade", to=6)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert mark.read_text().split()[0] == point
    version = TableContext.open(str(path)).config.version
    assert version == (6 if point == "downgrade.after_properties" else 9)
    assert [i[:2] for i in _instants(path)] == [i[:2] for i in instants]
    assert _rows(path).equals(rows)

    assert _upgrade(path, action="downgrade", to=6).returncode == 0
    assert _upgrade(reference, action="downgrade", to=6).returncode == 0
    for table in (path, reference):
        assert TableContext.open(str(table)).config.version == 6
        assert [i[:2] for i in _instants(table)] == [i[:2] for i in instants]
        assert _rows(table).equals(rows)
        assert not _timeline_files(table)
    assert _timeline_files(path, ".hoodie") == _timeline_files(reference, ".hoodie")


def test_an_upgrade_killed_while_moving_the_archive_reads_at_version_6(tmp_path: Path) -> None:
    """Killed once the archived timeline's first history file and manifest are written (not yet
    `_version_`): still version 6 with its archive; the next run writes the history anew."""
    path = unzip_table("cow__v6_simplekeygen_nonhivestyle_overwritetable", tmp_path / "killed")
    archive = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}
    pyhudi.HudiTable(str(path)).archive.run({**archive, "hoodie.cleaner.commits.retained": "0"})
    archived = [(i.time, i.action) for i in pyhudi.HudiTable(str(path)).archived_timeline()]
    assert len(archived) == 2
    reference = tmp_path / "reference"
    shutil.copytree(path, reference)
    instants, rows = _instants(path), _rows(path)

    mark = tmp_path / "mark"
    point = "archival.after_manifest"
    done = _upgrade(path, {FAULT_POINT_ENV: point, FAULT_MARK_ENV: str(mark)})
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert mark.read_text().split()[0] == point
    assert TableContext.open(str(path)).config.version == 6
    assert (path / ".hoodie/timeline/history/manifest_1").exists()
    assert [(i.time, i.action) for i in pyhudi.HudiTable(str(path)).archived_timeline()] == archived
    assert _instants(path) == instants and _rows(path).equals(rows)

    assert _upgrade(path).returncode == 0
    assert _upgrade(reference).returncode == 0
    history = ".hoodie/timeline/history"
    names = [sorted(p.name for p in (t / history).iterdir()) for t in (path, reference)]
    assert names[0] == names[1] and "manifest_2" not in names[0], names
    for table in (path, reference):
        upgraded = pyhudi.HudiTable(str(table))
        assert [(i.time, i.action) for i in upgraded.archived_timeline()] == archived
        assert _rows(table).equals(rows)


def test_a_downgrade_killed_while_writing_the_archive_reads_at_version_9(tmp_path: Path) -> None:
    """Killed after the first archive file the LSM history's instants go to (a batch of one): still
    version 9 with its history; the next run deletes that file (its marker recorded the highest
    version before it) and writes every instant once."""
    path = unzip_table("cow__v6_simplekeygen_nonhivestyle_overwritetable", tmp_path / "killed")
    archive = {"hoodie.keep.min.commits": "1", "hoodie.keep.max.commits": "2"}
    pyhudi.HudiTable(str(path)).archive.run({**archive, "hoodie.cleaner.commits.retained": "0"})
    pyhudi.upgrade_table(str(path), 9)
    archived = [(i.time, i.action) for i in pyhudi.HudiTable(str(path)).archived_timeline()]
    assert len(archived) == 2
    folder = path / ".hoodie" / "archived"
    old = sorted(p.name for p in folder.iterdir())  # the upgrade leaves the v6 archive
    instants, rows = _instants(path), _rows(path)

    mark = tmp_path / "mark"
    point = "downgrade.after_archive_file"
    env = {FAULT_POINT_ENV: point, FAULT_MARK_ENV: str(mark)}
    batch = ["-o", "hoodie.commits.archival.batch=1"]
    done = _upgrade(path, env, action="downgrade", to=6, extra=batch)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert mark.read_text().split()[0] == point
    assert TableContext.open(str(path)).config.version == 9
    written = sorted(p.name for p in folder.iterdir() if p.name not in old)
    assert written == [f".commits_.archive.{len(old) + 1}_1-0-1", ARCHIVE_MARKER], written
    assert [(i.time, i.action) for i in pyhudi.HudiTable(str(path)).archived_timeline()] == archived
    assert _instants(path) == instants and _rows(path).equals(rows)

    assert _upgrade(path, action="downgrade", to=6, extra=batch).returncode == 0
    assert TableContext.open(str(path)).config.version == 6
    written = sorted(p.name for p in folder.iterdir() if p.name not in old)
    assert written == [f".commits_.archive.{len(old) + k}_1-0-1" for k in (1, 2)], written
    entries = [e for name in written for e in decode_archive_log((folder / name).read_bytes())]
    assert [e["commitTime"] for e in entries] == sorted(t for t, _ in archived)
    assert [(i.time, i.action) for i in pyhudi.HudiTable(str(path)).archived_timeline()] == archived
    assert [i[:2] for i in _instants(path)] == [i[:2] for i in instants]
    assert _rows(path).equals(rows)
