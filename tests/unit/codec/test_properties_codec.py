"""`pyhudi.codec.properties`: Java `.properties` escaping and parsing, checksums, partition metadata."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest

from pyhudi.codec.properties import (
    dump_partition_metadata,
    dump_properties,
    dump_table_properties,
    java_date_string,
    load_partition_metadata,
    load_properties,
    table_checksum,
)


def real_files(tables: dict[str, Path], name: str) -> list[Path]:
    """Every file called `name` in every fixture table (metadata tables included)."""
    return sorted(p for root in tables.values() for p in root.rglob(name) if p.is_file())


# ---- escaping -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ("a=b", r"a\=b"),
        ("a:b", r"a\:b"),
        ("#x", r"\#x"),
        ("!x", r"\!x"),
        ("back\\slash", r"back\\slash"),
        (" lead", r"\ lead"),
        ("in side", "in side"),
        ("tab\there", r"tab\there"),
        ("new\nline", r"new\nline"),
        ("caf\u00e9", r"caf\u00E9"),
        ("\u20ac", r"\u20AC"),
        ("\U0001f600", r"\uD83D\uDE00"),
        ("\x7f", r"\u007F"),
    ],
)
def test_dump_properties_escapes_values_like_java_properties_store(value, escaped):
    assert dump_properties({"k": value}) == f"k={escaped}\n".encode("ascii")


def test_dump_properties_escapes_spaces_anywhere_in_keys():
    assert dump_properties({"a b": "v"}) == b"a\\ b=v\n"


def test_dump_properties_writes_comments_first_and_only_ascii():
    data = dump_properties({"k\u00e9": "v\u4e2d"}, ("first", "second"))
    assert data.splitlines()[:2] == [b"#first", b"#second"]
    assert data.isascii()


@pytest.mark.parametrize(
    "entries",
    [
        {"hoodie.table.create.schema": '{"type":"record","name":"t_record","fields":[]}'},
        {"weird key=:#!\\": " =:#!\\ value "},
        {"": ""},
        {"unicode": "\u00e9\u4e2d\U0001f600\u0000\r\n\t\f"},
        {"a": "1", "b": "2", "c": ""},
    ],
)
def test_properties_round_trip(entries):
    assert load_properties(dump_properties(entries, ("comment",))) == entries


# ---- parsing --------------------------------------------------------------------------------


def test_load_properties_skips_hash_and_bang_comments_and_blank_lines():
    data = b"#comment\n! other comment\n\n   \nk=v\n"
    assert load_properties(data) == {"k": "v"}


def test_load_properties_accepts_colon_space_and_equals_separators():
    data = b"a=1\nb:2\nc 3\nd   =   4\ne\t:\t5\nf\n"
    assert load_properties(data) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": ""}


def test_load_properties_joins_continuation_lines_dropping_leading_blanks():
    data = b"k=one \\\n     two\\\n\tthree\nnext=x\n"
    assert load_properties(data) == {"k": "one twothree", "next": "x"}


def test_load_properties_even_number_of_trailing_backslashes_is_not_a_continuation():
    assert load_properties(b"k=a\\\\\nn=b\n") == {"k": "a\\", "n": "b"}


def test_load_properties_keeps_trailing_blanks_of_values():
    assert load_properties(b"k=v  \n") == {"k": "v  "}


def test_load_properties_comment_marker_inside_value_is_literal():
    assert load_properties(b"k=a#b!c\n") == {"k": "a#b!c"}


def test_load_properties_handles_crlf_and_cr_line_ends():
    assert load_properties(b"a=1\r\nb=2\rc=3") == {"a": "1", "b": "2", "c": "3"}


def test_load_properties_decodes_unicode_escapes_and_surrogate_pairs():
    assert load_properties(b"k=\\u00e9\\u4E2D\\uD83D\\uDE00") == {"k": "\u00e9\u4e2d\U0001f600"}


def test_load_properties_reads_raw_latin1_bytes():
    assert load_properties(b"k=caf\xe9") == {"k": "caf\u00e9"}


def test_load_properties_unescapes_special_characters_in_keys():
    assert load_properties(b"a\\=b\\:c\\ d=v") == {"a=b:c d": "v"}


def test_load_properties_last_duplicate_key_wins():
    assert load_properties(b"k=1\nk=2\n") == {"k": "2"}


@pytest.mark.parametrize("separator", [b"\x85", b"\x0b", b"\x1c"])
def test_load_properties_keeps_raw_non_java_line_separators_inside_values(separator):
    assert load_properties(b"k=a" + separator + b"b\n") == {
        "k": "a" + separator.decode("latin-1") + "b"
    }


def test_load_properties_keeps_leading_no_break_space_of_a_key():
    assert load_properties(b"\xa0k=v\n") == {"\u00a0k": "v"}


# ---- table properties and checksums --------------------------------------------------------


def test_dump_table_properties_starts_with_java_style_comments():
    lines = dump_table_properties({"hoodie.table.name": "t"}).decode("ascii").splitlines()
    assert re.fullmatch(r"#Properties saved on \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", lines[0])
    assert re.fullmatch(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}", lines[1])
    assert lines[2] == "hoodie.table.name=t"


def test_dump_table_properties_marks_updates():
    first = dump_table_properties({"k": "v"}, updated=True).splitlines()[0]
    assert first.startswith(b"#Updated at ")


def test_java_date_string_matches_java_util_date_to_string():
    assert java_date_string(1713461282.0) == "Thu Apr 18 17:28:02 UTC 2024"


def test_table_checksum_is_crc32_of_database_dot_name():
    assert table_checksum("v6_trips_8i1u", "default") == 3843273058
    assert table_checksum("trips", None) == zlib.crc32(b".trips")
    assert table_checksum("trips", "") == table_checksum("trips", None)


def test_table_checksum_matches_every_real_hoodie_properties(hudi_tables):
    files = real_files(hudi_tables, "hoodie.properties")
    assert len(files) >= len(hudi_tables)
    for path in files:
        props = load_properties(path.read_bytes())
        expected = table_checksum(props["hoodie.table.name"], props.get("hoodie.database.name"))
        assert props["hoodie.table.checksum"] == str(expected), path


def test_every_real_hoodie_properties_parses_with_its_create_schema_intact(hudi_tables):
    for path in real_files(hudi_tables, "hoodie.properties"):
        props = load_properties(path.read_bytes())
        assert props["hoodie.table.version"] in ("6", "8", "9"), path
        schema = props.get("hoodie.table.create.schema")
        if schema is not None:
            assert schema.startswith('{"type":"record"') and "\\" not in schema, path


def test_every_real_hoodie_properties_survives_dump_and_load(hudi_tables):
    for path in real_files(hudi_tables, "hoodie.properties"):
        props = load_properties(path.read_bytes())
        assert load_properties(dump_table_properties(props)) == props, path


# ---- .hoodie_partition_metadata ------------------------------------------------------------


def test_partition_metadata_round_trips_commit_time_and_depth():
    data = dump_partition_metadata("20240418172802262", 4)
    assert data.startswith(b"#partition metadata\n#")
    assert load_partition_metadata(data) == ("20240418172802262", 4)


def test_partition_metadata_of_empty_file_has_no_values():
    assert load_partition_metadata(b"") == (None, None)


def test_every_real_partition_metadata_names_a_commit_and_its_folder_depth(hudi_tables):
    files = real_files(hudi_tables, ".hoodie_partition_metadata")
    assert len(files) > 40
    for path in files:
        commit_time, depth = load_partition_metadata(path.read_bytes())
        assert commit_time is not None and re.fullmatch(r"\d{17}", commit_time), path
        table_root = next(root for root in hudi_tables.values() if root in path.parents)
        relative = path.parent.relative_to(table_root)
        if ".hoodie" in relative.parts:
            continue  # metadata-table partitions count from the metadata table root
        assert depth == len(relative.parts), path
