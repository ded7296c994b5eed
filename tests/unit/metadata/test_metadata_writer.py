"""Writing the metadata table's `files` partition on a real v6 table (no Spark): initialisation from
the listing, one deltacommit per data instant (log version after log version), a failed data
instant undone or ignored, orphans of rolled-back data instants discarded, a retried instant
written once, partitions pyhudi cannot maintain disabled with a WARNING."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from pyhudi.codec.file_names import base_file_name
from pyhudi.config import table as keys
from pyhudi.metadata import MetadataTable, has_metadata_table, metadata_table_path, validate
from pyhudi.metadata.deltacommit import FILES_FILE_GROUP
from pyhudi.metadata.files_records import commit_files_records
from pyhudi.metadata.writer import (
    commit_to_metadata_table,
    discard_metadata_commit,
    drop_unmaintained_partitions,
    initialise_metadata_table,
    maintains_metadata_table,
    prepare_metadata_table,
    remove_orphan_deltacommits,
)
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.context import TableContext

LATEST = "20240418172804498"  # the fixture's last commit
T1, T2, T3 = "20240418172900000", "20240418173000000", "20240418173100000"


@pytest.fixture
def table(hudi_tables, tmp_path) -> TableContext:
    root = tmp_path / "v6"
    shutil.copytree(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], root)
    return TableContext.open(str(root))


def _data_write(ctx: TableContext, time: str) -> tuple[Instant, CommitMetadata]:
    """A pending data instant that wrote one new base file into partition 10."""
    inflight = ctx.active.transition_to_inflight(ctx.active.create_requested(time, Action.COMMIT))
    source = next(p for p in Path(ctx.path("10")).iterdir() if p.suffix == ".parquet")
    name = base_file_name(f"{time[-8:]}-aaaa-bbbb-cccc-dddddddddddd-0", "0-1-2", time)
    target = Path(ctx.path("10")) / name
    shutil.copy(source, target)
    stat = WriteStat("x", f"10/{name}", "10", num_inserts=1, file_size_bytes=target.stat().st_size)
    metadata = CommitMetadata({"10": (stat,)}, WriteOperationType.INSERT)
    return inflight, metadata


def _commit(ctx: TableContext, time: str) -> None:
    inflight, metadata = _data_write(ctx, time)
    commit_to_metadata_table(ctx, time, commit_files_records(metadata))
    ctx.active.complete(inflight, b"{}")


def _mdt(ctx: TableContext) -> TableContext:
    return TableContext.open_at(ctx.storage, metadata_table_path(ctx))


def _log_files(ctx: TableContext) -> list[str]:
    return sorted(p.name for p in Path(metadata_table_path(ctx), "files").glob(".files-*"))


def test_initialisation_lists_the_committed_files_at_hudis_init_instant(table):
    init = initialise_metadata_table(table)
    assert init == LATEST + "010"
    assert table.config.metadata_partitions == ("files",)
    assert not table.config.get(keys.METADATA_PARTITIONS_INFLIGHT.key)
    mdt = _mdt(table)
    props = mdt.config.props
    assert props[keys.NAME.key] == "v6_simplekeygen_nonhivestyle_metadata"
    assert props[keys.TYPE.key] == "MERGE_ON_READ" and props[keys.BASE_FILE_FORMAT.key] == "HFILE"
    assert props[keys.POPULATE_META_FIELDS.key] == "false"
    assert props[keys.RECORD_KEY_FIELDS.key] == "key"
    assert props[keys.PAYLOAD_CLASS.key] == "org.apache.hudi.metadata.HoodieMetadataPayload"
    timeline = [(i.time, i.action, i.state) for i in mdt.active.timeline]
    assert timeline == [(init, Action.DELTA_COMMIT, State.COMPLETED)]
    assert Path(
        metadata_table_path(table), "files", f"{FILES_FILE_GROUP}_0-0-0_{init}.hfile"
    ).exists()
    assert Path(metadata_table_path(table), "files", ".hoodie_partition_metadata").exists()
    assert validate(table.base_path).differences == ()


def test_initialisation_of_an_empty_table_uses_the_solo_commit_instant(hudi_tables, tmp_path):
    root = tmp_path / "empty"
    shutil.copytree(hudi_tables["cow__v6_empty"], root)
    ctx = TableContext.open(str(root))
    assert initialise_metadata_table(ctx) == "00000000000000010"
    assert MetadataTable.open(TableContext.open(str(root))).all_files() == {}


def test_each_data_instant_appends_the_next_log_version(table):
    init = initialise_metadata_table(table)
    _commit(table, T1)
    _commit(table, T2)
    assert _log_files(table) == [
        f".{FILES_FILE_GROUP}_{init}.log.1_0-0-0",
        f".{FILES_FILE_GROUP}_{init}.log.2_0-0-0",
    ]
    listed = MetadataTable.open(TableContext.open(table.base_path)).files_in("10")
    assert sum(T1 in n or T2 in n for n in listed) == 2
    assert validate(table.base_path).differences == ()
    assert not Path(_mdt(table).marker_folder(T2)).exists()


def test_a_data_instant_that_never_completes_is_ignored_then_undone(table):
    initialise_metadata_table(table)
    _data_inflight, metadata = _data_write(table, T1)
    commit_to_metadata_table(table, T1, commit_files_records(metadata))
    assert validate(table.base_path).differences == ()  # data T1 pending: its block is ignored
    discard_metadata_commit(table, T1)
    assert _log_files(table) == []
    assert [i for i in _mdt(table).active.timeline if i.time == T1] == []


def test_a_deltacommit_whose_data_instant_was_rolled_back_is_discarded(table):
    initialise_metadata_table(table)
    _commit(table, T1)
    inflight, metadata = _data_write(table, T2)
    commit_to_metadata_table(table, T2, commit_files_records(metadata))
    # a crash, then the rollback removed the data file and the data instant's files
    (Path(table.base_path) / metadata.write_stats()[0].path).unlink()  # type: ignore[operator]
    table.active.delete_pending_files(inflight)
    assert validate(table.base_path).differences != ()
    assert remove_orphan_deltacommits(table) == [T2]
    assert validate(table.base_path).differences == ()
    assert len(_log_files(table)) == 1


def test_a_retried_instant_is_written_once(table):
    initialise_metadata_table(table)
    inflight, metadata = _data_write(table, T1)
    commit_to_metadata_table(table, T1, commit_files_records(metadata))
    commit_to_metadata_table(table, T1, commit_files_records(metadata))  # e.g. compaction re-run
    table.active.complete(inflight, b"{}")
    assert len(_log_files(table)) == 1
    assert [i.time for i in _mdt(table).active.timeline.completed()][-1] == T1
    assert validate(table.base_path).differences == ()


def test_partitions_pyhudi_cannot_maintain_are_disabled_with_a_warning(table, caplog):
    initialise_metadata_table(table)
    for name in ("column_stats", "record_index"):
        Path(metadata_table_path(table), name).mkdir()
    table.update_properties({keys.METADATA_PARTITIONS.key: "files,column_stats,record_index"})
    with caplog.at_level(logging.WARNING, logger="pyhudi.metadata.writer"):
        drop_unmaintained_partitions(table)
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "column_stats, record_index" in warning and table.base_path in warning
    assert TableContext.open(table.base_path).config.metadata_partitions == ("files",)
    assert not Path(metadata_table_path(table), "column_stats").exists()
    _commit(table, T1)
    assert validate(table.base_path).differences == ()


def test_the_enable_key_decides_keep_create_or_delete(table):
    assert maintains_metadata_table(table, {})  # Hudi's default: true, created by the next commit
    prepare_metadata_table(table, {})  # unset on a table without one: nothing deleted, no table yet
    assert not has_metadata_table(table)
    _commit(table, T1)
    assert has_metadata_table(table) and validate(table.base_path).differences == ()
    prepare_metadata_table(table, {})  # unset on a table that has one: kept
    assert has_metadata_table(table) and maintains_metadata_table(table, {})
    assert maintains_metadata_table(table, {"hoodie.metadata.enable": "true"})
    prepare_metadata_table(table, {"hoodie.metadata.enable": "false"})  # explicit false: deleted
    assert not has_metadata_table(table) and table.config.metadata_partitions == ()
    assert not maintains_metadata_table(table, {"hoodie.metadata.enable": "false"})
    assert maintains_metadata_table(table, {})


def test_a_metadata_folder_without_a_built_files_partition_is_rebuilt_or_dropped(table):
    Path(metadata_table_path(table), "files").mkdir(parents=True)  # e.g. an init that crashed
    table.update_properties({keys.METADATA_PARTITIONS_INFLIGHT.key: "files"})
    _commit(table, T1)  # enabled: rebuilt from the listing, then T1's deltacommit
    assert validate(table.base_path).differences == ()
    Path(metadata_table_path(table), ".hoodie", "hoodie.properties").unlink()
    table.update_properties({keys.METADATA_PARTITIONS.key: ""})
    prepare_metadata_table(table, {})  # unset (enabled), `files` not built: the commit rebuilds it
    _commit(table, T2)
    assert table.config.metadata_partitions == ("files",)
    assert validate(table.base_path).differences == ()
    Path(metadata_table_path(table), ".hoodie", "hoodie.properties").unlink()
    table.update_properties({keys.METADATA_PARTITIONS.key: ""})
    prepare_metadata_table(table, {"hoodie.metadata.enable": "false"})  # disabled: dropped
    assert not has_metadata_table(table)
