"""Service plans from the timeline are checked before they write: partitions stay in the table."""

from __future__ import annotations

import pytest

from pyhudi.exceptions import CorruptFileError
from pyhudi.services.checks import check_plan_partitions


def test_plans_naming_folders_outside_the_table_are_refused() -> None:
    check_plan_partitions(["", "2024/01/31", "city=..", "東京"], "20240101000000000", "compaction")
    for bad in ["../../escape", "/somewhere", "a\nb"]:
        with pytest.raises(
            CorruptFileError, match=r"clustering plan 20240101000000000 .*partition"
        ):
            check_plan_partitions(["ok", bad], "20240101000000000", "clustering")
