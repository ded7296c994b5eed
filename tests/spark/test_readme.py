"""The code blocks of README.md and docs/*.md run as written, so the documentation cannot drift
from the API.

Every fenced block of each page, in order, is either run here or marked with an HTML comment on
the line before it:

* `<!-- runs in tests/<file>.py ... -->`: the block needs its own deployment (a fresh user session,
  a Spark Connect server, a cluster, a Hive metastore) and that test runs it;
* `<!-- not run: <reason> -->`: not a pyhudi example (the Makefile targets, `pip install`).

Unmarked ```python blocks of one page run one after the other in one namespace (one per page), in
the shared local session (the pages' `local_session()` returns it); ```bash blocks run in bash with
the venv's `pyhudi` on the PATH, against the tables the page's Python blocks made. Each page gets
its own temporary folder: the example paths map to it (`/data/` -> `<tmp>/data/`, `/chk/` ->
`<tmp>/chk/`), and so does `tempfile.mkdtemp()` (the README's Quickstart). The metadata table
examples read tables Apache Hudi wrote: `/data/hudi_trips` and `/data/txns` are real tables of
tests/data/hudi-tables (HUDI_WRITTEN), unzipped there first when the page names them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.helpers.fixtures import unzip_table
from tests.helpers.pyspark_versions import needs_catalog_tables

import pyhudi

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- (runs in (tests/\S+?\.py)|not run: .+?).*-->\s*$")
#: Every page whose blocks are checked: the README and each docs page.
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    line: int
    language: str
    code: str
    marker: str | None
    test_file: str | None


def page_blocks(page: str) -> list[Block]:
    """The fenced blocks of one page (a path relative to the repository), in order."""
    text = (ROOT / page).read_text()
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


def _runs_here(page: str) -> bool:
    return any(block.marker is None for block in page_blocks(page))


#: Example paths that are tables Apache Hudi wrote (with a metadata table).
HUDI_WRITTEN = {"hudi_trips": "mor_avro__v8_trips_8i3u1d", "txns": "cow__v9_txns_simple_meta"}


def _unzip_hudi_written(data: Path, text: str) -> None:
    for name, fixture in HUDI_WRITTEN.items():
        if f"/data/{name}" in text:
            shutil.move(str(unzip_table(fixture, data / "_zips")), str(data / name))


def _paths(code: str, tmp: Path) -> str:
    return code.replace("/data/", f"{tmp}/data/").replace("/chk/", f"{tmp}/chk/")


def _count(spark, path: Path) -> int:  # type: ignore[no-untyped-def]
    return pyhudi.read(spark, str(path)).count()


def _check_readme(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    path = namespace["path"]
    assert str(path).startswith(tempfile.gettempdir())
    rows = pyhudi.read(spark, path, filters=[("city", "=", "nyc")]).collect()
    assert sorted(r.uuid for r in rows) == ["id-3", "id-4"]  # the pruning example finds rows
    assert sorted(r.uuid for r in pyhudi.read(spark, path).collect()) == ["id-1", "id-3", "id-4"]


def _check_writing(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    assert _count(spark, data / "trips") == 3  # the overwrite of the Spark API block


def _check_migrating(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    rows = pyhudi.read(spark, str(data / "migrated_trips")).select("uuid", "fare").collect()
    assert sorted(tuple(r) for r in rows) == [("id-1", 11.0), ("id-3", 6.0)]


def _check_services(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    actions = {i.action.value for i in pyhudi.HudiTable(str(data / "trips_mor")).commits()}
    assert "commit" in actions  # the compaction ran


def _check_streaming(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    assert _count(spark, data / "events") == 2


def _check_bootstrap(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    for name in ("trips_hudi", "trips_hudi_api", "trips_hudi_local", "trips_hudi_cli"):
        assert _count(spark, data / name) == 3, name


def _check_metadata(spark, namespace: dict[str, Any], data: Path) -> None:  # type: ignore[no-untyped-def]
    key, file_id = "334e26e9-8355-45cc-97c6-c31daf0df330", "036ded81-9ed4-479f-bcea-7145dfa0079b-0"
    assert namespace["trips"].lookup([key, "no-such-key"]) == {key: ("city=san_francisco", file_id)}
    assert _count(spark, data / "trips_mdt") == 3


#: What each page's blocks leave behind, checked after they ran.
CHECKS: dict[str, Callable[..., None]] = {
    "README.md": _check_readme,
    "docs/writing.md": _check_writing,
    "docs/migrating.md": _check_migrating,
    "docs/table-services.md": _check_services,
    "docs/streaming.md": _check_streaming,
    "docs/bootstrap.md": _check_bootstrap,
    "docs/metadata-table.md": _check_metadata,
}
#: (python, bash) blocks run per page: a block lost to a broken fence shows here.
RUN_COUNTS = {
    "docs/archival.md": (1, 0),
    "docs/dml.md": (4, 0),
    "README.md": (1, 0),
    "docs/bootstrap.md": (2, 1),
    "docs/cdc.md": (2, 0),
    "docs/cli.md": (2, 1),
    "docs/concurrency.md": (3, 1),
    "docs/merge-on-read.md": (2, 0),
    "docs/migrating.md": (3, 0),
    "docs/metadata-table.md": (7, 2),
    "docs/reading.md": (5, 0),
    "docs/streaming.md": (2, 0),
    "docs/table-services.md": (3, 0),
    "docs/table-versions.md": (2, 1),
    "docs/writing.md": (6, 0),
}


@pytest.mark.parametrize("page", PAGES)
def test_every_block_is_run_here_or_marked_with_the_test_that_runs_it(page):
    for block in page_blocks(page):
        if block.marker is None:
            assert block.language in ("python", "bash"), f"{page} line {block.line}: unmarked"
        elif block.test_file is not None:
            assert (ROOT / block.test_file).is_file(), (
                f"{page} line {block.line}: no {block.test_file}"
            )


def test_every_page_that_runs_blocks_is_counted():
    assert sorted(p for p in PAGES if _runs_here(p)) == sorted(RUN_COUNTS)
    assert sum(len(page_blocks(p)) for p in PAGES) >= 40


#: Pages whose blocks make catalog tables of the `hudi` format (pyspark 4 only).
CATALOG_PAGES = {"docs/dml.md"}


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=needs_catalog_tables) if p in CATALOG_PAGES else p
        for p in PAGES
        if _runs_here(p)
    ],
)
def test_the_page_python_and_cli_blocks_run_in_order(spark, tmp_path, monkeypatch, page):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the README's mkdtemp()
    namespace: dict[str, object] = {"__name__": "docs"}
    data = tmp_path / "data"
    _unzip_hudi_written(data, (ROOT / page).read_text())
    ran = []
    for block in page_blocks(page):
        if block.marker is not None:
            continue
        code = _paths(block.code, tmp_path)
        started = time.monotonic()
        if block.language == "python":
            exec(compile(code, f"{page}:{block.line}", "exec"), namespace)
        else:
            _run_bash(code, tmp_path, f"{page} line {block.line}")
        print(f"{page} line {block.line}: {time.monotonic() - started:.1f} s")
        ran.append(block.language)
    assert (ran.count("python"), ran.count("bash")) == RUN_COUNTS[page]
    if page in CHECKS:
        CHECKS[page](spark, namespace, data)


def _run_bash(code: str, cwd: Path, where: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{where}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
