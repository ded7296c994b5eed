"""A table-version-6 metadata table as Hudi 0.14 lays it out (file group `files-0000`, log files
named by their base instant, blocks appended per deltacommit, a rollback command block), built with
pyhudi's metadata HFile writer on a real v6 data table, read back through `MetadataTable`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.helpers.mdt_builder import MDT_PROPS

from pyhudi.codec.log.writer import encode_blocks, hfile_data_block, rollback_block
from pyhudi.codec.metadata_hfile import (
    file_list_record,
    metadata_schema_json,
    partition_list_record,
    write_metadata_hfile,
)
from pyhudi.config import table as keys
from pyhudi.metadata import MetadataTable
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

T1, T2 = "20240418172802262", "20240418172804498"  # the fixture's two commits
ROLLED_BACK, ROLLBACK, FAILED = "20240418172803000", "20240418172803500", "20240418172805000"
INIT = "00000000000000010"  # Hudi 0.14's metadata-table initialisation instant


def _disk(root: Path, instants: set[str]) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for partition in ("10", "20", "30"):
        for name in sorted(os.listdir(root / partition)):
            if name.endswith(".parquet") and name.rsplit("_", 1)[1][:17] in instants:
                found.setdefault(partition, {})[name] = (root / partition / name).stat().st_size
    return found


def _complete(ctx: TableContext, time: str, action: Action) -> None:
    requested = ctx.active.create_requested(time, action)
    ctx.active.complete(ctx.active.transition_to_inflight(requested), b"{}")


@pytest.fixture
def v6_table(hudi_tables, tmp_path) -> Path:
    root = tmp_path / "v6"
    shutil.copytree(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], root)
    data = TableContext.open(str(root))
    data.update_properties({keys.METADATA_PARTITIONS.key: "files"})
    _complete(data, ROLLBACK, Action.ROLLBACK)  # the data write ROLLED_BACK was rolled back
    failed = data.active.create_requested(FAILED, Action.COMMIT)
    data.active.transition_to_inflight(failed)  # a data write that never completed

    mdt = TableContext.create(str(root / ".hoodie" / "metadata"), MDT_PROPS)
    for time in (INIT, ROLLED_BACK, T2, FAILED):
        _complete(mdt, time, Action.DELTA_COMMIT)
    _complete(mdt, ROLLBACK, Action.ROLLBACK)
    first = _disk(root, {T1})
    base = [
        partition_list_record(first),
        file_list_record("10", first["10"]),
        file_list_record("20", {**first["20"], "x.parquet": 5}),
    ]
    second = _disk(root, {T2})
    schema = metadata_schema_json()
    blocks = [
        hfile_data_block(
            ROLLED_BACK,
            schema,
            write_metadata_hfile([file_list_record("10", {"rolled.parquet": 9})]),
        ),
        rollback_block(ROLLBACK, ROLLED_BACK),
        hfile_data_block(
            T2,
            schema,
            write_metadata_hfile(
                [
                    partition_list_record(["30"]),
                    file_list_record("10", second["10"]),
                    file_list_record("20", deleted=["x.parquet"]),
                    file_list_record("30", second["30"]),
                ]
            ),
        ),
        hfile_data_block(
            FAILED, schema, write_metadata_hfile([file_list_record("20", {"ghost.parquet": 1})])
        ),
    ]
    files = root / ".hoodie" / "metadata" / "files"
    files.mkdir()
    name = f"files-0000_0-0-0_{INIT}.hfile"
    (files / name).write_bytes(write_metadata_hfile(base, base_file_name=name))
    (files / f".files-0000_{INIT}.log.1_0-0-0").write_bytes(encode_blocks(blocks))
    return root


def test_v6_metadata_table_lists_the_committed_files(v6_table: Path) -> None:
    mdt = MetadataTable.open(TableContext.open(str(v6_table)))
    assert mdt.partitions() == ["files"]
    assert mdt.all_partitions() == ["10", "20", "30"]
    # the tombstone removed x.parquet; the rolled-back and the failed writes are not listed
    assert mdt.all_files() == _disk(v6_table, {T1, T2})
    (piece,) = mdt.merge_slices("files")
    assert piece.file_id == "files-0000" and len(piece.log_files) == 1


def test_v6_metadata_table_as_of_an_instant_stops_at_its_blocks(v6_table: Path) -> None:
    ctx = TableContext.open(str(v6_table))
    expected = _disk(v6_table, {T1})
    expected["20"]["x.parquet"] = 5  # listed by the initialisation, deleted only by T2
    assert MetadataTable.open(ctx, as_of=T1).all_files() == expected
    assert MetadataTable.open(ctx, as_of=ROLLBACK).all_files() == expected  # rolled back
    assert MetadataTable.open(ctx, as_of=T2).all_files() == _disk(v6_table, {T1, T2})
