"""Reads (snapshot, read-optimized, time travel, incremental) list files through the metadata table's `files` partition when `hoodie.metadata.enable` is
true (the reader default, as Hudi's) and the table lists `files` in
`hoodie.table.metadata.partitions`: the plan is the one a directory listing gives, on every real
table with a metadata table, and no data partition is listed on storage."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from tests.helpers.metadata import WITH_METADATA

from pyhudi.metadata import reads_use_metadata
from pyhudi.reader.planner import ReadPlan, plan_read
from pyhudi.storage import FileStatus, Storage
from pyhudi.table.context import TableContext

OFF = {"hoodie.metadata.enable": "false"}


@dataclass(frozen=True)
class CountingStorage(Storage):
    """Local storage that records every folder it lists (the real files, nothing faked)."""

    listed: list[str] = field(default_factory=list, compare=False)

    def list_dir(self, path: str) -> list[FileStatus]:
        self.listed.append(path)
        return super().list_dir(path)

    def walk_files(self, path: str) -> Iterator[FileStatus]:
        self.listed.append(path)
        return super().walk_files(path)


def _slices(plan: ReadPlan) -> list[tuple]:
    return sorted(
        (
            s.partition_path,
            s.file_id,
            s.base_instant_time,
            s.base_file.file_name if s.base_file else None,
            tuple(log.file_name for log in s.log_files),
        )
        for s in (*plan.base_only, *plan.with_logs, *plan.stitched)
    )


@pytest.mark.parametrize("name", WITH_METADATA)
def test_plans_from_the_metadata_listing_equal_plans_from_storage(hudi_tables, name):
    ctx = TableContext.open(str(hudi_tables[name]))
    assert reads_use_metadata(ctx, None) and not reads_use_metadata(ctx, OFF)
    instants = [None, *ctx.active.timeline.completed().times()]
    for query in ("snapshot", "read_optimized"):
        for as_of in instants:
            options = {"hoodie.datasource.query.type": query}
            if as_of:
                options["as.of.instant"] = as_of
            listed = plan_read(ctx, options)
            stored = plan_read(ctx, {**options, **OFF})
            assert _slices(listed) == _slices(stored), (query, as_of)
            assert listed.visible_instants == stored.visible_instants
    times = instants[1:]
    for begin, end in zip(times, times[2:]):
        window = {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": begin,
            "hoodie.datasource.read.end.instanttime": end,
        }
        listed, stored = plan_read(ctx, window), plan_read(ctx, {**window, **OFF})
        assert _slices(listed) == _slices(stored), (begin, end)
        assert listed.commit_times == stored.commit_times
    assert _slices(plan_read(ctx))  # something was read


@pytest.mark.parametrize("name", ["mor_avro__v8_trips_8i3u1d", "cow__v9_txns_simple_meta"])
def test_a_metadata_listed_read_lists_no_data_partition_on_storage(hudi_tables, name):
    root = str(hudi_tables[name])
    storage = CountingStorage(Storage.for_uri(root)[0].fs)
    ctx = TableContext.open_at(storage, root)
    storage.listed.clear()
    plan = plan_read(ctx)
    assert _slices(plan)
    meta = f"{root}/.hoodie"
    assert storage.listed and all(p.startswith(meta + "/") for p in storage.listed)
    storage.listed.clear()
    plan_read(ctx, OFF)
    assert root in storage.listed  # without the metadata table the table folder is walked


def test_tables_without_a_files_partition_list_storage(hudi_tables, tmp_path):
    assert not reads_use_metadata(
        TableContext.open(str(hudi_tables["cow__v9_txns_simple_nometa"])), None
    )
    root = tmp_path / "table"
    shutil.copytree(hudi_tables["mor_avro__v8_trips_8i3u1d"], root)
    ctx = TableContext.open(str(root))
    ctx.update_properties({"hoodie.table.metadata.partitions": "record_index"})
    assert not reads_use_metadata(TableContext.open(str(root)), None)
    assert reads_use_metadata(ctx, {"hoodie.metadata.enable": "true"}) is False
