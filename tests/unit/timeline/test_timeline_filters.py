"""`pyhudi.timeline.Timeline`: an immutable, sorted view of instants and its filters."""

from __future__ import annotations

import pytest

from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.timeline import COMMIT_ACTIONS, Timeline

A = Action
REQ, INF, DONE = State.REQUESTED, State.INFLIGHT, State.COMPLETED


def instant(time: str, action: Action = A.COMMIT, state: State = DONE) -> Instant:
    return Instant(InstantTime(time), action, state)


def t(n: int) -> str:
    """The n-th instant time of a made-up day: 20240101000000001, ...002, ..."""
    return f"20240101000000{n:03d}"


@pytest.fixture
def mixed() -> Timeline:
    return Timeline.of(
        [
            instant(t(7), A.DELTA_COMMIT, INF),
            instant(t(1), A.COMMIT),
            instant(t(5), A.COMPACTION, REQ),
            instant(t(3), A.REPLACE_COMMIT),
            instant(t(2), A.CLEAN),
            instant(t(4), A.DELTA_COMMIT),
            instant(t(6), A.ROLLBACK),
            instant(t(8), A.REPLACE_COMMIT, REQ),
            instant(t(9), A.LOG_COMPACTION, INF),
        ]
    )


def test_timeline_of_sorts_by_time(mixed):
    assert mixed.times() == [t(n) for n in range(1, 10)]
    assert mixed.first == instant(t(1)) and mixed.last == instant(t(9), A.LOG_COMPACTION, INF)


def test_timeline_sorts_one_time_by_action_then_state():
    same = Timeline.of(
        [instant(t(1), A.COMMIT, DONE), instant(t(1), A.COMMIT, REQ), instant(t(1), A.COMMIT, INF)]
    )
    assert [i.state for i in same] == [REQ, INF, DONE]


def test_empty_timeline_is_falsy_with_no_first_or_last():
    empty = Timeline()
    assert not empty and len(empty) == 0
    assert empty.first is None and empty.last is None
    assert not empty.is_before_start(t(1)) and not empty.contains_or_before_start(t(1))


def test_completed_and_pending_split_the_timeline(mixed):
    assert mixed.completed().times() == [t(1), t(2), t(3), t(4), t(6)]
    assert mixed.pending().times() == [t(5), t(7), t(8), t(9)]
    assert len(mixed.completed()) + len(mixed.pending()) == len(mixed)


def test_commits_are_completed_commit_deltacommit_and_replacecommit(mixed):
    assert mixed.commits().times() == [t(1), t(3), t(4)]
    assert all(i.action in COMMIT_ACTIONS for i in mixed.commits())


def test_write_timeline_includes_pending_table_services_but_not_clean_or_rollback(mixed):
    assert mixed.write_timeline().times() == [t(1), t(3), t(4), t(5), t(7), t(8), t(9)]


def test_pending_compactions_and_log_compactions(mixed):
    assert mixed.pending_compactions().times() == [t(5)]
    assert mixed.pending_log_compactions().times() == [t(9)]


def test_with_actions_filters_exact_actions(mixed):
    assert mixed.with_actions(A.REPLACE_COMMIT).times() == [t(3), t(8)]
    assert mixed.with_actions(A.CLEAN, A.ROLLBACK).times() == [t(2), t(6)]
    assert not mixed.with_actions(A.SAVEPOINT)


def test_up_to_is_inclusive_and_none_means_everything(mixed):
    assert mixed.up_to(t(3)).times() == [t(1), t(2), t(3)]
    assert mixed.up_to(None) is mixed
    assert not mixed.up_to("20231231235959999")


def test_between_excludes_start_and_includes_end(mixed):
    assert mixed.between(t(2), t(4)).times() == [t(3), t(4)]
    assert mixed.between(None, t(2)).times() == [t(1), t(2)]
    assert mixed.between(t(8), None).times() == [t(9)]
    assert not mixed.between(t(4), t(4))


def test_find_contains_and_state_of(mixed):
    assert mixed.find(t(5)) == instant(t(5), A.COMPACTION, REQ)
    assert mixed.find("20991231000000000") is None
    assert mixed.contains_time(t(6)) and not mixed.contains_time("20991231000000000")
    assert mixed.state_of(t(7)) is INF and mixed.state_of("20991231000000000") is None


def test_before_start_means_older_than_the_first_instant(mixed):
    assert mixed.is_before_start("20231231000000000")
    assert not mixed.is_before_start(t(1))
    assert mixed.contains_or_before_start("20231231000000000")
    assert mixed.contains_or_before_start(t(4))
    assert not mixed.contains_or_before_start(t(10))


def test_legacy_fourteen_digit_times_compare_as_strings():
    timeline = Timeline.of([instant("20240101000000"), instant(t(1))])
    assert timeline.times() == ["20240101000000", t(1)]
    assert timeline.up_to("20240101000000").times() == ["20240101000000"]


def test_filters_return_new_timelines_and_leave_the_original_alone(mixed):
    before = mixed.instants
    mixed.completed().filter(lambda i: False)
    assert mixed.instants == before
    assert isinstance(mixed.filter(lambda i: True), Timeline)


def test_instant_with_state_completed_files_table_services_under_their_commit_action():
    assert instant(t(1), A.COMPACTION, REQ).with_state(DONE).action is A.COMMIT
    assert instant(t(1), A.LOG_COMPACTION, INF).with_state(DONE).action is A.DELTA_COMMIT
    assert instant(t(1), A.CLUSTERING, INF).with_state(DONE).action is A.REPLACE_COMMIT
    assert instant(t(1), A.COMPACTION, REQ).with_state(INF).action is A.COMPACTION
