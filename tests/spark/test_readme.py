"""The README's code blocks run as written, so the documentation cannot drift from the API.

Every fenced block of README.md, in order, is either run here or marked with an HTML comment on
the line before it:

* `<!-- runs in tests/<file>.py ... -->`: the block needs its own deployment (a fresh user session,
  a Spark Connect server, a cluster, a Hive metastore) and that test runs it;
* `<!-- not run: <reason> -->`: not a pyhudi example (the Makefile targets).

Unmarked ```python blocks run one after the other in one namespace, in the shared local session
(the Quickstart's `local_session()` returns it); ```bash blocks run in bash with the venv's
`pyhudi` on the PATH, against the tables the Python blocks made. The README's example paths map to a
temporary folder: `/data/` -> `<tmp>/data/`, `/chk/` -> `<tmp>/chk/`. The metadata table examples
read tables Apache Hudi wrote: `/data/hudi_trips` and `/data/txns` are real tables of
tests/data/hudi-tables (HUDI_WRITTEN), unzipped there first.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.fixtures import unzip_table

import pyhudi

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- (runs in (tests/\S+?\.py)|not run: .+?).*-->\s*$")


@dataclass(frozen=True)
class Block:
    line: int
    language: str
    code: str
    marker: str | None
    test_file: str | None


def readme_blocks() -> list[Block]:
    text = (ROOT / "README.md").read_text()
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.match(before)
        blocks.append(
            Block(
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(1),
                code=match.group(2),
                marker=marker.group(1) if marker else None,
                test_file=marker.group(2) if marker else None,
            )
        )
    return blocks


#: README example paths that are tables Apache Hudi wrote (with a metadata table).
HUDI_WRITTEN = {"hudi_trips": "mor_avro__v8_trips_8i3u1d", "txns": "cow__v9_txns_simple_meta"}


def _unzip_hudi_written(data: Path) -> None:
    for name, fixture in HUDI_WRITTEN.items():
        shutil.move(str(unzip_table(fixture, data / "_zips")), str(data / name))


def _paths(code: str, tmp: Path) -> str:
    return code.replace("/data/", f"{tmp}/data/").replace("/chk/", f"{tmp}/chk/")


def test_every_block_is_run_here_or_marked_with_the_test_that_runs_it():
    blocks = readme_blocks()
    assert len(blocks) >= 15
    for block in blocks:
        if block.marker is None:
            assert block.language in ("python", "bash"), f"README line {block.line}: unmarked"
        elif block.test_file is not None:
            assert (ROOT / block.test_file).is_file(), (
                f"README line {block.line}: no {block.test_file}"
            )


def test_the_readme_python_and_cli_blocks_run_in_order(spark, tmp_path):
    namespace: dict[str, object] = {"__name__": "readme"}
    _unzip_hudi_written(tmp_path / "data")
    ran = []
    for block in readme_blocks():
        if block.marker is not None:
            continue
        code = _paths(block.code, tmp_path)
        started = time.monotonic()
        if block.language == "python":
            exec(compile(code, f"README.md:{block.line}", "exec"), namespace)
        else:
            _run_bash(code, tmp_path, block.line)
        print(f"README line {block.line}: {time.monotonic() - started:.1f} s")
        ran.append(block.language)
    assert (ran.count("python"), ran.count("bash")) == (15, 4)
    key, file_id = "334e26e9-8355-45cc-97c6-c31daf0df330", "036ded81-9ed4-479f-bcea-7145dfa0079b-0"
    assert namespace["trips"].lookup([key, "no-such-key"]) == {key: ("city=san_francisco", file_id)}
    data = tmp_path / "data"
    # what the blocks left behind: the Quickstart table, the bootstraps, the stream, the services
    assert pyhudi.read(spark, str(data / "trips")).count() == 3
    for name in ("trips_hudi", "trips_hudi_api", "trips_hudi_local", "trips_hudi_cli"):
        assert pyhudi.read(spark, str(data / name)).count() == 3, name
    assert pyhudi.read(spark, str(data / "events")).count() == 2
    actions = {i.action.value for i in pyhudi.HudiTable(str(data / "trips_mor")).commits()}
    assert "commit" in actions  # the README's compaction ran


def _run_bash(code: str, cwd: Path, line: int) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (
        f"README line {line}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
