"""Partition path rules: what Hudi allows stays allowed; what leaves the table or breaks readers not."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pyhudi.storage.segments import first_invalid_index, partition_path_problem

ALLOWED = [
    "2024/01/31",
    "__HIVE_DEFAULT_PARTITION__",
    "country=DE",
    "région/Île-de-France",
    "东京",
    "a b",
    "50%",
    "a%2Fb",
    "x:y",
    "..a",
    "a..",
    "é" * 127,
]
REJECTED = {
    "../../escape": "'..' path segment",
    "/somewhere": "empty path segment",
    "a//b": "empty path segment",
    "trailing/": "empty path segment",
    ".": "'.' path segment",
    "x/./y": "'.' path segment",
    "a\nb": "U+000A",
    "a\x00b": "U+0000",
    "a\x7fb": "U+007F",
    "a\x85b": "U+0085",
    "x" * 256: "256 bytes",
    "é" * 128: "256 bytes",
}


@pytest.mark.parametrize("value", ALLOWED)
def test_hudi_partition_values_stay_allowed(value: str) -> None:
    assert partition_path_problem(value) is None
    assert first_invalid_index(pa.array([value, "ok"])) is None


@pytest.mark.parametrize(("value", "problem"), sorted(REJECTED.items()))
def test_values_that_leave_the_table_or_break_readers_are_rejected(
    value: str, problem: str
) -> None:
    found = partition_path_problem(value)
    assert found is not None and problem in found
    assert first_invalid_index(pa.array(["ok", "2024/01/01", value, "../x"])) == 2


def test_arrow_check_handles_chunks_and_nulls() -> None:
    values = pa.chunked_array([["a", None], ["b", "c/../d"]])
    assert first_invalid_index(values) == 1  # a null value is no folder name either
    assert first_invalid_index(pa.chunked_array([["a"], ["b/c"]])) is None
