"""Round trips of the Java `.properties` codec over arbitrary Unicode keys and values."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec.properties import (
    dump_partition_metadata,
    dump_properties,
    dump_table_properties,
    load_partition_metadata,
    load_properties,
    table_checksum,
)

SETTINGS = settings(max_examples=50, deadline=None)

#: Any Unicode text (Hypothesis leaves out lone surrogates, which no Java string would write here).
texts = st.text(max_size=30)
#: Text full of the characters the escaping must handle.
tricky = st.text(
    alphabet=st.sampled_from(list(" =:#!\\\t\n\r\f\x00\x7f\x85\xa0é€中😀ab")), max_size=20
)
entries = st.dictionaries(texts | tricky, texts | tricky, max_size=12)
comments = st.lists(
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20), max_size=3
)
instants = st.from_regex(r"\A20[0-9]{15}\Z")


@SETTINGS
@given(entries, comments)
def test_dump_then_load_gives_back_every_entry(props, notes):
    assert load_properties(dump_properties(props, tuple(notes))) == props


@SETTINGS
@given(entries)
def test_dumped_properties_are_ascii_with_one_line_per_entry(props):
    data = dump_properties(props)
    assert data.isascii()
    assert len([line for line in data.split(b"\n") if line]) == len(props)


@SETTINGS
@given(entries)
def test_dump_is_a_fixed_point_after_one_round_trip(props):
    once = dump_properties(props)
    assert dump_properties(load_properties(once)) == once


@SETTINGS
@given(entries)
def test_table_properties_round_trip_below_their_comment_lines(props):
    assert load_properties(dump_table_properties(props)) == props


@SETTINGS
@given(instants, st.integers(0, 12))
def test_partition_metadata_round_trips(commit_time, depth):
    assert load_partition_metadata(dump_partition_metadata(commit_time, depth)) == (
        commit_time,
        depth,
    )


@SETTINGS
@given(texts, st.none() | texts)
def test_table_checksum_is_an_unsigned_32_bit_number_that_ignores_missing_database(name, database):
    checksum = table_checksum(name, database)
    assert 0 <= checksum < 2**32
    if not database:
        assert checksum == table_checksum(name, "")
