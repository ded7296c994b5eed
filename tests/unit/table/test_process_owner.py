"""Whether a heartbeat's owner provably died: only on this machine, only from `/proc` facts."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pyhudi.codec.heartbeat import HeartbeatOwner
from pyhudi.table.process_owner import process_stat, this_process, why_owner_is_dead

HERE = HeartbeatOwner("node-1", 100, 5_000, "boot-a", "pid:[1]")


def _fake_proc(root: Path, pid: int, state: str, start_ticks: int) -> str:
    """A `/proc` with one process; its name holds a space and a parenthesis, as comm may."""
    (root / str(pid)).mkdir(parents=True)
    rest = " ".join([state, *["0"] * 18, str(start_ticks), "0"])
    (root / str(pid) / "stat").write_text(f"{pid} (py (worker) 1) {rest}\n")
    return str(root)


def test_this_process_names_host_pid_and_its_start_time():
    me = this_process()
    assert me.pid == os.getpid() and me.host
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here: the owner has no start time")
    assert me.start_ticks == process_stat(os.getpid())[1]  # type: ignore[index]
    assert me.boot_id and me.pid_namespace
    assert why_owner_is_dead(me) is None


def test_owner_whose_pid_is_gone_is_dead(tmp_path):
    proc = _fake_proc(tmp_path, 7, "S", 1)
    owner = dataclasses.replace(HERE, pid=8)
    assert why_owner_is_dead(owner, proc_root=proc, here=HERE) == "pid 8 on node-1 is gone"


def test_owner_whose_pid_now_names_a_later_process_is_dead(tmp_path):
    proc = _fake_proc(tmp_path, 8, "S", 9_999)  # pid 8 reused by a process started later
    owner = dataclasses.replace(HERE, pid=8, start_ticks=6_000)
    reason = why_owner_is_dead(owner, proc_root=proc, here=HERE)
    assert reason is not None and "started later" in reason


def test_owner_that_is_a_zombie_is_dead(tmp_path):
    proc = _fake_proc(tmp_path, 8, "Z", 6_000)
    owner = dataclasses.replace(HERE, pid=8, start_ticks=6_000)
    assert "dead" in (why_owner_is_dead(owner, proc_root=proc, here=HERE) or "")


def test_owner_still_running_is_not_dead(tmp_path):
    proc = _fake_proc(tmp_path, 8, "S", 6_000)
    owner = dataclasses.replace(HERE, pid=8, start_ticks=6_000)
    assert why_owner_is_dead(owner, proc_root=proc, here=HERE) is None


@pytest.mark.parametrize(
    "owner",
    [
        None,  # Hudi's empty heartbeat
        dataclasses.replace(HERE, host="node-2"),  # another host
        dataclasses.replace(HERE, boot_id="boot-b"),  # same name, another machine or boot
        dataclasses.replace(HERE, pid_namespace="pid:[2]"),  # another container
        dataclasses.replace(HERE, start_ticks=None),  # written where /proc was absent
        dataclasses.replace(HERE, boot_id=None, pid_namespace=None),
    ],
)
def test_owner_not_provably_on_this_machine_is_never_dead(tmp_path, owner):
    proc = str(tmp_path)  # an empty /proc: every pid looks gone
    assert why_owner_is_dead(owner, proc_root=proc, here=HERE) is None


def test_without_proc_here_nothing_is_dead(tmp_path):
    here = HeartbeatOwner("node-1", 100)  # e.g. macOS: no boot id, no namespace
    owner = dataclasses.replace(HERE, pid=8)
    assert why_owner_is_dead(owner, proc_root=str(tmp_path / "none"), here=here) is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_real_child_is_alive_until_killed_then_dead():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stat = process_stat(child.pid)
        assert stat is not None
        owner = dataclasses.replace(this_process(), pid=child.pid, start_ticks=stat[1])
        assert why_owner_is_dead(owner) is None
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert why_owner_is_dead(owner) == f"{owner.describe()} is gone"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
