"""`pyhudi.timeline.archived`: reading archive log files (v6) and the LSM history (v8)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.fixtures import unzip_table
from tests.helpers.timeline_builder_archival import at, commit_metadata, commits, new_table

from pyhudi.codec.archived_entry import (
    archive_file_name,
    build_entry,
    decode_archive_log,
    encode_archive_log,
    entry_to_instant,
)
from pyhudi.codec.avro_schemas import encode_container
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.services.archival.execute import archive
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import (
    archive_files,
    history_folder,
    read_archived_entries,
    read_archived_instants,
    whole_timeline,
)


@pytest.fixture
def archived_table(tmp_path) -> TableContext:
    ctx = new_table(tmp_path / "t")
    commits(ctx, 1, 35)
    archive(ctx, ArchivalConfig())
    return ctx


# ---- table version 6 -------------------------------------------------------------------------


def test_read_archived_instants_returns_what_archive_wrote_in_order(archived_table):
    instants = read_archived_instants(archived_table)
    assert [i.time for i in instants] == [at(n) for n in range(1, 16)]
    assert {(i.action, i.state) for i in instants} == {(Action.COMMIT, State.COMPLETED)}
    assert len(read_archived_instants(archived_table, all_states=True)) == 45


def test_whole_timeline_joins_archived_and_active_instants(archived_table):
    assert [i.time for i in whole_timeline(archived_table)] == [at(n) for n in range(1, 36)]


def test_reader_skips_a_torn_tail_and_reads_every_archive_version(archived_table):
    (first,) = archive_files(archived_table)
    second = Path(first.path).with_name(archive_file_name(2))
    entry = build_entry(
        Instant(at(99), Action.COMMIT, State.COMPLETED),
        encode_commit_metadata(commit_metadata(at(99))),
    )
    second.write_bytes(encode_archive_log([entry]) + b"#HUDI#\x00\x00\x00")  # crash mid-block
    assert [Path(s.path).name for s in archive_files(archived_table)] == [
        ".commits_.archive.1_1-0-1",
        ".commits_.archive.2_1-0-1",
    ]
    assert read_archived_instants(archived_table)[-1].time == at(99)


def test_tables_never_archived_have_an_empty_archived_timeline(tmp_path):
    ctx = TableContext.open(str(unzip_table("cow__v6_nonpartitioned", tmp_path)))
    assert read_archived_instants(ctx) == []


def test_empty_completed_file_archives_without_metadata():
    entry = build_entry(Instant(at(1), Action.DELTA_COMMIT, State.COMPLETED), b"")
    assert entry_to_instant(entry) == (Instant(at(1), Action.DELTA_COMMIT, State.COMPLETED), None)
    (decoded,) = decode_archive_log(encode_archive_log([entry]))
    assert decoded["hoodieCommitMetadata"] is None and decoded["actionType"] == "deltacommit"


def test_actions_hudi_cannot_archive_are_refused():
    with pytest.raises(UnsupportedOperationError):
        build_entry(Instant(at(1), Action.RESTORE, State.COMPLETED), b"")


# ---- table version 8 -------------------------------------------------------------------------


def test_v8_table_with_an_empty_history_reads_no_archived_instants(tmp_path):
    ctx = TableContext.open(str(unzip_table("mor_avro__v8_trips_8i3u1d", tmp_path)))
    assert Path(history_folder(ctx)).is_dir()
    assert read_archived_instants(ctx) == []


def test_v9_table_keeps_its_lsm_history_under_timeline_history_and_reads_it_empty(tmp_path):
    root = unzip_table("mor_avro__v9_txns_simple_meta", tmp_path)
    ctx = TableContext.open(str(root))
    assert Path(history_folder(ctx)) == root / ".hoodie" / "timeline" / "history"
    assert read_archived_instants(ctx) == []


def test_v8_lsm_history_is_read_from_the_latest_manifest(tmp_path):
    ctx = TableContext.open(str(unzip_table("mor_avro__v8_trips_8i3u1d", tmp_path)))
    history = Path(history_folder(ctx))
    clean_metadata = encode_container(
        "HoodieCleanMetadata",
        {
            "startCleanTime": at(3),
            "timeTakenInMillis": 1,
            "totalFilesDeleted": 0,
            "earliestCommitToRetain": at(1),
            "lastCompletedCommitTimestamp": at(2),
            "partitionMetadata": {},
            "version": 2,
            "bootstrapPartitionMetadata": None,
        },
    )
    rows = {
        "instantTime": [at(1), at(3)],
        "completionTime": [at(2), at(4)],
        "action": ["deltacommit", "clean"],
        "metadata": [encode_commit_metadata(commit_metadata(at(1))), clean_metadata],
        "plan": [None, None],
        "version": [1, 1],
    }
    pq.write_table(pa.table(rows), history / f"{at(1)}_{at(3)}_0.parquet")
    pq.write_table(pa.table({k: v[:1] for k, v in rows.items()}), history / "stale_0.parquet")
    (history / "manifest_1").write_text(json.dumps({"files": [{"fileName": "stale_0.parquet"}]}))
    manifest = {"files": [{"fileName": f"{at(1)}_{at(3)}_0.parquet", "fileLen": 1}]}
    (history / "manifest_2").write_text(json.dumps(manifest))
    (history / "_version_").write_text("2")
    entries = read_archived_entries(ctx)
    assert [(i.time, i.action, i.state, i.completion_time) for i, _ in entries] == [
        (at(1), Action.DELTA_COMMIT, State.COMPLETED, at(2)),
        (at(3), Action.CLEAN, State.COMPLETED, at(4)),
    ]
    assert entries[0][1] == commit_metadata(at(1))
    assert entries[1][1]["earliestCommitToRetain"] == at(1)
    (history / "_version_").unlink()  # falls back to the highest manifest
    assert len(read_archived_instants(ctx)) == 2
    shutil.rmtree(history)
    assert read_archived_instants(ctx) == []
