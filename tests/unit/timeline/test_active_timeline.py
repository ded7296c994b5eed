"""`pyhudi.timeline.ActiveTimeline`: loading the real timelines, and write-once state transitions."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.exceptions import CommitConflictError, UnsupportedVersionError
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.storage import Storage
from pyhudi.timeline import ActiveTimeline

#: Completed instants per action of every real table (the README's "timeline (completed)" column).
EXPECTED_COMPLETED = {
    "cow__v6_complexkeygen_hivestyle": {"commit": 2},
    "cow__v6_empty": {},
    "cow__v6_nonpartitioned": {"commit": 2},
    "cow__v6_simplekeygen_hivestyle_no_metafields": {"commit": 1},
    "cow__v6_simplekeygen_nonhivestyle": {"commit": 2},
    "cow__v6_simplekeygen_nonhivestyle_overwritetable": {"commit": 2, "replacecommit": 1},
    "cow__v6_timebasedkeygen_nonhivestyle": {"commit": 2},
    "cow__v8_complexkeygen_hivestyle": {"commit": 2},
    "cow__v8_empty": {},
    "cow__v8_nonpartitioned": {"commit": 2},
    "cow__v8_simplekeygen_hivestyle_no_metafields": {"commit": 1},
    "cow__v8_simplekeygen_nonhivestyle": {"commit": 2},
    "mor_avro__v6_trips_8i1u": {"deltacommit": 2},
    "mor_avro__v6_trips_8i3d": {"deltacommit": 2},
    "mor_avro__v8_trips_8i3u1d": {"deltacommit": 6, "commit": 1, "indexing": 1},
    # Table version 9: insert_overwrite (replacecommit), clustering (replacecommit completing a
    # `clustering` requested/inflight), indexing (metadata table), compaction (commit) on MOR.
    "cow__v9_lance_txns_simple": {"commit": 10},
    "cow__v9_txns_complex_meta": {"commit": 10, "indexing": 2, "replacecommit": 2},
    "cow__v9_txns_complex_nometa": {"commit": 10, "replacecommit": 2},
    "cow__v9_txns_nonpart_meta": {"commit": 10, "indexing": 2, "replacecommit": 1},
    "cow__v9_txns_nonpart_nometa": {"commit": 10, "replacecommit": 1},
    "cow__v9_txns_simple_meta": {"commit": 10, "indexing": 2, "replacecommit": 2},
    "cow__v9_txns_simple_nometa": {"commit": 10, "replacecommit": 2},
    "mor_avro__v9_txns_complex_meta": {
        "commit": 1,
        "deltacommit": 10,
        "indexing": 2,
        "replacecommit": 2,
    },
    "mor_avro__v9_txns_complex_nometa": {"commit": 1, "deltacommit": 10, "replacecommit": 2},
    "mor_avro__v9_txns_nonpart_meta": {
        "commit": 1,
        "deltacommit": 10,
        "indexing": 2,
        "replacecommit": 1,
    },
    "mor_avro__v9_txns_nonpart_nometa": {"commit": 1, "deltacommit": 10, "replacecommit": 1},
    "mor_avro__v9_txns_simple_meta": {
        "commit": 1,
        "deltacommit": 10,
        "indexing": 2,
        "replacecommit": 2,
    },
    "mor_avro__v9_txns_simple_nometa": {"commit": 1, "deltacommit": 10, "replacecommit": 2},
    "mor_parquet__v6_complexkeygen_hivestyle": {"deltacommit": 2},
    "mor_parquet__v6_empty": {},
    "mor_parquet__v6_nonpartitioned": {"deltacommit": 2},
    "mor_parquet__v6_nonpartitioned_rollback": {"deltacommit": 2, "rollback": 1},
    "mor_parquet__v6_simplekeygen_hivestyle_no_metafields": {"deltacommit": 1},
    "mor_parquet__v6_simplekeygen_nonhivestyle": {"deltacommit": 2},
    "mor_parquet__v6_simplekeygen_nonhivestyle_overwritetable": {
        "deltacommit": 2,
        "replacecommit": 1,
    },
}
T1, T2, T3 = (InstantTime(f"2024010100000000{n}") for n in (1, 2, 3))


def load_real(root: Path) -> ActiveTimeline:
    layout = 2 if (root / ".hoodie" / "timeline").is_dir() else 1
    return ActiveTimeline.load(Storage.for_uri(str(root))[0], str(root), layout)


def fresh(tmp_path: Path) -> ActiveTimeline:
    (tmp_path / ".hoodie").mkdir(exist_ok=True)
    return ActiveTimeline.load(Storage.for_uri(str(tmp_path))[0], str(tmp_path))


def hoodie_files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / ".hoodie").iterdir())


# ---- the real tables ---------------------------------------------------------------------------


def test_expected_counts_cover_every_real_table(hudi_tables):
    assert set(EXPECTED_COMPLETED) == set(hudi_tables)


@pytest.mark.parametrize("name", sorted(EXPECTED_COMPLETED))
def test_real_timeline_loads_with_expected_completed_instants(hudi_tables, name):
    active = load_real(hudi_tables[name])
    assert Counter(i.action.value for i in active.timeline) == Counter(EXPECTED_COMPLETED[name])
    assert all(i.is_completed for i in active.timeline), (
        "every real table has only completed instants"
    )
    assert active.timeline.times() == sorted(active.timeline.times())


@pytest.mark.parametrize("name", ["cow__v6_nonpartitioned", "mor_avro__v8_trips_8i3u1d"])
def test_commit_schema_is_the_schema_of_the_commit_metadata(hudi_tables, name):
    alone, full = load_real(hudi_tables[name]), load_real(hudi_tables[name])
    commits = alone.timeline.commits().instants
    assert commits
    for instant in commits:  # `alone` never decodes the write stats, `full` does first
        assert alone.commit_schema(instant) == full.commit_metadata(instant).schema, instant
        assert full.commit_schema(instant) == alone.commit_schema(instant)
        assert alone.commit_schema(instant), instant


def test_real_v8_timeline_carries_completion_times(hudi_tables):
    active = load_real(hudi_tables["mor_avro__v8_trips_8i3u1d"])
    assert active.layout_version == 2
    assert all(
        i.completion_time is not None and i.completion_time > i.time for i in active.timeline
    )
    compaction = active.timeline.find("20251220210129235")
    assert compaction is not None and compaction.action is Action.COMMIT


def test_real_v6_timelines_have_no_completion_times(hudi_tables):
    active = load_real(hudi_tables["cow__v6_nonpartitioned"])
    assert [i.completion_time for i in active.timeline] == [None, None]


def test_real_commit_metadata_is_read_through_the_timeline_for_both_layouts(hudi_tables):
    for name in ("cow__v6_nonpartitioned", "cow__v8_nonpartitioned"):
        active = load_real(hudi_tables[name])
        for instant in active.timeline.commits():
            metadata = active.commit_metadata(instant)
            assert metadata.operation_type is WriteOperationType.UPSERT
            assert active.commit_metadata(instant) is metadata  # cached


def test_v8_table_loaded_with_layout_1_sees_no_instants(hudi_tables):
    root = hudi_tables["cow__v8_nonpartitioned"]
    assert len(ActiveTimeline.load(Storage.for_uri(str(root))[0], str(root), 1).timeline) == 0


# ---- transitions ---------------------------------------------------------------------------------


def test_commit_transitions_create_one_new_file_per_state(tmp_path):
    active = fresh(tmp_path)
    requested = active.create_requested(T1, Action.COMMIT)
    assert hoodie_files(tmp_path) == [f"{T1}.commit.requested"]
    inflight = active.transition_to_inflight(requested, b"{}")
    completed = active.complete(inflight, b"done")
    assert hoodie_files(tmp_path) == [f"{T1}.commit", f"{T1}.commit.requested", f"{T1}.inflight"]
    assert (tmp_path / ".hoodie" / f"{T1}.commit").read_bytes() == b"done"
    assert (tmp_path / ".hoodie" / f"{T1}.inflight").read_bytes() == b"{}"
    assert (completed.action, completed.state) == (Action.COMMIT, State.COMPLETED)
    assert list(active.timeline) == [completed]


def test_compaction_completes_as_commit_and_replaces_pending_instant_in_memory(tmp_path):
    active = fresh(tmp_path)
    requested = active.create_requested(T1, Action.COMPACTION, b"plan")
    done = active.complete(active.transition_to_inflight(requested))
    assert hoodie_files(tmp_path) == [
        f"{T1}.commit",
        f"{T1}.compaction.inflight",
        f"{T1}.compaction.requested",
    ]
    assert list(active.timeline) == [done] and done.action is Action.COMMIT
    assert list(active.reload().timeline) == [done]


def test_creating_an_existing_timeline_file_raises_commit_conflict_and_keeps_content(tmp_path):
    active = fresh(tmp_path)
    active.create_requested(T1, Action.DELTA_COMMIT, b"first")
    with pytest.raises(CommitConflictError, match=f"{T1}.deltacommit.requested"):
        active.create_requested(T1, Action.DELTA_COMMIT, b"second")
    assert (tmp_path / ".hoodie" / f"{T1}.deltacommit.requested").read_bytes() == b"first"
    assert hoodie_files(tmp_path) == [f"{T1}.deltacommit.requested"], (
        "no temporary file is left behind"
    )


def test_completing_twice_raises_commit_conflict(tmp_path):
    active = fresh(tmp_path)
    inflight = active.transition_to_inflight(active.create_requested(T1, Action.COMMIT))
    active.complete(inflight, b"one")
    with pytest.raises(CommitConflictError):
        active.complete(inflight, b"two")
    assert (tmp_path / ".hoodie" / f"{T1}.commit").read_bytes() == b"one"


def test_concurrent_completions_of_one_instant_let_exactly_one_writer_win(tmp_path):
    fresh(tmp_path).create_requested(T1, Action.COMMIT)
    payloads = [
        encode_commit_metadata(CommitMetadata(extra_metadata={"writer": str(n)})) for n in range(8)
    ]

    def attempt(payload: bytes) -> bool:
        active = fresh(tmp_path)
        try:
            active.complete(Instant(T1, Action.COMMIT, State.INFLIGHT), payload)
        except CommitConflictError:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(attempt, payloads))
    assert results.count(True) == 1
    assert (tmp_path / ".hoodie" / f"{T1}.commit").read_bytes() == payloads[results.index(True)]
    assert hoodie_files(tmp_path) == [f"{T1}.commit", f"{T1}.commit.requested"]


def test_reload_keeps_highest_state_per_instant_and_ignores_other_files(tmp_path):
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    for name in (
        f"{T1}.commit.requested",
        f"{T1}.inflight",
        f"{T1}.commit",
        f"{T2}.deltacommit.requested",
        f"{T2}.deltacommit.inflight",
        f"{T3}.clean.requested",
        "hoodie.properties",
        f"{T3}.bogus",
        ".aux",
    ):
        (hoodie / name).write_bytes(b"")
    (hoodie / "archived").mkdir()
    timeline = fresh(tmp_path).timeline
    assert [(i.time, i.action, i.state) for i in timeline] == [
        (T1, Action.COMMIT, State.COMPLETED),
        (T2, Action.DELTA_COMMIT, State.INFLIGHT),
        (T3, Action.CLEAN, State.REQUESTED),
    ]


def test_delete_pending_files_removes_requested_and_inflight(tmp_path):
    active = fresh(tmp_path)
    inflight = active.transition_to_inflight(active.create_requested(T1, Action.COMMIT))
    active.create_requested(T2, Action.DELTA_COMMIT)
    active.delete_pending_files(inflight)
    assert hoodie_files(tmp_path) == [f"{T2}.deltacommit.requested"]
    assert active.timeline.times() == [T2]
    assert active.reload().timeline.times() == [T2]


def test_revert_inflight_to_requested_drops_only_the_inflight_file(tmp_path):
    active = fresh(tmp_path)
    inflight = active.transition_to_inflight(
        active.create_requested(T1, Action.COMPACTION, b"plan")
    )
    reverted = active.revert_inflight_to_requested(inflight)
    assert reverted.state is State.REQUESTED
    assert hoodie_files(tmp_path) == [f"{T1}.compaction.requested"]
    assert list(active.reload().timeline) == [reverted]


def test_layout_2_completion_names_the_file_with_a_later_completion_time(tmp_path):
    folder = tmp_path / ".hoodie" / "timeline"
    folder.mkdir(parents=True)
    active = ActiveTimeline.load(Storage.for_uri(str(tmp_path))[0], str(tmp_path), 2)
    requested = active.create_requested(T1, Action.DELTA_COMMIT)
    inflight = active.transition_to_inflight(requested, b"x")
    done = active.complete(inflight, b"y")
    assert done.completion_time is not None and done.completion_time > T1
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        f"{T1}.deltacommit.inflight",
        f"{T1}.deltacommit.requested",
        f"{T1}_{done.completion_time}.deltacommit",
    ]
    reloaded = ActiveTimeline.load(Storage.for_uri(str(tmp_path))[0], str(tmp_path), 2)
    assert list(reloaded.timeline) == [done]
    assert reloaded.read_content(done) == b"y"
    with pytest.raises(UnsupportedVersionError):
        ActiveTimeline(active.storage, str(tmp_path), 3).create_requested(T2, Action.COMMIT)


def test_instant_path_of_v8_completed_instant_includes_completion_time(tmp_path):
    active = ActiveTimeline(Storage.for_uri(str(tmp_path))[0], str(tmp_path), 2)
    done = Instant(T1, Action.DELTA_COMMIT, State.COMPLETED, T2)
    assert active.instant_path(done).endswith(f".hoodie/timeline/{T1}_{T2}.deltacommit")
    pending = Instant(T1, Action.DELTA_COMMIT, State.INFLIGHT)
    assert active.instant_path(pending).endswith(f".hoodie/timeline/{T1}.deltacommit.inflight")
