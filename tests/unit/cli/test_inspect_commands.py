"""`pyhudi show ...` and `pyhudi config list` on real Hudi tables (no Spark)."""

from __future__ import annotations

import json
import subprocess
import sys

from pyhudi.cli.main import main


def test_show_commits_lists_every_completed_instant(hudi_tables, capsys):
    path = str(hudi_tables["cow__v6_simplekeygen_nonhivestyle_overwritetable"])
    assert main(["show", "commits", path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["action"] for r in rows] == ["commit", "commit", "replacecommit"]
    assert rows[-1]["operation"] == "INSERT_OVERWRITE_TABLE" and rows[-1]["replaced"] >= 1


def test_show_fsview_and_properties(hudi_tables, capsys):
    path = str(hudi_tables["mor_parquet__v6_nonpartitioned_rollback"])
    assert main(["show", "fsview", path, "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)
    assert (
        group["file_id"] == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
        and len(group["log_files"]) == 3
    )
    assert main(["show", "properties", path]) == 0
    assert "hoodie.table.type" in capsys.readouterr().out


def test_show_timeline_includes_rollbacks(hudi_tables, capsys):
    path = str(hudi_tables["mor_parquet__v6_nonpartitioned_rollback"])
    assert main(["show", "timeline", path]) == 0
    out = capsys.readouterr().out
    assert "rollback" in out and "deltacommit" in out


def test_errors_exit_with_status_2_and_a_message(tmp_path, capsys):
    assert main(["show", "commits", str(tmp_path)]) == 2
    assert "no Hudi table" in capsys.readouterr().err


def test_config_list_prints_hudi_keys(capsys):
    assert main(["config", "list", "--grep", "hoodie.datasource.write.operation"]) == 0
    assert "upsert" in capsys.readouterr().out


def test_python_dash_m_runs_the_cli(hudi_tables):
    path = str(hudi_tables["cow__v6_nonpartitioned"])
    out = subprocess.run(
        [sys.executable, "-m", "pyhudi", "show", "schema", path],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"name": "v6_nonpartitioned_record"' in out.stdout
