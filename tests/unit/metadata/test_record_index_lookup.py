"""Reading the record index by key on a table-version-6 metadata table laid out as Hudi 0.14 does
(record-index file groups with base HFiles and log files of HFILE / DELETE blocks, a failed data
write): seeks and full passes give the merged entries; HudiTable.lookup answers from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.helpers.mdt_builder import MDT_PROPS as BUILDER_PROPS

import pyhudi
from pyhudi.codec.log.writer import delete_block, encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import metadata_schema_json, write_metadata_hfile
from pyhudi.codec.metadata_keys import file_group_index
from pyhudi.config import table as keys
from pyhudi.exceptions import ConfigError
from pyhudi.metadata import MetadataTable
from pyhudi.metadata.index_records import (
    record_index_delete_records,
    record_index_file_group_id,
    record_index_records,
)
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

T1, T2, FAILED = "20240418172802262", "20240418172804498", "20240418172805000"
INIT = "00000000000000010"
GROUPS = 3
FID = "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
MOVED_TO = "0a6b1f5e-0000-4000-8000-000000000001-0"
MDT_PROPS = {**BUILDER_PROPS, "hoodie.table.name": "t_metadata"}
KEYS = [f"key-{i:03d}" for i in range(600)]  # 200 per group: 5 keys seek, all keys scan


def _complete(ctx: TableContext, time: str, action: Action) -> None:
    requested = ctx.active.create_requested(time, action)
    ctx.active.complete(ctx.active.transition_to_inflight(requested), b"{}")


@pytest.fixture
def table(hudi_tables, tmp_path) -> Path:
    """key-000..599 inserted by T1 (base files); T2 moves key-000 and deletes key-001; a failed
    write's block deletes key-002 and must not count."""
    root = tmp_path / "t"
    shutil.copytree(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], root)
    data = TableContext.open(str(root))
    data.update_properties({keys.METADATA_PARTITIONS.key: "files,record_index"})
    data.active.transition_to_inflight(data.active.create_requested(FAILED, Action.COMMIT))
    mdt = TableContext.create(str(root / ".hoodie" / "metadata"), MDT_PROPS)
    for time in (INIT, T2, FAILED):
        _complete(mdt, time, Action.DELTA_COMMIT)
    folder = root / ".hoodie" / "metadata" / "record_index"
    folder.mkdir(parents=True)
    schema = metadata_schema_json()
    for index in range(GROUPS):
        fid = record_index_file_group_id(index)
        mine = [k for k in KEYS if file_group_index(k, GROUPS) == index]
        name = f"{fid}_0-0-0_{INIT}.hfile"
        base = record_index_records("10", FID, T1, mine)
        (folder / name).write_bytes(write_metadata_hfile(base, base_file_name=name))
        blocks = []
        for time, key, moved in (
            (T2, "key-000", True),
            (T2, "key-001", False),
            (FAILED, "key-002", False),
        ):
            if file_group_index(key, GROUPS) != index:
                continue
            if moved:
                update = record_index_records("20", MOVED_TO, time, [key])
                blocks.append(hfile_data_block(time, schema, write_metadata_hfile(update)))
            else:
                blocks.append(
                    delete_block(time, record_index_delete_records([key]), schema_json=schema)
                )
        if blocks:
            (folder / f".{fid}_{INIT}.log.1_0-0-0").write_bytes(encode_blocks(blocks))
    return root


def test_lookup_merges_base_files_with_committed_log_blocks(table: Path) -> None:
    ctx = TableContext.open(str(table))
    groups = RecordIndexFileGroups.open(ctx)
    assert [s.file_id for s in groups.slices] == [record_index_file_group_id(i) for i in range(3)]
    wanted = ["key-000", "key-001", "key-002", "key-030", "absent"]
    found = groups.lookup(wanted)  # few keys per group: seeks
    assert set(found) == {"key-000", "key-002", "key-030"}
    assert (found["key-000"].partition_path, found["key-000"].file_id) == ("20", MOVED_TO)
    assert (found["key-030"].partition_path, found["key-030"].file_id) == ("10", FID)
    everything = groups.lookup(KEYS)  # most keys: one pass per base file
    merged = MetadataTable.open(ctx).records("record_index")
    assert everything == {k: r.location for k, r in merged.items()}
    assert len(everything) == len(KEYS) - 1 and "key-001" not in everything


def test_hudi_table_lookup_and_its_errors(table: Path, tmp_path: Path, hudi_tables) -> None:
    answer = pyhudi.HudiTable.open(str(table)).lookup(["key-000", "key-005", "nope"])
    assert answer == {"key-000": ("20", MOVED_TO), "key-005": ("10", FID)}
    plain = tmp_path / "plain"
    shutil.copytree(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], plain)
    with pytest.raises(ConfigError, match=rf"HudiTable\.lookup.*'record_index'.*{plain}"):
        pyhudi.HudiTable.open(str(plain)).lookup(["k"])
