"""`pyhudi metadata show`: metadata partitions, file groups, sizes and record counts."""

from __future__ import annotations

import json

from pyhudi.cli.main import main

V8 = "mor_avro__v8_trips_8i3u1d"


def test_metadata_show_lists_partitions_file_groups_sizes_and_records(hudi_tables, capsys):
    path = str(hudi_tables[V8])
    assert main(["metadata", "show", path, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_name = {p["name"]: p for p in report["partitions"]}
    assert set(by_name) == {
        "column_stats",
        "files",
        "partition_stats",
        "record_index",
        "secondary_index_rider_idx",
    }
    assert by_name["files"]["records"] == 4 and len(by_name["files"]["file_groups"]) == 1
    assert by_name["record_index"]["records"] == 6  # one per live row (6 / 6)
    assert len(by_name["record_index"]["file_groups"]) == 10
    assert all(
        p["size_bytes"] == sum(g["size_bytes"] for g in p["file_groups"]) for p in by_name.values()
    )
    assert [d["partition"] for d in report["files"]] == [
        "city=chennai",
        "city=san_francisco",
        "city=sao_paulo",
    ]
    assert [d["files"] for d in report["files"]] == [4, 3, 4]

    assert main(["metadata", "show", path, "--file-groups"]) == 0
    text = capsys.readouterr().out
    assert "record-index-0000-0" in text and "city=chennai" in text and "records" in text


def test_metadata_show_as_of_the_first_instant_lists_its_files(hudi_tables, capsys):
    path = str(hudi_tables["mor_avro__v9_txns_simple_meta"])
    assert main(["metadata", "show", path, "--as-of", "20260307162557587", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [d["files"] for d in report["files"]] == [1, 1, 1]


def test_metadata_show_on_a_table_without_one_is_an_error_naming_it(hudi_tables, capsys):
    path = str(hudi_tables["cow__v9_txns_simple_nometa"])
    assert main(["metadata", "show", path]) == 2
    assert "no metadata table" in capsys.readouterr().err
