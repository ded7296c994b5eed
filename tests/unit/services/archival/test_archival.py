"""`pyhudi.services.archival.execute`: which instants Hudi 0.14's rules archive, and how they are written."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import fastavro
import pytest
from tests.helpers.timeline_builder_archival import (
    at,
    clean,
    commit,
    commits,
    compaction,
    data_file,
    hoodie_files,
    new_table,
    pending,
    rollback,
    savepoint,
)

from pyhudi.codec.archived_entry import archived_entry_schema_json
from pyhudi.codec.avro_schemas import schema
from pyhudi.codec.log.avro_content import decode_avro_records
from pyhudi.codec.log.inspect import inspect_log
from pyhudi.codec.log.reader import read_log_file
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import ConfigError, LockError, UnsupportedVersionError
from pyhudi.model.enums import HeaderMetadataType, LogBlockType, WriteOperationType
from pyhudi.model.instant import Action, State
from pyhudi.services.archival import execute as archival
from pyhudi.services.archival.execute import archive
from pyhudi.services.archival.plan import keep_bounds, plan_archival
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import read_archived_entries, read_archived_instants, whole_timeline

DEFAULT = ArchivalConfig()  # min 20, max 30, batch 10, cleaner keeps 10 commits


def times(first: int, last: int) -> list[str]:
    return [at(n) for n in range(first, last + 1)]


def archived_times(ctx: TableContext) -> list[str]:
    return [i.time for i in read_archived_instants(ctx)]


# ---- when ------------------------------------------------------------------------------------


def test_archive_with_at_most_max_commits_archives_nothing(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 30)
    result = archive(ctx, DEFAULT)
    assert result.archived == () and result.archive_file is None
    assert str(result) == "nothing to archive"
    assert list((Path(ctx.meta_path) / "archived").iterdir()) == []


def test_archive_35_commits_moves_the_15_oldest_and_keeps_20(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    result = archive(ctx, DEFAULT)
    assert [i.time for i in result.archived] == times(1, 15)
    assert result.timeline_files == 45  # requested, inflight, completed of each
    assert Path(result.archive_file).name == ".commits_.archive.1_1-0-1"
    assert ctx.active.timeline.commits().times() == times(16, 35)
    assert not any(name.startswith(tuple(times(1, 15))) for name in hoodie_files(ctx))
    assert "15 instants archived" in str(result)


def test_archive_file_is_a_valid_log_file_of_archived_meta_entries(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    path = archive(ctx, DEFAULT).archive_file
    assert inspect_log(path, with_records=True).is_valid
    blocks = read_log_file(path)
    assert [b.block_type for b in blocks] == [LogBlockType.AVRO_DATA_BLOCK] * 5  # 45 entries / 10
    assert all(set(b.header) == {HeaderMetadataType.SCHEMA} for b in blocks)
    records = [r for b in blocks for r in decode_avro_records(b.content, b.schema_json)]
    assert len(records) == 45
    # The header schema is Hudi 0.15's text: Java strings (Hudi 1.x's upgrade casts them), and
    # the clean metadata's `extraMetadata`, which the 0.14 schema lacks.
    assert blocks[0].schema_json == archived_entry_schema_json()
    header_schema = json.loads(blocks[0].schema_json)
    assert header_schema["name"] == "HoodieArchivedMetaEntry"
    assert '{"type":"string","avro.java.string":"String"}' in blocks[0].schema_json
    canonical = fastavro.schema.to_parsing_canonical_form
    assert canonical(fastavro.parse_schema(header_schema)) != canonical(
        schema("HoodieArchivedMetaEntry")
    )
    first = records[0]
    assert (first["commitTime"], first["actionType"], first["actionState"]) == (
        at(1),
        "commit",
        "REQUESTED",
    )
    assert first["version"] is None and len(first["stateTransitionTime"]) == 17


def test_archived_entries_round_trip_to_the_original_instants_and_metadata(tmp_path):
    ctx = new_table(tmp_path)
    originals = commits(ctx, 1, 35, operation=WriteOperationType.INSERT)
    archive(ctx, DEFAULT)
    entries = read_archived_entries(ctx)
    assert [(i.time, i.action, i.state) for i, _ in entries] == [
        (t, Action.COMMIT, State.COMPLETED) for t in times(1, 15)
    ]
    for (_, metadata), original in zip(entries, originals):
        assert metadata == original  # every stat field the Avro HoodieWriteStat carries
        assert metadata.schema == original.schema
        assert metadata.operation_type is WriteOperationType.INSERT
    every_state = read_archived_entries(ctx, all_states=True)
    assert [i.state for i, _ in every_state[:3]] == [
        State.REQUESTED,
        State.INFLIGHT,
        State.COMPLETED,
    ]
    assert every_state[1][1].operation_type is WriteOperationType.INSERT  # workload profile


def test_replacecommit_and_compaction_archive_with_their_members(tmp_path):
    ctx = new_table(tmp_path, "MERGE_ON_READ")
    commit(ctx, at(1), Action.DELTA_COMMIT)
    replaced = {"p=1": ("old-0",)}
    overwrite = WriteOperationType.INSERT_OVERWRITE
    commit(ctx, at(2), Action.REPLACE_COMMIT, operation=overwrite, replaced=replaced)
    compaction(ctx, at(3))
    commits(ctx, 5, 36, action=Action.DELTA_COMMIT)
    clean(ctx, at(41), earliest_commit_to_retain=at(35))
    archive(ctx, DEFAULT)
    found = {(i.time, i.action, i.state): m for i, m in read_archived_entries(ctx, all_states=True)}
    assert found[(at(2), Action.REPLACE_COMMIT, State.COMPLETED)].replaced_file_ids() == {
        ("p=1", "old-0")
    }
    assert (
        found[(at(2), Action.REPLACE_COMMIT, State.REQUESTED)]["operationType"] == overwrite.value
    )
    assert (
        found[(at(3), Action.COMMIT, State.COMPLETED)].operation_type is WriteOperationType.COMPACT
    )
    assert found[(at(3), Action.COMMIT, State.COMPLETED)].compacted
    for state in (State.REQUESTED, State.INFLIGHT):  # both carry the plan of the requested file
        plan = found[(at(3), Action.COMPACTION, state)]
        assert plan["operations"][0]["fileId"] == "fg0001-0"
    collapsed = [(i.time, i.action) for i in read_archived_instants(ctx)]
    assert collapsed[:3] == [
        (at(1), Action.DELTA_COMMIT),
        (at(2), Action.REPLACE_COMMIT),
        (at(3), Action.COMMIT),
    ]


# ---- what stops it ---------------------------------------------------------------------------


# The file-versions cleaner has no earliest commit to retain, so the archival bounds stay put.
NO_CLEANER_BOUNDS = ArchivalConfig.from_options(
    {"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS"}
)


def test_pending_instant_stops_archival_before_it_and_keeps_the_commit_before(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 10)
    pending(ctx, at(11))
    commits(ctx, 12, 40)
    assert [i.time for i in plan_archival(ctx, NO_CLEANER_BOUNDS)] == times(1, 9)
    archive(ctx, NO_CLEANER_BOUNDS)
    assert ctx.active.timeline.pending().times() == [at(11)]


def test_pending_instant_caps_the_cleaners_commit_to_retain_and_so_the_bounds(tmp_path):
    # Hudi's ArchivalUtils: the cleaner retains from the last commit before the pending one, so
    # min becomes the 29 commits after it + 2 and max 41: 39 commits are not enough to archive.
    ctx = new_table(tmp_path)
    commits(ctx, 1, 10)
    pending(ctx, at(11))
    commits(ctx, 12, 40)
    assert keep_bounds(ctx, DEFAULT) == (31, 41)
    assert plan_archival(ctx, DEFAULT) == []


def test_pending_clean_also_stops_commit_archival(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 10)
    ctx.active.create_requested(at(11), Action.CLEAN, b"")
    commits(ctx, 12, 40)
    assert [i.time for i in plan_archival(ctx, DEFAULT)] == times(1, 9)


def test_cleaner_earliest_commit_to_retain_stops_archival(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    clean(ctx, at(36), earliest_commit_to_retain=at(8))
    result = archive(ctx, DEFAULT)
    assert [i.time for i in result.archived] == times(1, 7)
    assert ctx.active.timeline.find(at(36)).action is Action.CLEAN


def test_replacecommit_is_kept_while_no_clean_has_run(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 4)
    commit(ctx, at(5), Action.REPLACE_COMMIT, replaced={"p=1": ("gone-0",)})
    commits(ctx, 6, 40)
    assert [i.time for i in plan_archival(ctx, DEFAULT)] == times(1, 4)


def test_uncleaned_replacecommit_is_kept_until_its_replaced_files_are_gone(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 4)
    old_file = data_file(ctx, "p=1", "old-0", at(1))
    commit(ctx, at(5), Action.REPLACE_COMMIT, replaced={"p=1": ("old-0",)})
    commits(ctx, 6, 40)
    clean(ctx, at(41), earliest_commit_to_retain=at(30))  # Hudi's own rule would allow it
    first = archive(ctx, DEFAULT)
    assert [i.time for i in first.archived] == times(1, 4)
    old_file.unlink()  # the cleaner deletes the replaced file group
    second = archive(ctx, DEFAULT)
    assert [i.time for i in second.archived] == times(5, 20)
    assert Path(second.archive_file).name == ".commits_.archive.2_1-0-1"


def test_savepoint_keeps_its_commit_and_everything_after(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    savepoint(ctx, at(10))
    assert [i.time for i in plan_archival(ctx, DEFAULT)] == times(1, 9)


def test_merge_on_read_keeps_the_deltacommits_the_compaction_trigger_counts(tmp_path):
    ctx = new_table(tmp_path, "MERGE_ON_READ")
    commits(ctx, 1, 35, action=Action.DELTA_COMMIT)
    options = {"hoodie.compact.inline.max.delta.commits": "25"}
    assert [i.time for i in plan_archival(ctx, ArchivalConfig.from_options(options))] == times(
        1, 10
    )
    assert len(plan_archival(ctx, DEFAULT)) == 15  # 5 deltacommits needed: not binding


def test_cleaner_retaining_more_than_min_raises_the_bounds(tmp_path, caplog):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    with caplog.at_level(logging.WARNING):
        config = ArchivalConfig.from_options({"hoodie.cleaner.commits.retained": "25"})
    assert "hoodie.keep.min.commits" in caplog.text
    assert keep_bounds(ctx, config) == (26, 36)  # 24 commits after the 25th newest, + 2
    assert plan_archival(ctx, config) == []


def test_clean_and_rollback_instants_are_archived_per_action_beyond_max(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 5)
    for n in range(100, 136):
        clean(ctx, at(n), earliest_commit_to_retain=at(1))
    rollback(ctx, at(200), at(6))
    result = archive(ctx, DEFAULT)
    assert [(i.time, i.action) for i in result.archived] == [
        (t, Action.CLEAN) for t in times(100, 115)
    ]
    metadata = read_archived_entries(ctx)[0][1]
    assert metadata["earliestCommitToRetain"] == at(1)
    assert ctx.active.timeline.with_actions(Action.ROLLBACK).times() == [at(200)]


# ---- how -------------------------------------------------------------------------------------


def test_timeline_files_are_deleted_pending_first_then_completed_in_time_order(
    tmp_path, monkeypatch
):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 32)
    deleted: list[str] = []
    original = Storage.delete

    def recording(self, path):  # type: ignore[no-untyped-def]
        deleted.append(Path(path).name)
        return original(self, path)

    monkeypatch.setattr(Storage, "delete", recording)
    archive(ctx, DEFAULT)
    completed = [n for n in deleted if n.endswith(".commit")]
    assert completed == [f"{t}.commit" for t in times(1, 12)]
    first_completed = deleted.index(completed[0])
    assert all(n.endswith((".requested", ".inflight")) for n in deleted[:first_completed])
    assert len(deleted) == 36


def test_second_run_writes_the_next_archive_version_and_history_stays_whole(tmp_path):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    archive(ctx, DEFAULT)
    commits(ctx, 36, 46)
    second = archive(ctx, DEFAULT)
    archived_folder = Path(ctx.meta_path) / "archived"
    assert sorted(p.name for p in archived_folder.iterdir()) == [
        ".commits_.archive.1_1-0-1",
        ".commits_.archive.2_1-0-1",
    ]
    assert [i.time for i in second.archived] == times(16, 26)
    history = [i.time for i in read_archived_instants(ctx)] + ctx.active.timeline.times()
    assert history == times(1, 46)
    assert [i.time for i in whole_timeline(ctx)] == times(1, 46)


def test_crash_before_deleting_timeline_files_is_archived_again_without_duplicates(
    tmp_path, monkeypatch
):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)

    def crash(ctx, files):  # type: ignore[no-untyped-def]
        raise OSError("killed")

    monkeypatch.setattr(archival, "_delete_timeline_files", crash)
    with pytest.raises(OSError):
        archive(ctx, DEFAULT)
    assert ctx.active.reload().timeline.commits().times() == times(1, 35)
    assert [i.time for i in whole_timeline(ctx)] == times(1, 35)
    monkeypatch.undo()
    again = archive(ctx, DEFAULT)
    assert Path(again.archive_file).name == ".commits_.archive.2_1-0-1"
    assert archived_times(ctx) == times(1, 15)
    assert [i.time for i in whole_timeline(ctx)] == times(1, 35)


def test_archive_refuses_a_version_8_table_without_timeline_layout_2(tmp_path):
    ctx = new_table(
        tmp_path, **{"hoodie.table.version": "8", "hoodie.timeline.layout.version": "1"}
    )
    with pytest.raises(UnsupportedVersionError, match="timeline layout 1"):
        archive(ctx, DEFAULT)


# ---- configuration ---------------------------------------------------------------------------


def test_config_defaults_are_hudis():
    config = ArchivalConfig.from_options({})
    assert (config.automatic, config.run_async) == (True, False)
    assert (config.min_commits_to_keep, config.max_commits_to_keep, config.batch_size) == (
        20,
        30,
        10,
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"hoodie.keep.min.commits": "30"}, "hoodie.keep.max.commits=30"),
        (
            {"hoodie.keep.min.commits": "8", "hoodie.keep.max.commits": "5"},
            "hoodie.keep.min.commits=8",
        ),
        ({"hoodie.keep.min.commits": "0", "hoodie.keep.max.commits": "5"}, "at least 1"),
        ({"hoodie.commits.archival.batch": "0"}, "hoodie.commits.archival.batch"),
        ({"hoodie.keep.max.commits": "many"}, "hoodie.keep.max.commits"),
        ({"hoodie.cleaner.policy": "KEEP_NOTHING"}, "hoodie.cleaner.policy"),
    ],
)
def test_config_rejects_unusable_values(options, message):
    with pytest.raises(ConfigError, match=message):
        ArchivalConfig.from_options(options)


def test_config_min_not_above_cleaner_retention_only_warns(caplog):
    with caplog.at_level(logging.WARNING):
        config = ArchivalConfig.from_options(
            {"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6"}
        )
    assert config.min_commits_to_keep == 5
    assert "hoodie.cleaner.commits.retained=10" in caplog.text


# ---- under the table lock ----------------------------------------------------------------------


def _occ_file_lock() -> dict[str, str]:
    return {
        "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
        "hoodie.write.lock.provider": (
            "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
        ),
        "hoodie.write.lock.wait_time_ms": "50",
        "hoodie.write.lock.wait_time_ms_between_retry": "10",
        "hoodie.write.lock.num_retries": "2",
        "hoodie.write.lock.client.num_retries": "2",
        "hoodie.write.lock.client.wait_time_ms_between_retry": "10",
    }


def test_archive_with_a_lock_provider_waits_for_the_table_lock_and_archives_nothing_without_it(
    tmp_path,
):
    ctx = new_table(tmp_path)
    commits(ctx, 1, 35)
    lock_file = Path(ctx.meta_path) / "lock"
    lock_file.write_text('{"lockThreadName" : "another-writer"}')
    with pytest.raises(LockError, match="another-writer"):
        archive(ctx, DEFAULT, lock_options=_occ_file_lock())
    assert ctx.active.reload().timeline.commits().times() == times(1, 35)
    lock_file.unlink()
    result = archive(ctx, DEFAULT, lock_options=_occ_file_lock())
    assert [i.time for i in result.archived] == times(1, 15)
    assert not lock_file.exists()
