"""The owner pyhudi writes into a heartbeat file, and what it makes of Hudi's empty one."""

from __future__ import annotations

import pytest

from pyhudi.codec.heartbeat import HeartbeatOwner, decode_owner, encode_owner


def test_owner_round_trips_with_and_without_proc_facts():
    full = HeartbeatOwner("node-1", 4242, 987654, "0b6c-boot", "pid:[4026531836]")
    bare = HeartbeatOwner("mac.local", 17)  # no /proc: start time, boot and namespace unknown
    assert decode_owner(encode_owner(full)) == full
    assert decode_owner(encode_owner(bare)) == bare


@pytest.mark.parametrize(
    "content",
    [
        b"",  # Apache Hudi's heartbeat (HoodieHeartbeatClient creates the file empty)
        b"\n",
        b"\xff\xfe",
        b"not json",
        b"[1, 2]",
        b'{"writer": "other", "host": "h", "pid": 1}',
        b'{"writer": "pyhudi", "host": "h", "pid": "1"}',
        b'{"writer": "pyhudi", "pid": 1}',
    ],
)
def test_empty_or_foreign_heartbeat_content_is_an_unknown_owner(content):
    assert decode_owner(content) is None


def test_malformed_optional_facts_are_dropped_not_fatal():
    content = b'{"writer":"pyhudi","host":"h","pid":3,"startTicks":"x","bootId":5}'
    assert decode_owner(content) == HeartbeatOwner("h", 3)
