"""Real Hudi 0.15 tables (tests/data/hudi-tables, copy-on-write: no compaction, so no Spark)
upgraded to 9 and downgraded back to 6 by pyhudi: every instant kept with its action and state,
the same rows and commit metadata at each version (JSON, then Avro, then JSON again), a completed
replacecommit (insert overwrite table) included."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fixtures import unzip_table

import pyhudi
from pyhudi.table.context import TableContext

TABLES = [
    "cow__v6_complexkeygen_hivestyle",
    "cow__v6_simplekeygen_nonhivestyle_overwritetable",
    "cow__v6_timebasedkeygen_nonhivestyle",
]


def _instants(path: Path) -> list[tuple[str, str, str]]:
    timeline = TableContext.open(str(path)).active.timeline
    return [(i.time, i.action.completed_action.value, i.state.value) for i in timeline]


def _metadata(path: Path) -> dict[str, object]:
    ctx = TableContext.open(str(path))
    return {i.time: ctx.active.commit_metadata(i) for i in ctx.active.timeline.commits()}


@pytest.mark.parametrize("name", TABLES)
def test_a_hudi_table_goes_to_9_and_back_to_6_unchanged(tmp_path: Path, name: str) -> None:
    path = unzip_table(name, tmp_path)
    instants, metadata = _instants(path), _metadata(path)
    rows = pyhudi.read_arrow(str(path)).sort_by("_hoodie_record_key")

    result = pyhudi.upgrade_table(str(path), 9)
    assert (result.from_version, result.to_version) == (6, 9)
    assert result.timeline_files == 3 * len(instants)
    ctx = TableContext.open(str(path))
    assert ctx.config.version == 9 and ctx.config.timeline_layout_version == 2
    assert [i[:2] for i in _instants(path)] == [i[:2] for i in instants]
    assert all(i.completion_time for i in ctx.active.timeline.commits())
    assert _metadata(path) == metadata
    assert pyhudi.read_arrow(str(path)).sort_by("_hoodie_record_key").equals(rows)

    pyhudi.downgrade_table(str(path), 6)
    assert TableContext.open(str(path)).config.version == 6
    assert _instants(path) == instants
    assert _metadata(path) == metadata
    assert pyhudi.read_arrow(str(path)).sort_by("_hoodie_record_key").equals(rows)
