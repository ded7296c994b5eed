"""A write into a folder that holds something other than a Hudi table (a parquet dataset, stray
files) is refused by every write path, naming what is there and pointing to bootstrap; nothing
in the folder changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pyhudi
from pyhudi.exceptions import NotAHudiTableError

OPTIONS = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


def test_writes_refuse_a_parquet_folder_and_leave_it_as_it_was(spark, tmp_path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "events"
    df = spark.createDataFrame([("a", 1), ("b", 2)], "id string, ts long")
    df.write.parquet(str(folder))
    before = _listing(folder)
    for mode, operation in [
        ("append", "upsert"),
        ("overwrite", "bulk_insert"),
        ("append", "insert"),
    ]:
        with pytest.raises(NotAHudiTableError, match=r"not a Hudi table .* holds _SUCCESS, part-"):
            pyhudi.write(
                df,
                str(folder),
                {**OPTIONS, "hoodie.datasource.write.operation": operation},
                mode=mode,
            )
    with pytest.raises(Exception, match="bootstrap"):
        df.write.format("hudi").options(**OPTIONS).option(
            "hoodie.datasource.write.operation", "bulk_insert"
        ).mode("append").save(str(folder))
    assert _listing(folder) == before
    assert sorted(r.id for r in spark.read.parquet(str(folder)).collect()) == ["a", "b"]


def test_an_empty_folder_or_a_stopped_creation_takes_a_new_table(spark, tmp_path):  # type: ignore[no-untyped-def]
    df = spark.createDataFrame([("a", 1)], "id string, ts long")
    empty = tmp_path / "empty"
    empty.mkdir()
    stopped = tmp_path / "stopped"
    os.makedirs(stopped / ".hoodie" / ".temp")  # a creation killed before hoodie.properties
    for folder in (empty, stopped):
        pyhudi.write(df, str(folder), {**OPTIONS, "hoodie.datasource.write.operation": "insert"})
        assert [r.id for r in pyhudi.read(spark, str(folder)).collect()] == ["a"]
