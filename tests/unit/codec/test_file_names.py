from pyhudi.codec import file_names as fn
from pyhudi.model import Action, Instant, InstantTime, IOType, State


def test_base_file_name_round_trips_through_parser():
    name = fn.base_file_name("abc-0", "1-2-3", "20240418172802262")
    parsed = fn.parse_base_file("p=1", name, 10)
    assert parsed is not None
    assert (parsed.file_id, parsed.write_token, parsed.instant_time) == (
        "abc-0",
        "1-2-3",
        "20240418172802262",
    )
    assert parsed.relative_path == f"p=1/{name}"


def test_log_file_name_parses_hudi_fixture_name():
    name = ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
    log = fn.parse_log_file("", name)
    assert log is not None
    assert log.file_id == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
    assert (log.base_instant_time, log.version, log.write_token) == (
        "20250126040823628",
        2,
        "1-0-1",
    )
    assert fn.log_file_name(log.file_id, log.base_instant_time, 2, "1-0-1") == name


def test_base_file_parser_rejects_logs_and_partition_metafiles():
    assert fn.parse_base_file("", ".hoodie_partition_metadata") is None
    assert fn.parse_base_file("", ".f-0_20250126040823628.log.1_0-1-2") is None


def test_instant_file_names_follow_layout_1():
    t = InstantTime("20240418172802262")
    assert fn.instant_file_name(Instant(t, Action.COMMIT, State.INFLIGHT)) == f"{t}.inflight"
    assert fn.instant_file_name(Instant(t, Action.COMPACTION, State.COMPLETED)) == f"{t}.commit"
    assert (
        fn.instant_file_name(Instant(t, Action.DELTA_COMMIT, State.REQUESTED))
        == f"{t}.deltacommit.requested"
    )
    for name in (
        f"{t}.inflight",
        f"{t}.commit",
        f"{t}.replacecommit.requested",
        f"{t}.clean.inflight",
    ):
        parsed = fn.parse_instant_file(name)
        assert parsed is not None and fn.instant_file_name(parsed) == name


def test_v8_completed_instant_carries_completion_time():
    parsed = fn.parse_instant_file("20251220210123755_20251220210124336.deltacommit")
    assert parsed is not None
    assert parsed.completion_time == "20251220210124336" and parsed.is_completed


def test_marker_names_round_trip():
    assert fn.parse_marker(fn.marker_name("a_1-2-3_20240418172802262.parquet", IOType.MERGE)) == (
        "a_1-2-3_20240418172802262.parquet",
        IOType.MERGE,
    )
