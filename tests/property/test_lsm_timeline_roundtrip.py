"""Random LSM history rows and manifests (`codec/lsm_timeline.py`) round-trip; a damaged parquet
file or manifest is a `CorruptFileError`, never a silent misread."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.codec.lsm_timeline import (
    LsmFileEntry,
    LsmInstant,
    decode_lsm_file,
    decode_manifest,
    encode_lsm_file,
    encode_manifest,
    lsm_file_name,
    parse_lsm_file_name,
)
from pyhudi.exceptions import CorruptFileError

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TIMES = st.integers(10**16, 10**17 - 1).map(str)
PAYLOAD = st.one_of(st.none(), st.binary(min_size=1, max_size=6000))
ROWS = st.lists(
    st.builds(
        LsmInstant,
        instant_time=TIMES,
        completion_time=st.one_of(st.none(), TIMES),
        action=st.sampled_from(["commit", "deltacommit", "clean", "rollback", "replacecommit"]),
        metadata=PAYLOAD,
        plan=PAYLOAD,
    ),
    min_size=1,
    max_size=8,
)
ENTRIES = st.lists(
    st.builds(
        LsmFileEntry,
        file_name=st.builds(lsm_file_name, TIMES, TIMES, st.integers(0, 9)),
        file_len=st.integers(0, 2**40),
    ),
    max_size=6,
)


@SETTINGS
@given(ROWS)
def test_history_rows_round_trip(rows: list[LsmInstant]) -> None:
    assert decode_lsm_file(encode_lsm_file(rows)) == rows


@SETTINGS
@given(ROWS, st.data())
def test_a_truncated_history_file_is_corrupt(rows: list[LsmInstant], data: st.DataObject) -> None:
    encoded = encode_lsm_file(rows)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(CorruptFileError):
        decode_lsm_file(encoded[:cut])


@SETTINGS
@given(ENTRIES)
def test_manifests_round_trip_and_are_json(entries: list[LsmFileEntry]) -> None:
    encoded = encode_manifest(entries)
    assert decode_manifest(encoded) == entries
    assert [f["fileName"] for f in json.loads(encoded)["files"]] == [e.file_name for e in entries]
    for entry in entries:
        assert parse_lsm_file_name(entry.file_name) is not None


@SETTINGS
@given(ENTRIES.filter(bool), st.data())
def test_a_truncated_manifest_is_corrupt(entries: list[LsmFileEntry], data: st.DataObject) -> None:
    encoded = encode_manifest(entries)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(CorruptFileError):
        decode_manifest(encoded[:cut])
