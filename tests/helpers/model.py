"""An in-memory model of what a table must contain after a sequence of writes (the expected rows)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.helpers.oracle import normalize


@dataclass
class TableModel:
    """key -> (commit time, row) per instant; the truth every reader is checked against."""

    key: str
    partition: str | None = None
    history: list[tuple[str, dict[str, tuple[str, dict[str, Any]]]]] = field(default_factory=list)

    @property
    def state(self) -> dict[str, tuple[str, dict[str, Any]]]:
        return dict(self.history[-1][1]) if self.history else {}

    def _commit(self, instant: str, state: dict[str, tuple[str, dict[str, Any]]]) -> None:
        self.history.append((instant, state))

    def upsert(
        self,
        instant: str,
        rows: list[dict[str, Any]],
        *,
        ordering: str | None = None,
        event_time: bool = False,
    ) -> None:
        state = self.state
        for row in _dedup(rows, self.key, ordering):
            current = state.get(str(row[self.key]))
            if event_time and ordering and current and current[1][ordering] > row[ordering]:
                continue
            if row.get("_hoodie_is_deleted"):
                state.pop(str(row[self.key]), None)
                continue
            state[str(row[self.key])] = (instant, dict(row))
        self._commit(instant, state)

    def insert(self, instant: str, rows: list[dict[str, Any]]) -> None:
        self.upsert(instant, rows)

    def delete(self, instant: str, keys: list[Any]) -> None:
        state = self.state
        for key in keys:
            state.pop(str(key), None)
        self._commit(instant, state)

    def overwrite(self, instant: str, rows: list[dict[str, Any]], *, whole_table: bool) -> None:
        state = self.state
        partitions = {r[self.partition] for r in rows} if self.partition else set()
        if whole_table:
            state = {}
        else:
            state = {k: v for k, v in state.items() if v[1][self.partition] not in partitions}
        for row in rows:
            state[str(row[self.key])] = (instant, dict(row))
        self._commit(instant, state)

    def drop_partitions(self, instant: str, values: set[Any]) -> None:
        self._commit(
            instant, {k: v for k, v in self.state.items() if v[1][self.partition] not in values}
        )

    def snapshot(self, as_of: str | None = None) -> list[dict[str, Any]]:
        states = [s for t, s in self.history if as_of is None or t <= as_of]
        current = states[-1] if states else {}
        return _rows(current)

    def incremental(
        self, begin_exclusive: str, end_inclusive: str | None = None
    ) -> list[dict[str, Any]]:
        states = [s for t, s in self.history if end_inclusive is None or t <= end_inclusive]
        current = states[-1] if states else {}
        changed = {k: v for k, v in current.items() if v[0] > begin_exclusive}
        return _rows(changed)

    @property
    def instants(self) -> list[str]:
        return [t for t, _ in self.history]


def _dedup(rows: list[dict[str, Any]], key: str, ordering: str | None) -> list[dict[str, Any]]:
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        k = str(row[key])
        if k not in best or (ordering and row[ordering] >= best[k][ordering]):
            best[k] = row
    return list(best.values())


def _rows(state: dict[str, tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for key, (instant, row) in sorted(state.items()):
        out.append(
            {
                "_hoodie_commit_time": instant,
                "_hoodie_record_key": key,
                **{k: normalize(v) for k, v in row.items()},
            }
        )
    return out


def project(table_rows: list[dict[str, Any]], columns: list[str]) -> list[dict[str, Any]]:
    return sorted(
        ({c: r.get(c) for c in columns} for r in table_rows),
        key=lambda r: str(r["_hoodie_record_key"]),
    )
