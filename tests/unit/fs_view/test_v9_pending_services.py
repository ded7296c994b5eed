"""Pending compaction and clustering plans of table version 9 (Hudi 1.1) timelines: the Avro plans
decode and the file-system view sees which file groups they hold."""

from __future__ import annotations

import shutil

from pyhudi.fs_view.pending import pending_clustering_file_groups, pending_compaction_operations
from pyhudi.table.context import TableContext

NAME = "mor_avro__v9_txns_simple_nometa"
COMPACTION = "20260307135839895"
CLUSTERING = "20260307135840454"


def _without_completion(hudi_tables, tmp_path, instant: str) -> TableContext:
    root = tmp_path / "t"
    shutil.copytree(hudi_tables[NAME], root)
    timeline = root / ".hoodie" / "timeline"
    (completed,) = [p for p in timeline.iterdir() if p.name.startswith(f"{instant}_")]
    completed.unlink()
    return TableContext.open(str(root))


def test_completed_v9_services_leave_nothing_pending(hudi_tables):
    ctx = TableContext.open(str(hudi_tables[NAME]))
    assert pending_compaction_operations(ctx.active) == {}
    assert pending_clustering_file_groups(ctx.active) == {}


def test_pending_v9_compaction_plan_lists_its_file_groups(hudi_tables, tmp_path):
    ctx = _without_completion(hudi_tables, tmp_path, COMPACTION)
    operations = pending_compaction_operations(ctx.active)
    assert operations and set(operations.values()) == {COMPACTION}
    assert {p for p, _ in operations} <= {"region=apac", "region=eu", "region=us"}


def test_pending_v9_clustering_plan_lists_its_input_file_groups(hudi_tables, tmp_path):
    ctx = _without_completion(hudi_tables, tmp_path, CLUSTERING)
    groups = pending_clustering_file_groups(ctx.active)
    assert groups and set(groups.values()) == {CLUSTERING}
