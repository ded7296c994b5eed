"""`pyhudi log inspect` and `pyhudi log verify` on real log files, intact and damaged."""

from __future__ import annotations

import json
import shutil

from pyhudi.cli.main import main


def _log(hudi_tables, name):
    return sorted(hudi_tables[name].rglob(".*.log.*"))


def test_inspect_prints_every_block_with_header_and_counts(hudi_tables, capsys):
    (rollback,) = [
        p
        for p in _log(hudi_tables, "mor_parquet__v6_nonpartitioned_rollback")
        if ".log.2_" in p.name
    ]
    assert main(["log", "inspect", str(rollback), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (block,) = report["blocks"]
    assert (
        block["block_type"] == "COMMAND_BLOCK"
        and block["target_instant_time"] == "20250126040826878"
    )


def test_inspect_with_records_shows_deleted_keys(hudi_tables, capsys):
    (log,) = _log(hudi_tables, "mor_avro__v6_trips_8i3d")
    assert main(["log", "inspect", str(log), "--records"]) == 0
    out = capsys.readouterr().out
    assert "DELETE_BLOCK" in out and "city=san_francisco" in out


def test_verify_passes_a_table_and_fails_a_damaged_file(hudi_tables, tmp_path, capsys):
    assert main(["log", "verify", str(hudi_tables["mor_avro__v8_trips_8i3u1d"])]) == 0
    (log,) = _log(hudi_tables, "mor_avro__v6_trips_8i1u")
    damaged = tmp_path / log.name
    shutil.copy(log, damaged)
    with open(damaged, "ab") as handle:
        handle.write(b"#HUDI#garbage")
    capsys.readouterr()
    assert main(["log", "verify", str(damaged)]) == 1
    out = capsys.readouterr().out
    assert "CORRUPT_BLOCK" in out and "1 with corrupt blocks" in out


def test_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["log", "inspect", str(tmp_path / "nope")]) == 2
