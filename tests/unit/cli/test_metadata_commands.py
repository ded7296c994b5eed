"""`pyhudi metadata show`: metadata partitions, file groups, sizes and record counts."""

from __future__ import annotations

import json
import shutil

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


def test_metadata_validate_exits_0_on_a_real_table_and_1_naming_a_difference(
    hudi_tables, tmp_path, capsys
):
    assert main(["metadata", "validate", str(hudi_tables[V8])]) == 0
    out = capsys.readouterr().out
    assert "record_index" in out and "no difference" in out
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[V8], root)
    victim = sorted(root.glob("city=chennai/*.parquet"))[0]
    victim.unlink()
    assert main(["metadata", "validate", str(root)]) == 1
    out = capsys.readouterr().out
    assert f"[files] city=chennai: {victim.name}: in the metadata table, not on storage" in out
    assert main(["metadata", "validate", str(root), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"] and report["checks"][:2] == ["partitions", "files"]
    assert {
        "check": "files",
        "partition": "city=chennai",
        "subject": victim.name,
        "detail": "in the metadata table, not on storage",
    } in report["differences"]
    instant = victim.name.rsplit("_", 1)[1].split(".")[0]
    assert main(["metadata", "validate", str(hudi_tables[V8]), "--as-of", instant, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["as_of"] == instant
