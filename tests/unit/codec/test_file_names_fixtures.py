"""`pyhudi.codec.file_names` on every file of every real table: each name is exactly one kind, or ignored."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from pyhudi.codec import file_names as fn
from pyhudi.model import Action, Instant, InstantTime, IOType, State

#: Files that are no part of the Hudi layout (macOS litter, the v8 index definitions).
IGNORED = {".DS_Store", "index.json"}


def classify(name: str) -> set[str]:
    kinds = set()
    if fn.parse_base_file("", name) is not None:
        kinds.add("base")
    if fn.parse_log_file("", name) is not None:
        kinds.add("log")
    if fn.parse_instant_file(name) is not None:
        kinds.add("instant")
    if fn.is_partition_metafile(name):
        kinds.add("partition-metafile")
    if name == "hoodie.properties":
        kinds.add("properties")
    return kinds


def expected_kind(relative: Path) -> str | None:
    """What a file must be, from where it lives in the table (None: ignored)."""
    name = relative.name
    if name in IGNORED:
        return None
    parts = relative.parts
    if name == "hoodie.properties":
        return "properties"
    folders = parts[:-1]
    if ".hoodie" in folders:
        last = len(folders) - 1 - folders[::-1].index(".hoodie")
        if folders[last + 1 :] in ((), ("timeline",)):
            return "instant"  # .hoodie/, .hoodie/timeline/, and the same inside .hoodie/metadata/
    if fn.is_partition_metafile(name):
        return "partition-metafile"
    return "log" if name.startswith(".") else "base"


def all_files(tables: dict[str, Path]) -> list[tuple[str, Path]]:
    return [
        (table, p.relative_to(root))
        for table, root in sorted(tables.items())
        for p in root.rglob("*")
        if p.is_file()
    ]


def test_every_fixture_file_is_exactly_one_kind_or_ignored(hudi_tables):
    files = all_files(hudi_tables)
    counts: Counter[str] = Counter()
    for table, relative in files:
        kinds = classify(relative.name)
        expected = expected_kind(relative)
        if expected is None:
            assert kinds == set(), (table, relative)
        else:
            assert kinds == {expected}, (table, relative, kinds)
            counts[expected] += 1
    assert counts["base"] >= 60 and counts["log"] >= 60 and counts["instant"] >= 150
    # A table with a metadata table (the v8 one, the v9 `_meta` and Lance ones) has two.
    with_metadata_table = [n for n in hudi_tables if "v8_trips" in n or n.endswith("_meta")]
    with_metadata_table += [n for n in hudi_tables if "v9_lance" in n]
    assert counts["properties"] == len(hudi_tables) + len(with_metadata_table)


def test_every_fixture_base_file_name_rebuilds_from_its_parts(hudi_tables):
    seen = 0
    for _, relative in all_files(hudi_tables):
        partition = "" if relative.parent == Path(".") else str(relative.parent)
        base = fn.parse_base_file(partition, relative.name, 7)
        if base is None:
            continue
        extension = relative.name[
            relative.name.index(".", len(base.file_id) + len(base.write_token) + 2) :
        ]
        assert (
            fn.base_file_name(base.file_id, base.write_token, base.instant_time, extension)
            == relative.name
        )
        assert base.relative_path == str(relative) and base.size_bytes == 7
        assert extension in (".parquet", ".hfile", ".lance")
        seen += 1
    assert seen >= 60


def test_every_fixture_log_file_name_rebuilds_from_its_parts(hudi_tables):
    seen = 0
    for _, relative in all_files(hudi_tables):
        log = fn.parse_log_file("p", relative.name)
        if log is None:
            continue
        rebuilt = fn.log_file_name(
            log.file_id,
            log.base_instant_time,
            log.version,
            log.write_token,
            extension=log.extension,
        )
        assert rebuilt == relative.name
        assert InstantTime.is_valid(log.base_instant_time) and log.version >= 1
        seen += 1
    assert seen >= 60


def test_every_fixture_instant_file_name_rebuilds_from_the_instant(hudi_tables):
    seen = 0
    for _, relative in all_files(hudi_tables):
        instant = fn.parse_instant_file(relative.name)
        if instant is None:
            continue
        if instant.completion_time is not None:  # table version 8: <requested>_<completed>.<action>
            assert (
                relative.name == f"{instant.time}_{instant.completion_time}.{instant.action.value}"
            )
            assert instant.is_completed and relative.parent.name == "timeline"
        else:
            assert fn.instant_file_name(instant) == relative.name
        seen += 1
    assert seen >= 150


def test_metadata_table_file_ids_and_twenty_digit_style_instants_parse():
    hfile = fn.parse_base_file("files", "files-0000-0_0-955-2690_00000000000000000.hfile")
    assert hfile is not None and (hfile.file_id, hfile.instant_time) == (
        "files-0000-0",
        "00000000000000000",
    )
    log = fn.parse_log_file("record_index", ".record-index-0001-0_00000000000000002.log.1_0-0-0")
    assert log is not None and (log.file_id, log.base_instant_time, log.write_token) == (
        "record-index-0001-0",
        "00000000000000002",
        "0-0-0",
    )
    assert InstantTime.is_valid("20240101000000000010")


# ---- names that are not what they look like ------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        ".hoodie_partition_metadata",
        ".hoodie_partition_metadata.parquet",
        ".hoodie_partition_metadata_3",
        "hoodie.properties",
        "hoodie.properties.backup",
        "20240101000000000.commit",
        "20240101000000000_20240101000001000.commit",
        "part-00000-abc.snappy.parquet",
        "a_b_notaninstant.parquet",
    ],
)
def test_non_base_files_are_not_base_files(name):
    assert fn.parse_base_file("", name) is None


@pytest.mark.parametrize(
    "name",
    [
        "hoodie.properties",
        "20240101000000000.commit.bogus",
        "20240101000000000.compaction",
        "2024.commit",
        "x.commit",
    ],
)
def test_non_instant_names_are_not_instants(name):
    assert fn.parse_instant_file(name) is None


def test_partition_metafile_variants_are_recognised():
    for name in (
        ".hoodie_partition_metadata",
        ".hoodie_partition_metadata.parquet",
        ".hoodie_partition_metadata.orc",
    ):
        assert fn.is_partition_metafile(name) and classify(name) == {"partition-metafile"}


def test_cdc_and_archive_log_names_parse_their_suffix_and_extension():
    cdc = fn.parse_log_file("", ".f-0_20240101000000000.log.2_1-2-3.cdc")
    assert cdc is not None and (cdc.suffix, cdc.version, cdc.write_token) == (".cdc", 2, "1-2-3")
    assert (
        fn.log_file_name("f-0", "20240101000000000", 2, "1-2-3", cdc=True)
        == ".f-0_20240101000000000.log.2_1-2-3.cdc"
    )
    archive = fn.parse_log_file("", ".commits_.archive.3_1-0-1")
    assert archive is not None and (
        archive.extension,
        archive.base_instant_time,
        archive.version,
    ) == ("archive", "", 3)


def test_log_name_without_write_token_parses():
    log = fn.parse_log_file("", ".f-0_20240101000000000.log.1")
    assert log is not None and log.write_token is None
    assert fn.log_file_name("f-0", "20240101000000000", 1, None) == ".f-0_20240101000000000.log.1"


def test_builders_reject_underscores_and_bad_tokens():
    with pytest.raises(ValueError):
        fn.base_file_name("bad_id", "0-1-2", "20240101000000000")
    with pytest.raises(ValueError):
        fn.base_file_name("f-0", "0_1", "20240101000000000")
    with pytest.raises(ValueError):
        fn.log_file_name("f-0", "20240101000000000", 1, "token")


def test_new_file_ids_are_uuid_dash_index_and_unique():
    ids = {fn.new_file_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(i.endswith("-0") and len(i) == 38 for i in ids)
    assert fn.new_file_id(3, "prefix") == "prefix-3"
    assert fn.make_write_token(1, 2, 3) == "1-2-3"


def test_marker_names_for_every_io_type_round_trip_and_others_are_rejected():
    for io_type in IOType:
        assert fn.parse_marker(fn.marker_name("f.parquet", io_type)) == ("f.parquet", io_type)
    assert fn.parse_marker("f.parquet") is None
    assert fn.parse_marker("f.parquet.marker.DELETE") is None


@pytest.mark.parametrize(
    ("instant", "name"),
    [
        (
            Instant(InstantTime("20240101000000000"), Action.COMMIT, State.REQUESTED),
            "20240101000000000.commit.requested",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.COMMIT, State.INFLIGHT),
            "20240101000000000.inflight",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.DELTA_COMMIT, State.INFLIGHT),
            "20240101000000000.deltacommit.inflight",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.LOG_COMPACTION, State.COMPLETED),
            "20240101000000000.deltacommit",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.CLUSTERING, State.COMPLETED),
            "20240101000000000.replacecommit",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.ROLLBACK, State.COMPLETED),
            "20240101000000000.rollback",
        ),
        (
            Instant(InstantTime("20240101000000000"), Action.SAVEPOINT, State.INFLIGHT),
            "20240101000000000.savepoint.inflight",
        ),
    ],
)
def test_instant_file_names_follow_the_layout_1_table(instant, name):
    assert fn.instant_file_name(instant) == name
