"""Where the real Hudi tables (zips of the hudi-rs fixtures, written by Apache Hudi) live in the repo."""

from __future__ import annotations

from pathlib import Path

HUDI_TABLE_ZIPS = Path(__file__).resolve().parents[1] / "data" / "hudi-tables"
