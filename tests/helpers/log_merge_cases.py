"""Sequences of log versions of one key over a base record, with what Hudi shows after each
table version's rules: the cases of tests/unit/merge/test_log_merge_rules.py (pyhudi's merge
alone) and tests/judge/test_log_merge_rules.py (Hudi 0.15 and 1.2 write them).

Every key has the base record ts=10 (`v`="b"); then its events, oldest first: ("r", ts) an
upsert, ("d", ts) an upsert with `_hoodie_is_deleted=true` (Hudi writes it as a log delete
carrying its ordering value), ("n", ts) the `delete` operation (a natural-order log delete: the
row's ts is not written). What a snapshot shows is given per rule set, in the order of `RULES`:
"r<ts>" (that upsert), "b" (the base record) or None (deleted).
"""

from __future__ import annotations

import pyarrow as pa

#: The rule sets: table version 6 with Hudi 0.15's payloads, version 9 with Hudi 1.2's modes.
RULES = ("v6 overwrite", "v6 default", "v9 commit", "v9 event")

Events = list[tuple[str, int]]
CASES: dict[str, tuple[Events, tuple[str | None, ...]]] = {
    # The reported case: a stale soft delete after a newer log update.
    "stale delete": ([("r", 21), ("d", 15)], ("r21", "r21", None, "r21")),
    "newer delete": ([("r", 21), ("d", 25)], (None, None, None, None)),
    "tied delete": ([("r", 21), ("d", 21)], (None, None, None, None)),
    "stale update": ([("r", 21), ("r", 15)], ("r21", "r21", "r15", "r21")),
    "tied update": ([("r", 21), ("r", 21)], ("r21", "r21", "r21", "r21")),
    "hard delete": ([("r", 21), ("n", 1)], (None, None, None, None)),
    "stale delete vs base": ([("d", 5)], (None, None, None, "b")),
    "stale update vs base": ([("r", 5)], ("r5", "b", "r5", "b")),
    "tied update vs base": ([("r", 10)], ("r10", "r10", "r10", "r10")),
    # Hudi 0.15: a delete that applied is an empty payload any later record replaces; Hudi 1.2
    # keeps its ordering value, and only a greater or equal record replaces it.
    "update after newer delete": ([("d", 25), ("r", 15)], ("r15", "r15", "r15", None)),
    "update after delete": ([("d", 15), ("r", 12)], ("r12", "r12", "r12", None)),
    "update after hard delete": ([("n", 1), ("r", 5)], ("r5", "b", "r5", "b")),
    "ignored delete, update": ([("r", 21), ("d", 15), ("r", 18)], ("r21", "r21", "r18", "r21")),
    "stale updates": ([("r", 5), ("r", 7)], ("r7", "b", "r7", "b")),
    "two deletes, update": ([("d", 15), ("d", 12), ("r", 11)], ("r11", "r11", "r11", None)),
    "hard delete alone": ([("n", 1)], (None, None, None, None)),
    "update, hard delete, update": (
        [("r", 21), ("n", 1), ("r", 12)],
        ("r12", "r12", "r12", "r12"),
    ),
    # Hudi 1.2: an ordered delete right after a natural-order one is ignored (the natural marker
    # stays), so the update after it is not compared with it.
    "hard delete, newer delete, update": (
        [("n", 1), ("d", 25), ("r", 15)],
        ("r15", "r15", "r15", "r15"),
    ),
    "hard delete, update, stale delete": (
        [("n", 1), ("r", 15), ("d", 12)],
        ("r15", "r15", None, "r15"),
    ),
}

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("part", pa.string()),
        ("ts", pa.int64()),
        ("v", pa.string()),
        ("_hoodie_is_deleted", pa.bool_()),
    ]
)


def key_of(index: int) -> str:
    return f"k{index:03d}"


def keys() -> dict[str, str]:
    """Case name -> its record key."""
    return {name: key_of(i) for i, name in enumerate(CASES)}


def expected(rules: str) -> dict[str, tuple[int, str]]:
    """Record key -> (ts, v) of what a snapshot shows under `rules`."""
    index = RULES.index(rules)
    out = {}
    for name, key in keys().items():
        shown = CASES[name][1][index]
        if shown is not None:
            out[key] = (10, "b") if shown == "b" else (int(shown[1:]), shown)
    return out


def _rows(rows: list[tuple[str, int, str, bool]]) -> pa.Table:
    names = SCHEMA.names
    return pa.Table.from_pylist(
        [dict(zip(names, (key, "p", ts, v, gone))) for key, ts, v, gone in rows], SCHEMA
    )


def commits() -> list[tuple[str, pa.Table]]:
    """(operation, rows) per commit: the base records, then each round of events (the i-th event
    of every key) as an upsert (updates and `_hoodie_is_deleted` deletes) and a `delete`."""
    steps = [("upsert", _rows([(key, 10, "b", False) for key in keys().values()]))]
    rounds = max(len(events) for events, _ in CASES.values())
    for i in range(rounds):
        upserts, deletes = [], []
        for name, key in keys().items():
            events = CASES[name][0]
            if i >= len(events):
                continue
            kind, ts = events[i]
            if kind == "n":
                deletes.append((key, ts, "x", False))
            else:
                upserts.append((key, ts, f"r{ts}" if kind == "r" else f"d{ts}", kind == "d"))
        steps.extend(
            (op, _rows(rows)) for op, rows in (("upsert", upserts), ("delete", deletes)) if rows
        )
    return steps
