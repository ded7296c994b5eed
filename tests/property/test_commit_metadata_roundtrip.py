"""Round trips of commit metadata (v6 JSON) over generated write stats."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.commit_metadata import (
    decode_commit_metadata,
    encode_commit_metadata,
    stat_from_json,
    stat_to_json,
)
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType

SETTINGS = settings(max_examples=50, deadline=None)

instants = st.from_regex(r"\A20[0-9]{15}\Z")
file_ids = st.uuids().map(lambda u: f"{u}-0") | st.just("")
partitions = st.sampled_from(["", "city=sf", "10", "2023/04/01/12", "a=1/b=2"]) | st.text(
    max_size=10
)
counters = st.integers(0, 2**62)
names = st.text(max_size=40)


@st.composite
def write_stats(draw: st.DrawFn) -> WriteStat:
    stat = WriteStat(
        file_id=draw(file_ids),
        path=draw(st.none() | names),
        partition_path=draw(st.none() | partitions),
        prev_commit=draw(st.just("null") | instants),
        num_writes=draw(counters),
        num_deletes=draw(counters),
        num_update_writes=draw(counters),
        num_inserts=draw(counters),
        total_write_bytes=draw(counters),
        total_write_errors=draw(counters),
        file_size_bytes=draw(counters),
        total_log_records=draw(counters),
        total_log_files_compacted=draw(counters),
        total_log_size_compacted=draw(counters),
        total_updated_records_compacted=draw(counters),
        total_log_blocks=draw(counters),
        total_corrupt_log_blocks=draw(counters),
        total_rollback_blocks=draw(counters),
        min_event_time=draw(st.none() | st.integers(-(2**62), 2**62)),
        max_event_time=draw(st.none() | st.integers(-(2**62), 2**62)),
        runtime_stats=draw(
            st.none()
            | st.dictionaries(
                st.sampled_from(["totalScanTime", "totalUpsertTime", "totalCreateTime"]), counters
            )
        ),
    )
    if draw(st.booleans()):  # a HoodieDeltaWriteStat of a log append
        stat = stat.with_changes(
            log_version=draw(st.integers(1, 1000)),
            log_offset=draw(counters),
            base_file=draw(names),
            log_files=draw(st.none() | st.lists(names, max_size=4).map(tuple)),
        )
    return stat


@st.composite
def commit_metadata(draw: st.DrawFn) -> CommitMetadata:
    stats = draw(
        st.dictionaries(partitions, st.lists(write_stats(), max_size=3).map(tuple), max_size=3)
    )
    replaced = draw(
        st.none()
        | st.dictionaries(partitions, st.lists(file_ids, max_size=3).map(tuple), max_size=3)
    )
    return CommitMetadata(
        partition_to_write_stats=stats,
        operation_type=draw(st.sampled_from(list(WriteOperationType))),
        extra_metadata=draw(
            st.dictionaries(st.text(max_size=10), st.text(max_size=30), max_size=4)
        ),
        compacted=draw(st.booleans()),
        partition_to_replace_file_ids=replaced,
    )


@SETTINGS
@given(commit_metadata())
def test_encode_then_decode_gives_back_the_metadata(metadata):
    assert decode_commit_metadata(encode_commit_metadata(metadata)) == metadata


@SETTINGS
@given(commit_metadata())
def test_encoded_metadata_is_utf8_json_with_hudi_top_level_fields(metadata):
    doc = json.loads(encode_commit_metadata(metadata).decode("utf-8"))
    expected = ["partitionToWriteStats", "compacted", "extraMetadata", "operationType"]
    if metadata.is_replace:
        expected.append("partitionToReplaceFileIds")
    assert list(doc) == expected
    assert doc["operationType"] == metadata.operation_type.value


@SETTINGS
@given(write_stats())
def test_write_stat_json_round_trips_and_marks_delta_stats(stat):
    doc = stat_to_json(stat)
    assert stat_from_json(doc) == stat
    assert ("logVersion" in doc) is stat.is_delta
    assert doc["cdcStats"] is None and doc["tempPath"] is None


@SETTINGS
@given(commit_metadata())
def test_totals_and_replaced_ids_survive_the_round_trip(metadata):
    decoded = decode_commit_metadata(encode_commit_metadata(metadata))
    for counter in ("num_writes", "num_inserts", "total_write_bytes"):
        assert decoded.total(counter) == metadata.total(counter)
    assert decoded.replaced_file_ids() == metadata.replaced_file_ids()
    assert decoded.written_file_names() == metadata.written_file_names()
