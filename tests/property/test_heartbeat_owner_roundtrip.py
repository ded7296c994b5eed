"""Hypothesis round trip of the heartbeat owner codec, and damaged bytes never raise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pyhudi.codec.heartbeat import HeartbeatOwner, decode_owner, encode_owner

owners = st.builds(
    HeartbeatOwner,
    st.text(min_size=1, max_size=40),
    st.integers(min_value=1, max_value=2**31),
    st.none() | st.integers(min_value=0, max_value=2**62),
    st.none() | st.text(min_size=1, max_size=40),
    st.none() | st.text(min_size=1, max_size=40),
)


@given(owners)
def test_owner_round_trips(owner):
    assert decode_owner(encode_owner(owner)) == owner


@given(owners, st.integers(min_value=0), st.binary(max_size=3))
def test_damaged_owner_decodes_to_something_or_none(owner, at, junk):
    content = encode_owner(owner)
    at %= len(content)
    damaged = content[:at] + junk + content[at + len(junk) :]
    result = decode_owner(damaged)
    assert result is None or isinstance(result, HeartbeatOwner)
