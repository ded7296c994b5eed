"""Instants of the timeline: a time, an action and a state (reference §2)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

#: yyyyMMddHHmmss[SSS], plus the metadata table's 3-digit suffixes: Hudi 1.x appends two to the
#: instants it initializes index partitions at (`<time>010` + `001` for their compaction).
_INSTANT_RE = re.compile(r"^\d{14}(\d{3})?(\d{3})?(\d{3})?$")


class InstantTime(str):
    """An instant time: `yyyyMMddHHmmssSSS` (17 digits), legacy 14 digits, or 20 digits in the MDT.

    Instant times compare as plain strings, as Hudi compares them.

    >>> InstantTime("20240418172802262") > InstantTime("00000000000001")
    True
    """

    __slots__ = ()

    def __new__(cls, value: str) -> InstantTime:
        if isinstance(value, InstantTime):
            return value
        if not _INSTANT_RE.match(value):
            raise ValueError(f"not an instant time (yyyyMMddHHmmssSSS): {value!r}")
        return super().__new__(cls, value)

    @classmethod
    def is_valid(cls, value: str) -> bool:
        return bool(_INSTANT_RE.match(value))


#: `00000000000000`: the initial instant.
INIT_INSTANT = InstantTime("00000000000000")
#: Commit time of a METADATA_ONLY bootstrap.
METADATA_BOOTSTRAP_INSTANT = InstantTime("00000000000001")
#: Commit time of a FULL_RECORD bootstrap.
FULL_BOOTSTRAP_INSTANT = InstantTime("00000000000002")


class Action(str, Enum):
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLUSTERING = "clustering"  # table version 8 pending clustering; completes as replacecommit
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"

    @property
    def completed_action(self) -> Action:
        """The action a completed instant of this action is filed under (compaction -> commit)."""
        return _COMPLETES_AS.get(self, self)

    @property
    def is_write(self) -> bool:
        """Actions that add data files (the "commits timeline")."""
        return self in _WRITE_ACTIONS


_COMPLETES_AS = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}
_WRITE_ACTIONS = frozenset(
    {
        Action.COMMIT,
        Action.DELTA_COMMIT,
        Action.REPLACE_COMMIT,
        Action.COMPACTION,
        Action.LOG_COMPACTION,
        Action.CLUSTERING,
    }
)


class State(str, Enum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"

    @property
    def rank(self) -> int:
        return _STATE_RANK[self]


_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


@dataclass(frozen=True, order=False)
class Instant:
    """One instant of the timeline.

    `action` is the action of the instant's *current* file: a completed compaction is
    `Instant(t, COMMIT, COMPLETED)`, a pending one `Instant(t, COMPACTION, REQUESTED)`.
    `completion_time` is only known on table version 8 timelines.
    """

    time: InstantTime
    action: Action
    state: State
    completion_time: InstantTime | None = None

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_pending(self) -> bool:
        return self.state is not State.COMPLETED

    @property
    def is_requested(self) -> bool:
        return self.state is State.REQUESTED

    @property
    def is_inflight(self) -> bool:
        return self.state is State.INFLIGHT

    def with_state(self, state: State) -> Instant:
        action = self.action.completed_action if state is State.COMPLETED else self.action
        return Instant(self.time, action, state)

    def sort_key(self) -> tuple[str, int, int]:
        return (self.time, _action_order(self.action), self.state.rank)

    def __str__(self) -> str:
        return f"[{self.time}__{self.action.value}__{self.state.value}]"


def _action_order(action: Action) -> int:
    # Hudi orders instants of one time by action name; only a stable order matters here.
    return list(Action).index(action)
