"""Compaction of a hand-built v6 metadata table (Hudi 0.14 layout): due after 10 deltacommits with
no data instant pending before the latest one, at `<latest deltacommit>001`; the merged base HFile
reads exactly as base + logs did (pyhudi's reader, the validator; its listing equals the latest
slices hudi-rs reads)."""

from __future__ import annotations

import os
import shutil

import hudi
import pytest
from tests.helpers.mdt_builder import FILES_GROUP, INIT, MdtBuilder, disk_files

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.log.writer import encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import file_list_record, metadata_schema_json, write_metadata_hfile
from pyhudi.config.metadata_services import MetadataServicesConfig
from pyhudi.metadata import MetadataTable, metadata_view, validate
from pyhudi.metadata.compaction import (
    compact_if_necessary,
    compaction_due,
    schedule_metadata_compaction,
)
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.rollback import rollback_failed_writes

CONFIG = MetadataServicesConfig()


TIMES = [f"2024041819{i:02d}00000" for i in range(1, 20)]


@pytest.fixture
def built(hudi_tables, tmp_path) -> MdtBuilder:
    return MdtBuilder(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], tmp_path / "t")


def _fill(builder: MdtBuilder, count: int) -> None:
    """`count` data commits (and deltacommits); the 4th replaces a file listed at initialisation."""
    initial = sorted(disk_files(builder.root, set(builder.data().active.timeline.times()))["20"])
    for i in range(count):
        replaces = initial[0] if i == 3 else None
        builder.commit(TIMES[i], "20" if i == 3 else ("10", "30")[i % 2], replaces=replaces)


def _state(builder: MdtBuilder) -> tuple:
    table = MetadataTable.open(builder.data())
    return table.all_files(), {k: r.live_files for k, r in table.records("files").items()}


def test_metadata_compaction_is_due_after_ten_deltacommits(built):
    _fill(built, 8)  # the initialisation + 8 = 9 deltacommits
    assert compaction_due(built.data(), built.mdt(), CONFIG) is None
    assert compact_if_necessary(built.data(), built.mdt(), CONFIG) is None
    _fill_from(built, 8, 9)
    assert compaction_due(built.data(), built.mdt(), CONFIG) == TIMES[8] + "001"


def _fill_from(builder: MdtBuilder, start: int, stop: int) -> None:
    for i in range(start, stop):
        builder.commit(TIMES[i], ("10", "30")[i % 2])


def test_metadata_compaction_merges_base_and_logs_into_an_equal_base_file(built):
    _fill(built, 9)
    before = _state(built)
    done = compact_if_necessary(built.data(), built.mdt(), CONFIG)
    compaction = TIMES[8] + "001"
    assert done == Instant(compaction, Action.COMMIT, State.COMPLETED)
    meta = built.mdt_root / ".hoodie"
    assert {
        f"{compaction}.compaction.requested",
        f"{compaction}.compaction.inflight",
        f"{compaction}.commit",
    } <= set(os.listdir(meta))
    plan = decode_container((meta / f"{compaction}.compaction.requested").read_bytes())
    (operation,) = plan["operations"]
    assert operation["fileId"] == FILES_GROUP and len(operation["deltaFilePaths"]) == 9
    base = built.mdt_root / "files" / f"{FILES_GROUP}_0-0-0_{compaction}.hfile"
    assert base.exists() and not (meta / ".temp" / compaction).exists()
    assert len(list(HFileReader(base.read_bytes()).items())) == len(before[1])
    commit = built.mdt().active.commit_metadata(done)
    assert commit.compacted and commit.write_stats()[0].total_log_files_compacted == 9
    assert _state(built) == before
    (piece,) = MetadataTable.open(built.data()).merge_slices("files")
    assert piece.base_file == f"files/{base.name}" and piece.log_files == ()
    report = validate(built.data())
    assert report.ok, [str(d) for d in report.differences]
    assert compaction_due(built.data(), built.mdt(), CONFIG) is None  # not twice at one time


