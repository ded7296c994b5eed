"""Which log version of a key wins, and then whether it beats the base record, under each table
version's rules: Hudi 0.15's payloads on table version 6 (`OverwriteWithLatestAvroPayload`,
`DefaultHoodieRecordPayload`), Hudi 1.2's merge modes on versions 8 and 9. The cases
(`tests/helpers/log_merge_cases.py`) are those tests/judge/test_log_merge_rules.py has Hudi write,
with Hudi's results."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from tests.helpers.log_merge_cases import CASES, RULES, Events

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.merge.config import MergeMode
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base, resolve_log

COMMIT, EVENT = MergeMode.COMMIT_TIME_ORDERING, MergeMode.EVENT_TIME_ORDERING
#: The rule set of each name of `RULES`: (merge mode, Hudi 1.x's rules = table version 8 or 9).
MODES = {
    "v6 overwrite": (COMMIT, False),
    "v6 default": (EVENT, False),
    "v9 commit": (COMMIT, True),
    "v9 event": (EVENT, True),
}


def _log(cases: dict[str, tuple[Events, tuple[str | None, ...]]]) -> pa.Table:
    rows = [(key, kind, ts) for key, (events, _) in cases.items() for kind, ts in events]
    return pa.table(
        {
            RECORD_KEY: [r[0] for r in rows],
            PARTITION_PATH: ["p"] * len(rows),
            "ts": pa.array([None if r[1] == "n" else r[2] for r in rows], pa.int64()),
            "v": pa.array([f"r{r[2]}" if r[1] == "r" else None for r in rows], pa.string()),
            DELETED: [r[1] != "r" for r in rows],
            NATURAL: [r[1] == "n" for r in rows],
            SEQ: pa.array(range(len(rows)), pa.int64()),
        }
    )


def _base(keys: list[str]) -> pa.Table:
    n = len(keys)
    return pa.table(
        {
            RECORD_KEY: keys,
            PARTITION_PATH: ["p"] * n,
            "ts": pa.array([10] * n, pa.int64()),
            "v": ["b"] * n,
        }
    )


def _snapshot(log: pa.Table, mode: MergeMode, hudi_1x: bool) -> dict[str, str]:
    winners = resolve_log(log, mode, "ts", hudi_1x)
    keys = pc.unique(log.column(RECORD_KEY)).to_pylist()
    merged = merge_with_base(_base(keys), winners, mode, "ts", hudi_1x)
    return dict(zip(merged.column(RECORD_KEY).to_pylist(), merged.column("v").to_pylist()))


@pytest.mark.parametrize("rules", RULES)
def test_log_versions_and_the_base_record_merge_as_hudi_merges_them(rules: str) -> None:
    index = RULES.index(rules)
    expected = {key: want[index] for key, (_, want) in CASES.items() if want[index] is not None}
    assert _snapshot(_log(CASES), *MODES[rules]) == expected


@pytest.mark.parametrize("rules", RULES)
def test_each_case_alone_merges_as_in_the_batch(rules: str) -> None:
    index = RULES.index(rules)
    for key, case in CASES.items():
        got = _snapshot(_log({key: case}), *MODES[rules])
        assert got == ({key: case[1][index]} if case[1][index] else {}), key


def test_a_stale_soft_delete_loses_to_a_newer_log_update_on_version_6_whatever_the_payload() -> (
    None
):
    """The reported reproduction: base ts=10, log ts=21, then `_hoodie_is_deleted` with ts=15."""
    log = _log({"k000": CASES["stale delete"]})
    for mode in (COMMIT, EVENT):
        winners = resolve_log(log, mode, "ts")
        assert winners.column("v").to_pylist() == ["r21"], mode
        assert winners.column(DELETED).to_pylist() == [False], mode
    (winner,) = resolve_log(log, COMMIT, "ts", ordered_deletes=True).to_pylist()
    assert winner[DELETED] and not winner[NATURAL]  # Hudi 1.2: the later version, the delete


def test_hudi_1x_ordered_deletes_compete_with_records_by_ordering_value() -> None:
    log = _log({"k": ([("r", 5), ("d", 7), ("r", 6)], ())})
    (winner,) = resolve_log(log, EVENT, "ts", ordered_deletes=True).to_pylist()
    assert (winner["ts"], winner[DELETED]) == (7, True)  # the delete, with its ordering value
    (winner,) = resolve_log(log, EVENT, "ts").to_pylist()
    assert (winner["v"], winner[DELETED]) == ("r6", False)  # Hudi 0.15: the delete reset it


def test_log_versions_are_ordered_except_under_hudi_1x_commit_time_ordering() -> None:
    assert COMMIT.orders_log_versions(hudi_1x=False)
    assert not COMMIT.orders_log_versions(hudi_1x=True)
    for mode in (EVENT, MergeMode.PARTIAL_UPDATE):
        assert mode.orders_log_versions(hudi_1x=False) and mode.orders_log_versions(hudi_1x=True)
