"""A real Hudi table reads the same through the independent reader hudi-rs after pyhudi archives
part of its timeline (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.helpers.fixtures import unzip_table
from tests.helpers.oracle import hudi_rs_table, rows
from tests.helpers.timeline_builder_archival import clean

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.log.inspect import inspect_log
from pyhudi.config.archival import ArchivalConfig
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.services.archival.execute import archive
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import read_archived_instants

# A table needs at least max + 1 commits, and max > min >= 1.
KEEP_ONE = ArchivalConfig.from_options(
    {
        "hoodie.keep.min.commits": "1",
        "hoodie.keep.max.commits": "2",
        "hoodie.cleaner.commits.retained": "0",
    }
)


def two_commit_table(tmp_path: Path) -> TableContext:
    return TableContext.open(str(unzip_table("cow__v6_nonpartitioned", tmp_path)))


def empty_commit(ctx: TableContext) -> str:
    """What Hudi writes for an upsert of no rows (`hoodie.allow.empty.commit`, default true)."""
    schema = ctx.active.commit_metadata(ctx.active.timeline.commits().last).schema
    time = ctx.new_instant_time()
    requested = ctx.active.create_requested(time, Action.COMMIT)
    workload = CommitMetadata(operation_type=WriteOperationType.UPSERT)
    inflight = ctx.active.transition_to_inflight(requested, encode_commit_metadata(workload))
    done = CommitMetadata(
        operation_type=WriteOperationType.UPSERT, extra_metadata={"schema": schema}
    )
    ctx.active.complete(inflight, encode_commit_metadata(done))
    return time


@pytest.mark.parametrize("archive_both", [False, True], ids=["oldest", "both-data-commits"])
def test_hudi_rs_reads_the_same_rows_after_archival(tmp_path, archive_both):
    ctx = two_commit_table(tmp_path)
    first, second = ctx.active.timeline.commits().times()
    before = rows(hudi_rs_table(ctx.base_path))
    slices_before = ctx.view().latest_file_slices()
    empty_commit(ctx)
    if not archive_both:  # a clean that retains the second commit keeps it active
        clean(ctx, ctx.new_instant_time(), earliest_commit_to_retain=second)
    result = archive(ctx, KEEP_ONE)
    expected = [first, second] if archive_both else [first]
    assert [i.time for i in read_archived_instants(ctx)] == expected
    assert [i.time for i in result.archived] == expected
    assert inspect_log(result.archive_file, with_records=True).is_valid
    assert rows(hudi_rs_table(ctx.base_path)) == before
    assert ctx.view().latest_file_slices() == slices_before
