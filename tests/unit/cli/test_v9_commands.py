"""`pyhudi show ...` on table version 9 (Hudi 1.1) tables: timeline under `.hoodie/timeline/`."""

from __future__ import annotations

import json

from pyhudi.cli.main import main

MOR = "mor_avro__v9_txns_simple_meta"


def test_show_commits_on_a_v9_mor_table_lists_deltacommits_compaction_and_clustering(
    hudi_tables, capsys
):
    assert main(["show", "commits", str(hudi_tables[MOR]), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    actions = [r["action"] for r in rows]
    assert actions.count("deltacommit") == 10 and actions.count("commit") == 1
    assert actions.count("replacecommit") == 2
    assert rows[0]["operation"] == "INSERT" and rows[0]["inserts"] == 8
    assert {r["operation"] for r in rows} >= {"UPSERT_PREPPED", "DELETE_PREPPED"}


def test_show_timeline_fsview_properties_and_schema_on_v9_tables(hudi_tables, capsys):
    path = str(hudi_tables[MOR])
    assert main(["show", "timeline", path]) == 0
    out = capsys.readouterr().out
    assert "indexing" in out and "deltacommit" in out and "COMPLETED" in out
    assert main(["show", "fsview", path, "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)
    assert {g["partition"] for g in groups} == {"region=apac", "region=eu", "region=us"}
    assert main(["show", "properties", path]) == 0
    assert "hoodie.record.merge.mode" in capsys.readouterr().out
    assert main(["show", "schema", path]) == 0
    assert "txn_ts" in capsys.readouterr().out


def test_show_fsview_of_the_lance_table_lists_lance_base_files(hudi_tables, capsys):
    path = str(hudi_tables["cow__v9_lance_txns_simple"])
    assert main(["show", "fsview", path, "--json"]) == 0
    groups = json.loads(capsys.readouterr().out)
    assert groups and all(g["base_file"].endswith(".lance") for g in groups)
