"""An immutable view of instants, with the filters readers and writers need (§2.9)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pyhudi.model.instant import Action, Instant, InstantTime, State

#: Actions of the "commits timeline": what adds or replaces data files.
COMMIT_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})


@dataclass(frozen=True)
class Timeline:
    """Instants sorted by time (then action, then state)."""

    instants: tuple[Instant, ...] = ()

    @classmethod
    def of(cls, instants: Iterable[Instant]) -> Timeline:
        return cls(tuple(sorted(instants, key=Instant.sort_key)))

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def __bool__(self) -> bool:
        return bool(self.instants)

    def filter(self, predicate: Callable[[Instant], bool]) -> Timeline:
        return Timeline(tuple(i for i in self.instants if predicate(i)))

    # ---- common filters ----------------------------------------------------------------------
    def completed(self) -> Timeline:
        return self.filter(lambda i: i.is_completed)

    def pending(self) -> Timeline:
        return self.filter(lambda i: i.is_pending)

    def with_actions(self, *actions: Action) -> Timeline:
        wanted = set(actions)
        return self.filter(lambda i: i.action in wanted)

    def commits(self) -> Timeline:
        """Completed commit, deltacommit and replacecommit instants."""
        return self.filter(lambda i: i.is_completed and i.action in COMMIT_ACTIONS)

    def write_timeline(self) -> Timeline:
        """Every instant of a data-writing action (pending compaction and clustering included)."""
        return self.filter(lambda i: i.action.is_write)

    def pending_compactions(self) -> Timeline:
        return self.filter(lambda i: i.is_pending and i.action is Action.COMPACTION)

    def pending_log_compactions(self) -> Timeline:
        return self.filter(lambda i: i.is_pending and i.action is Action.LOG_COMPACTION)

    def up_to(self, time: str | None) -> Timeline:
        """Instants at or before `time` (all when None)."""
        if time is None:
            return self
        return self.filter(lambda i: i.time <= time)

    def between(self, start_exclusive: str | None, end_inclusive: str | None) -> Timeline:
        return self.filter(
            lambda i: (
                (start_exclusive is None or i.time > start_exclusive)
                and (end_inclusive is None or i.time <= end_inclusive)
            )
        )

    # ---- lookups -----------------------------------------------------------------------------
    @property
    def first(self) -> Instant | None:
        return self.instants[0] if self.instants else None

    @property
    def last(self) -> Instant | None:
        return self.instants[-1] if self.instants else None

    def times(self) -> list[InstantTime]:
        return [i.time for i in self.instants]

    def find(self, time: str) -> Instant | None:
        for instant in self.instants:
            if instant.time == time:
                return instant
        return None

    def contains_time(self, time: str) -> bool:
        return any(i.time == time for i in self.instants)

    def contains_or_before_start(self, time: str) -> bool:
        """Hudi's `containsOrBeforeTimelineStarts`: in the timeline, or older than all of it (archived)."""
        first = self.first
        return self.contains_time(time) or (first is not None and time < first.time)

    def is_before_start(self, time: str) -> bool:
        first = self.first
        return first is not None and time < first.time

    def state_of(self, time: str) -> State | None:
        instant = self.find(time)
        return instant.state if instant else None
