"""Misspelt option keys: the declared key an unknown key was probably meant to be.

A key is taken for a misspelling of a declared one when

* it is the declared key with one dot-separated segment misspelt (the other segments equal): the
  segment within 1 edit when it has at most 4 characters, 2 up to 10, 3 beyond;
* or the whole key is within 2 edits of it (a dot lost or doubled, `hoodi.` for `hoodie.`);
* or it is the declared key without its first segment, three segments left
  (`datasource.write.operation`).

Edits are insertions, deletions, substitutions and swaps of two adjacent characters (optimal
string alignment). Declared keys themselves are never misspellings: two real Hudi keys may be one
edit apart (`hoodie.keep.min.commits`, `hoodie.keep.max.commits`).

>>> probable_key("hoodie.datasource.query.typ", ["hoodie.datasource.query.type", "as.of.instant"])
'hoodie.datasource.query.type'
"""

from __future__ import annotations

from collections.abc import Iterable

#: Whole-key edits still taken for a typo.
_WHOLE_KEY_EDITS = 2


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance of `a` and `b`, or `limit + 1` once it exceeds `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            cost = char_a != char_b
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, previous = previous, current
    return min(previous[-1], limit + 1)


def _segment_budget(segment: str) -> int:
    return 1 if len(segment) <= 4 else 2 if len(segment) <= 10 else 3


def _one_segment_misspelt(key: str, candidate: str) -> bool:
    given, declared = key.split("."), candidate.split(".")
    if len(given) != len(declared):
        return False
    differing = [(g, d) for g, d in zip(given, declared, strict=True) if g != d]
    if len(differing) != 1:
        return False
    g, d = differing[0]
    budget = _segment_budget(d)
    return edit_distance(g, d, budget) <= budget


def is_misspelling(key: str, candidate: str) -> bool:
    """Whether `key` (not a declared key) reads as a misspelling of the declared `candidate`."""
    if key == candidate:
        return False
    if key.count(".") >= 2 and candidate.split(".", 1)[-1] == key:
        return True
    if _one_segment_misspelt(key, candidate):
        return True
    return edit_distance(key, candidate, _WHOLE_KEY_EDITS) <= _WHOLE_KEY_EDITS


def probable_key(key: str, candidates: Iterable[str]) -> str | None:
    """The declared key `key` probably misspells (the nearest one), or None."""
    found = [c for c in candidates if is_misspelling(key, c)]
    if not found:
        return None
    return min(found, key=lambda c: (edit_distance(key, c, len(key) + len(c)), c))
