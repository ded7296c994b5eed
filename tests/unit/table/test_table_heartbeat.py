"""Writer heartbeats: refreshed while running, stopped when the file is removed elsewhere."""

from __future__ import annotations

import os
import time

from tests.helpers.timeline_builder import TimelineBuilder

from pyhudi.table.heartbeat import Heartbeat, heartbeat_path, is_heartbeat_expired

INSTANT = "20240101000000000"


def test_heartbeat_is_refreshed_and_fresh(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    heartbeat = Heartbeat(tb.ctx, INSTANT, 0.05).start()
    path = heartbeat_path(tb.ctx, INSTANT)
    first = os.stat(path).st_mtime_ns
    time.sleep(0.3)
    assert os.stat(path).st_mtime_ns > first
    assert not is_heartbeat_expired(tb.ctx, INSTANT, 1000)
    heartbeat.stop()
    assert not os.path.exists(path)
    assert is_heartbeat_expired(tb.ctx, INSTANT, 1000)


def test_heartbeat_stops_when_its_file_is_deleted_by_another_process(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    heartbeat = Heartbeat(tb.ctx, INSTANT, 0.05).start()
    path = heartbeat_path(tb.ctx, INSTANT)
    os.remove(path)  # e.g. the Data Source commit ran in another process
    time.sleep(0.3)
    assert heartbeat._thread is not None and not heartbeat._thread.is_alive()
    assert not os.path.exists(path)


def test_start_new_refuses_a_heartbeat_file_that_exists(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    first = Heartbeat(tb.ctx, INSTANT, 60)
    assert first.start_new()
    assert not Heartbeat(tb.ctx, INSTANT, 60).start_new()
    first.stop()
