"""`pyhudi.table.faults.fault_point` in real processes: SIGKILL, hang and pause, and a no-op."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = (
    "from pyhudi.table.faults import fault_point\n"
    "fault_point('write.after_inflight')\n"
    "print('passed', flush=True)\n"
)


def _run(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_fault_point_is_a_no_op_for_other_names(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    proc = _run({"PYHUDI_FAULT_POINT": "write.after_commit", "PYHUDI_FAULT_MARK": str(mark)})
    out, _ = proc.communicate(timeout=60)
    assert (proc.returncode, out.strip(), mark.exists()) == (0, "passed", False)


def test_fault_point_is_reached_when_one_of_several_names_is_its_own(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    points = "write.after_commit,write.after_inflight"
    proc = _run({"PYHUDI_FAULT_POINT": points, "PYHUDI_FAULT_MARK": str(mark)})
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and out == ""
    assert mark.read_text().split()[0] == "write.after_inflight"
    proc = _run({"PYHUDI_FAULT_POINT": "write.after,write.after_commit"})  # names, not prefixes
    out, _ = proc.communicate(timeout=60)
    assert (proc.returncode, out.strip()) == (0, "passed")


def test_fault_point_marks_then_sigkills_the_process(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    proc = _run({"PYHUDI_FAULT_POINT": "write.after_inflight", "PYHUDI_FAULT_MARK": str(mark)})
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and out == ""
    assert mark.read_text().split()[0] == "write.after_inflight"


def test_fault_point_hangs_until_the_test_kills_it(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    proc = _run(
        {
            "PYHUDI_FAULT_POINT": "write.after_inflight",
            "PYHUDI_FAULT_MARK": str(mark),
            "PYHUDI_FAULT_ACTION": "hang",
        }
    )
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert mark.exists() and proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL


def test_fault_point_pauses_until_released(tmp_path: Path) -> None:
    mark, release = tmp_path / "mark", tmp_path / "release"
    proc = _run(
        {
            "PYHUDI_FAULT_POINT": "write.after_inflight",
            "PYHUDI_FAULT_MARK": str(mark),
            "PYHUDI_FAULT_ACTION": "pause",
            "PYHUDI_FAULT_RELEASE": str(release),
        }
    )
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists() and proc.poll() is None
    release.touch()
    out, _ = proc.communicate(timeout=60)
    assert (proc.returncode, out.strip(), release.exists()) == (0, "passed", False)


def test_pause_without_a_release_file_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyhudi.exceptions import ConfigError
    from pyhudi.table.faults import fault_point

    monkeypatch.setenv("PYHUDI_FAULT_POINT", "clean.after_commit")
    monkeypatch.setenv("PYHUDI_FAULT_ACTION", "pause")
    monkeypatch.delenv("PYHUDI_FAULT_RELEASE", raising=False)
    monkeypatch.delenv("PYHUDI_FAULT_MARK", raising=False)
    with pytest.raises(ConfigError, match="PYHUDI_FAULT_RELEASE"):
        fault_point("clean.after_commit")
