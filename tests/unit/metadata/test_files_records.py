"""`files` partition records from data-table actions: folded over a real table's timeline they
give exactly the listing Hudi's own metadata table holds, and they build a readable v6 one."""

from __future__ import annotations

import shutil

import pytest
from tests.helpers.metadata import WITH_METADATA, committed_data_files

from pyhudi.codec.log.writer import encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import metadata_schema_json, write_metadata_hfile
from pyhudi.codec.metadata_records import ALL_PARTITIONS_KEY, data_partition, merge_records
from pyhudi.config import table as keys
from pyhudi.metadata import MetadataTable
from pyhudi.metadata.files_records import clean_files_records, commit_files_records
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext


def _fold(records, merged):
    for record in records:
        previous = merged.get(record.key)
        merged[record.key] = record if previous is None else merge_records(previous, record)
    return merged


@pytest.mark.parametrize("name", WITH_METADATA)
def test_commit_records_folded_over_the_timeline_equal_hudis_files_partition(hudi_tables, name):
    ctx = TableContext.open(str(hudi_tables[name]))
    merged: dict = {}
    for instant in ctx.active.timeline.write_timeline().completed():
        _fold(commit_files_records(ctx.active.commit_metadata(instant)), merged)
    listing = {
        data_partition(k): r.live_files for k, r in merged.items() if k != ALL_PARTITIONS_KEY
    }
    mdt = MetadataTable.open(ctx)
    assert listing == mdt.all_files()
    assert (
        sorted(map(data_partition, merged[ALL_PARTITIONS_KEY].live_files)) == mdt.all_partitions()
    )


def test_clean_records_delete_files_and_deleted_partitions():
    clean = {
        "partitionMetadata": {
            "p=1": {
                "deletePathPatterns": ["a.parquet", "p=1/b.parquet"],
                "isPartitionDeleted": False,
            },
            "p=2": {"deletePathPatterns": ["c.parquet"], "isPartitionDeleted": True},
        }
    }
    merged = _fold(
        [
            *commit_files_records_for(
                {"p=1": ["a.parquet", "b.parquet", "d.parquet"], "p=2": ["c.parquet"]}
            ),
            *clean_files_records(clean),
        ],
        {},
    )
    assert merged["p=1"].live_files == {"d.parquet": 1}
    assert merged["p=2"].live_files == {}
    assert merged[ALL_PARTITIONS_KEY].live_files == {"p=1": 0}


def commit_files_records_for(files: dict[str, list[str]]):
    from pyhudi.model.commit import CommitMetadata, WriteStat

    stats = {
        p: tuple(WriteStat(n.split("_")[0], f"{p}/{n}", p, file_size_bytes=1) for n in names)
        for p, names in files.items()
    }
    return commit_files_records(CommitMetadata(stats))


def test_a_metadata_table_built_from_a_v6_tables_commits_lists_its_files(hudi_tables, tmp_path):
    root = tmp_path / "v6"
    shutil.copytree(hudi_tables["cow__v6_complexkeygen_hivestyle"], root)
    data = TableContext.open(str(root))
    data.update_properties({keys.METADATA_PARTITIONS.key: "files"})
    mdt = TableContext.create(
        str(root / ".hoodie" / "metadata"),
        {
            "hoodie.table.name": "t_metadata",
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.table.base.file.format": "HFILE",
            "hoodie.table.recordkey.fields": "key",
        },
    )
    init, blocks = "00000000000000010", []
    for time in (init, *data.active.timeline.completed().times()):
        requested = mdt.active.create_requested(time, Action.DELTA_COMMIT)
        mdt.active.complete(mdt.active.transition_to_inflight(requested), b"{}")
        if time == init:
            continue
        records = commit_files_records(data.active.commit_metadata(data.active.timeline.find(time)))
        blocks.append(hfile_data_block(time, metadata_schema_json(), write_metadata_hfile(records)))
    files = root / ".hoodie" / "metadata" / "files"
    files.mkdir()
    base = f"files-0000_0-0-0_{init}.hfile"
    (files / base).write_bytes(write_metadata_hfile([], base_file_name=base))
    (files / f".files-0000_{init}.log.1_0-0-0").write_bytes(encode_blocks(blocks))

    table = MetadataTable.open(TableContext.open(str(root)))
    assert table.all_files() == committed_data_files(root)
    assert len(table.all_partitions()) >= 2 and all("=" in p for p in table.all_partitions())
