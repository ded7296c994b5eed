"""`pyhudi.timeline.instant_time`: generating strictly increasing instants and normalising query instants."""

from __future__ import annotations

import itertools
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest

from pyhudi.model.instant import InstantTime
from pyhudi.timeline import instant_time as it
from pyhudi.timeline import new_instant_time, normalize_instant_time, parse_instant


@pytest.fixture(autouse=True)
def isolated_generator(monkeypatch):
    """Tests may push the process-wide "last generated" instant far ahead; restore it afterwards."""
    monkeypatch.setattr(it, "_last_generated", it._last_generated)


def test_new_instant_time_is_seventeen_digit_utc_now():
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    made = new_instant_time()
    assert re.fullmatch(r"\d{17}", made) and isinstance(made, InstantTime)
    assert before <= parse_instant(made) <= datetime.now(timezone.utc) + timedelta(seconds=1)


def test_new_instant_time_is_strictly_increasing_when_called_fast():
    times = [new_instant_time() for _ in range(3000)]
    assert all(a < b for a, b in itertools.pairwise(times))


def test_new_instant_time_is_unique_across_threads():
    with ThreadPoolExecutor(max_workers=8) as pool:
        times = list(pool.map(lambda _: new_instant_time(), range(800)))
    assert len(set(times)) == len(times)


def test_new_instant_time_sorts_after_existing_later_instants():
    future = "29991231235959998"
    first = new_instant_time([future, "20240101000000000"])
    assert first == "29991231235959999"
    assert new_instant_time([future]) == "30000101000000000"


def test_new_instant_time_after_legacy_and_metadata_table_instants():
    assert (
        new_instant_time(["29990101000000"]) == "29990101000001000"
    )  # 14 digits parse as ...999 ms
    assert new_instant_time(["29990101000002123010"]) == "29990101000002124"  # MDT suffix ignored


def test_new_instant_time_in_local_time_is_also_increasing():
    local = [new_instant_time(utc=False) for _ in range(50)]
    assert all(a < b for a, b in itertools.pairwise(local))


def test_parse_instant_reads_milliseconds_and_pads_legacy_times():
    assert parse_instant("20240418172802262") == datetime(
        2024, 4, 18, 17, 28, 2, 262000, tzinfo=timezone.utc
    )
    assert parse_instant("20240418172802") == datetime(
        2024, 4, 18, 17, 28, 2, 999000, tzinfo=timezone.utc
    )
    assert parse_instant("20240418172802262010").microsecond == 262000


def test_format_instant_truncates_to_milliseconds():
    assert it.format_instant(datetime(2024, 4, 18, 17, 28, 2, 262999)) == "20240418172802262"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("20240418172802262", "20240418172802262"),
        ("20240418172802", "20240418172802"),
        ("2024-04-18 17:28:02.262", "20240418172802262"),
        ("2024-04-18 17:28:02", "20240418172802000"),
        ("2024-04-18T17:28:02.262", "20240418172802262"),
        ("2024-04-18T17:28:02", "20240418172802000"),
        ("2024-04-18", "20240418000000000"),
        ("  2024-04-18  ", "20240418000000000"),
    ],
)
def test_normalize_instant_time_accepts_hudi_query_instant_forms(text, expected):
    assert normalize_instant_time(text) == expected


def test_normalize_day_is_the_start_of_that_day():
    day = normalize_instant_time("2024-02-29")
    assert day == "20240229000000000" and day < "20240229000000001"


@pytest.mark.parametrize(
    "text", ["", "yesterday", "2024/04/18", "2024-13-01", "202404181728", "2024-04-18 25:00:00"]
)
def test_normalize_instant_time_rejects_other_text_naming_the_value(text):
    with pytest.raises(ValueError, match="not an instant time"):
        normalize_instant_time(text)


@pytest.mark.parametrize("text", ["00000000000000", "00000000000001", "20240101000000000010"])
def test_instant_time_type_accepts_special_and_metadata_table_instants(text):
    assert InstantTime(text) == text


@pytest.mark.parametrize("text", ["2024", "2024010100000000", "2024-01-01", "20240101000000000a"])
def test_instant_time_type_rejects_malformed_times(text):
    with pytest.raises(ValueError):
        InstantTime(text)