def test_deltacommits_after_a_metadata_compaction_go_on_its_slice(built):
    _fill(built, 9)
    compact_if_necessary(built.data(), built.mdt(), CONFIG)
    log = built.commit(TIMES[10], "30")
    assert log and built.latest_base_instant() == TIMES[8] + "001"
    completed = set(built.data().active.timeline.completed().times())
    assert MetadataTable.open(built.data()).all_files() == disk_files(built.root, completed)
    assert validate(built.data()).ok
    # a later data instant rolls back fine; one before the compaction is refused (Hudi)
    name = built.write_data(TIMES[11], complete=False)
    built.deltacommit(TIMES[11], {"10": {name: 1}}, complete=False)
    assert rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    assert validate(built.data()).ok


def test_the_compacted_metadata_listing_equals_the_slices_hudi_rs_reads(built):
    """hudi-rs 0.5.0 lists a v6 table on storage even with `hoodie.metadata.enable=true` (checked:
    a file the metadata table lacks still shows), so it is the storage side of this comparison."""
    _fill(built, 9)
    compact_if_necessary(built.data(), built.mdt(), CONFIG)
    latest = metadata_view(built.data()).latest_file_slices()
    ours = {(s.partition_path, s.base_file.file_name) for s in latest if s.base_file}
    table = hudi.HudiTable(str(built.root), {"hoodie.metadata.enable": "true"})
    theirs = {(s.partition_path, s.base_file_name) for s in table.get_file_slices()}
    assert theirs == ours and len(ours) > 10


def test_a_pending_data_instant_before_the_latest_deltacommit_blocks_compaction(built):
    _fill(built, 8)
    built.write_data(TIMES[8], complete=False)  # pending data write, no deltacommit
    built.commit(TIMES[9], "30")
    assert compaction_due(built.data(), built.mdt(), CONFIG) is None
    rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    assert compaction_due(built.data(), built.mdt(), CONFIG) == TIMES[9] + "001"


def test_an_interrupted_metadata_compaction_is_finished_by_the_next_run(built):
    _fill(built, 9)
    before = _state(built)
    mdt = built.mdt()
    requested = schedule_metadata_compaction(mdt, TIMES[8] + "001")
    assert requested is not None
    mdt.active.transition_to_inflight(requested)
    (built.mdt_root / "files" / f"{FILES_GROUP}_0-0-0_{requested.time}.hfile").write_bytes(b"x")
    assert _state(built) == before  # a pending compaction is invisible
    done = compact_if_necessary(built.data(), built.mdt(), CONFIG)
    assert done is not None and done.time == requested.time and _state(built) == before


def test_column_stats_file_groups_compact_to_the_same_records(built, hudi_tables):
    """A `column_stats` file group (a Hudi-written HFile of column stats records plus a log block)
    compacts into a base HFile whose merged records equal the records before."""
    source = hudi_tables["mor_avro__v8_trips_8i3u1d"] / ".hoodie" / "metadata" / "column_stats"
    (hfile,) = source.glob("col-stats-0001-0_*.hfile")
    folder = built.mdt_root / "column_stats"
    folder.mkdir()
    shutil.copyfile(hfile, folder / f"col-stats-0001-0_0-0-0_{INIT}.hfile")
    shutil.copyfile(source / ".hoodie_partition_metadata", folder / ".hoodie_partition_metadata")
    _fill(built, 9)
    records = write_metadata_hfile([file_list_record("zz", {"a.parquet": 1})])
    block = hfile_data_block(TIMES[0], metadata_schema_json(), records)
    (folder / f".col-stats-0001-0_{INIT}.log.1_0-1-0").write_bytes(encode_blocks([block]))
    before = MetadataTable.open(built.data()).records("column_stats")
    assert len(before) > 1
    done = compact_if_necessary(built.data(), built.mdt(), CONFIG)
    assert done is not None and done.time == TIMES[8] + "001"
    assert (folder / f"col-stats-0001-0_0-0-0_{done.time}.hfile").exists()
    assert MetadataTable.open(built.data()).records("column_stats") == before
