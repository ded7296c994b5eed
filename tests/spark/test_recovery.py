"""A write left requested/inflight by a crash is invisible, then rolled back by the next write."""

from __future__ import annotations

import os

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.crash import crashed_write
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.codec import avro_schemas


def _files(path):
    return sorted(
        os.path.relpath(os.path.join(d, f), path)
        for d, _, fs in os.walk(path)
        for f in fs
        if f.endswith(".parquet")
    )


def test_crashed_upsert_is_invisible_and_rolled_back_by_next_write(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    pyhudi.write(
        df_of(spark, trips(0, 12)),
        path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    committed_files = _files(path)

    failed = crashed_write(
        spark,
        path,
        df_of(spark, trips(0, 6, ts=9) + trips(50, 3, ts=9)),
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    uncommitted = set(_files(path)) - set(committed_files)
    assert uncommitted
    assert os.path.exists(os.path.join(path, ".hoodie", f"{failed}.inflight"))
    # Neither reader sees the uncommitted files.
    assert hudi_rs_table(path).num_rows == 12
    assert sorted(set(hudi_rs_table(path).column("ts").to_pylist())) == [1]
    assert pyhudi.read(spark, path).filter("ts = 9").count() == 0

    result = pyhudi.write(
        df_of(spark, trips(60, 2, ts=2)),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    assert result.rolled_back == (failed,)
    meta = os.path.join(path, ".hoodie")
    assert not any(name.startswith(failed) for name in os.listdir(meta))
    rollback = [n for n in os.listdir(meta) if n.endswith(".rollback")]
    assert len(rollback) == 1
    with open(os.path.join(meta, rollback[0]), "rb") as handle:
        metadata = avro_schemas.decode_container(handle.read())
    assert metadata["commitsRollback"] == [failed]
    assert metadata["totalFilesDeleted"] == len(uncommitted)
    assert not uncommitted & set(_files(path))
    assert not os.path.exists(os.path.join(meta, ".temp", failed))
    assert hudi_rs_table(path).num_rows == pyhudi.read(spark, path).count() == 14


def test_failed_job_is_undone_at_once(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    pyhudi.write(
        df_of(spark, trips(0, 5)), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    before = sorted(os.listdir(os.path.join(path, ".hoodie")))
    rows = trips(10, 4)
    rows[2]["uuid"] = ""
    with pytest.raises(pyhudi.InvalidRecordError):
        pyhudi.write(
            df_of(spark, rows), path, {**options, "hoodie.datasource.write.operation": "insert"}
        )
    assert sorted(os.listdir(os.path.join(path, ".hoodie"))) == before
    assert hudi_rs_table(path).num_rows == 5
