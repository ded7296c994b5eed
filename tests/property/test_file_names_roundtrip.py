"""Round trips of base file, log file, instant file and marker names."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pyhudi.codec import file_names as fn
from pyhudi.model import Action, Instant, InstantTime, IOType, State

SETTINGS = settings(max_examples=50, deadline=None)

instants = st.from_regex(r"\A(20[0-9]{15}|20[0-9]{12}|[0-9]{20})\Z").map(InstantTime)
file_ids = st.uuids().map(str) | st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,20}\Z")
tokens = st.builds(
    fn.make_write_token, st.integers(0, 9999), st.integers(0, 9999), st.integers(0, 99999)
)
extensions = st.sampled_from([".parquet", ".orc", ".hfile"])
partitions = st.sampled_from(["", "p=1", "10", "2023/04/01/12", "a=1/b=x y"])

#: (action, state) pairs that layout version 1 writes (§2.2): savepoints have no requested file.
LAYOUT_1 = [
    (a, s)
    for a in Action
    if a is not Action.CLUSTERING
    for s in State
    if not (a is Action.SAVEPOINT and s is State.REQUESTED)
]


@SETTINGS
@given(file_ids, tokens, instants, extensions, partitions, st.integers(0, 2**40))
def test_base_file_name_parses_back_to_its_parts(file_id, token, time, extension, partition, size):
    name = fn.base_file_name(file_id, token, time, extension)
    base = fn.parse_base_file(partition, name, size)
    assert base is not None
    assert (base.file_id, base.write_token, base.instant_time, base.size_bytes) == (
        file_id,
        token,
        time,
        size,
    )
    assert base.relative_path == (f"{partition}/{name}" if partition else name)
    assert fn.parse_log_file(partition, name) is None and fn.parse_instant_file(name) is None


@SETTINGS
@given(file_ids, instants, st.integers(1, 10**6), st.none() | tokens, st.booleans())
def test_log_file_name_parses_back_to_its_parts(file_id, base_instant, version, token, cdc):
    name = fn.log_file_name(file_id, base_instant, version, token, cdc=cdc)
    log = fn.parse_log_file("p", name)
    assert log is not None
    assert (log.file_id, log.base_instant_time, log.version, log.write_token) == (
        file_id,
        base_instant,
        version,
        token,
    )
    assert log.suffix == (".cdc" if cdc and token else "")
    assert fn.parse_base_file("p", name) is None and fn.parse_instant_file(name) is None
    assert (
        fn.log_file_name(
            log.file_id, log.base_instant_time, log.version, log.write_token, cdc=bool(log.suffix)
        )
        == name
    )


@SETTINGS
@given(
    file_ids,
    instants,
    st.lists(st.tuples(st.integers(1, 50), st.none() | tokens), min_size=2, max_size=6),
)
def test_log_files_sort_by_version_then_write_token(file_id, base_instant, versions):
    logs = [
        fn.parse_log_file("", fn.log_file_name(file_id, base_instant, v, t)) for v, t in versions
    ]
    ordered = sorted(logs, key=lambda lf: lf.sort_key())
    assert [(lf.version, lf.write_token or "") for lf in ordered] == sorted(
        (v, t or "") for v, t in versions
    )


@SETTINGS
@given(instants, st.sampled_from(LAYOUT_1))
def test_instant_file_name_parses_back_to_the_instant(time, action_state):
    action, state = action_state
    instant = Instant(time, action, state).with_state(
        state
    )  # completed compaction is a commit, ...
    name = fn.instant_file_name(instant)
    parsed = fn.parse_instant_file(name)
    assert parsed == instant
    assert fn.parse_base_file("", name) is None and fn.parse_log_file("", name) is None


@SETTINGS
@given(
    instants,
    instants,
    st.sampled_from(
        [Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.CLEAN, Action.ROLLBACK]
    ),
)
def test_v8_completed_instant_name_carries_both_times(requested, completed, action):
    parsed = fn.parse_instant_file(f"{requested}_{completed}.{action.value}")
    assert parsed == Instant(requested, action, State.COMPLETED, completed)


@SETTINGS
@given(file_ids, tokens, instants, st.sampled_from(list(IOType)))
def test_marker_name_parses_back_to_data_file_and_io_type(file_id, token, time, io_type):
    data_file = fn.base_file_name(file_id, token, time)
    assert fn.parse_marker(fn.marker_name(data_file, io_type)) == (data_file, io_type)
