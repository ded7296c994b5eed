"""docs/savepoints.md as written (its blocks are marked to run here), then the CLI's refusals and
the rest of its commands on the table the page made: a savepointed commit is not rolled back,
deleting its savepoint allows it, a restore to a missing savepoint changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.spark.test_readme import ROOT, page_blocks

import pyhudi
from pyhudi.cli.main import main
from pyhudi.model.instant import Action

PAGE = "docs/savepoints.md"
HERE = "tests/spark/test_savepoints_restore.py"


def _pyhudi(capsys, *args: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    """The `pyhudi` command in this process: exit code and what it wrote to stderr."""
    code = main(list(args))
    return code, capsys.readouterr().err


def _run_page(tmp_path: Path) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "docs"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    blocks = [b for b in page_blocks(PAGE) if b.test_file == HERE]
    assert [b.language for b in blocks] == ["python", "python", "python", "bash"]
    for block in blocks:
        code = block.code.replace("/data/", f"{tmp_path}/data/")
        if block.language == "python":
            exec(compile(code, f"{PAGE}:{block.line}", "exec"), namespace)
            continue
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-3000:]
        namespace["bash_output"] = done.stdout
    return namespace


def test_the_savepoint_page_runs_and_the_cli_refuses_what_it_must(spark, tmp_path, capsys):  # type: ignore[no-untyped-def]
    assert (ROOT / PAGE).is_file()
    page = _run_page(tmp_path)
    path = str(tmp_path / "data" / "trips")
    saved = page["saved"].instant_time  # type: ignore[attr-defined]
    restore = page["result"]
    assert restore.savepoint_time == saved and len(restore.rolled_back) == 1  # type: ignore[attr-defined]
    assert restore.metadata_table == "restored"  # type: ignore[attr-defined]
    table = pyhudi.HudiTable(path)
    commits = [i.time for i in table.commits()]
    nightly = commits[-1]
    assert commits.index(saved) == len(commits) - 2, "the write after the restore is the last"
    assert [(s.instant_time, s.comment) for s in table.savepoints()] == [
        (saved, "before the backfill"),
        (nightly, "nightly"),
    ]
    assert "nightly" in str(page["bash_output"])

    code, err = _pyhudi(capsys, "rollback", path, nightly)
    assert code == 2 and "is savepointed" in err
    code, err = _pyhudi(capsys, "savepoint", "restore", path, "20000101000000000")
    assert code == 2 and "no savepoint 20000101000000000" in err
    assert _pyhudi(capsys, "savepoint", "delete", path, nightly) == (0, "")
    assert _pyhudi(capsys, "rollback", path, nightly) == (0, "")
    table.refresh()
    assert [i.time for i in table.commits()][-1] == saved
    assert [s.instant_time for s in table.savepoints()] == [saved]
    assert [i.action for i in table.timeline].count(Action.ROLLBACK) == 1
    assert pyhudi.read_arrow(path).num_rows == 4
