"""`make demo` runs `pyhudi demo`: it must work end to end on a fresh folder."""

from __future__ import annotations

from pyhudi.cli.main import main


def test_demo_writes_reads_and_shows_what_hudi_rs_sees(spark, tmp_path, capsys):
    assert main(["demo", "--path", str(tmp_path), "--rows", "500"]) == 0
    out = capsys.readouterr().out
    assert "snapshot: 485 rows (expected 485)" in out
    assert "hudi-rs (0.5.0) sees 485 rows" in out
