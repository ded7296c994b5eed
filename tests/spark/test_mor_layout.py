"""Merge-on-read layout decisions (Hudi's `SparkUpsertDeltaCommitPartitioner` and
`BaseSparkDeltaCommitActionExecutor`): which writes append to log files and which rewrite a base
file. tests/judge/test_mor_layout.py holds Hudi's own answers for the same rules."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

import pyhudi

SCHEMA = "id string, part string, ts long, val string"
RO = {"hoodie.datasource.query.type": "read_optimized"}


def options(index: str = "BLOOM", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
        "hoodie.metadata.enable": "false",
        **extra,
    }


def write(spark: SparkSession, path: str, rows, operation: str, opts: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    schema = SCHEMA + (", _hoodie_is_deleted boolean" if rows and len(rows[0]) == 5 else "")
    frame = spark.createDataFrame(rows, schema)
    pyhudi.write(frame, path, {**opts, "hoodie.datasource.write.operation": operation})


def twelve(ts: int = 1) -> list[tuple]:
    return [(f"k{i:02d}", "abc"[i % 3], ts, f"v{i}") for i in range(12)]


def shapes(path: str) -> dict[str, list[tuple[str, int]]]:
    """Partition -> (base instant, log files) of each latest slice."""
    out: dict[str, list[tuple[str, int]]] = {}
    for s in pyhudi.HudiTable(path).latest_file_slices():
        out.setdefault(s.partition_path, []).append((s.base_instant_time, len(s.log_files)))
    return {p: sorted(v) for p, v in out.items()}


@pytest.mark.parametrize("index", ["BLOOM", "GLOBAL_BLOOM"])
def test_a_delete_appends_to_the_log_even_with_keys_the_table_lacks(spark, tmp_path, index):
    path = str(tmp_path / index)
    opts = options(index)
    write(spark, path, twelve(), "insert", opts)
    before = shapes(path)
    deleted = [("k00", "a", 2, "x"), ("k99", "a", 2, "y")]  # present, absent
    write(spark, path, deleted, "delete", opts)
    after = shapes(path)
    assert [instant for instant, _ in after["a"]] == [instant for instant, _ in before["a"]]
    assert [logs for _, logs in after["a"]] == [1]
    assert after["b"] == before["b"] and after["c"] == before["c"]
    assert pyhudi.read(spark, path, RO).count() == 12
    assert pyhudi.read(spark, path).count() == 11


@pytest.mark.parametrize("candidates", [1, 2])
def test_inserts_rewrite_the_smallest_small_files_without_logs_with_their_updates(
    spark, tmp_path, candidates
):
    """Partition `a` holds a big and a small file group: inserts go to the smallest one(s)
    (`hoodie.merge.small.file.group.candidates.limit`, default 1), whose updates are rewritten
    into its new base file; the other group's updates go to its log."""
    path = str(tmp_path / f"t{candidates}")
    opts = options(**{"hoodie.merge.small.file.group.candidates.limit": str(candidates)})
    no_small_files = {**opts, "hoodie.parquet.small.file.limit": "0"}
    big = [(f"big{i:03d}", "a", 1, "x" * 50) for i in range(60)]
    write(spark, path, big, "insert", no_small_files)
    write(spark, path, [("small0", "a", 1, "s")], "insert", no_small_files)
    (big_slice, small_slice) = sorted(
        pyhudi.HudiTable(path).latest_file_slices(),
        key=lambda s: -s.base_file.size_bytes,  # type: ignore[union-attr]
    )
    changes = [("big000", "a", 2, "u"), ("small0", "a", 2, "u"), ("new0", "a", 2, "n")]
    write(spark, path, changes, "upsert", opts)
    slices = {s.file_id: s for s in pyhudi.HudiTable(path).latest_file_slices()}
    assert set(slices) == {big_slice.file_id, small_slice.file_id}
    small = slices[small_slice.file_id]
    assert small.base_instant_time > small_slice.base_instant_time and not small.log_files
    big_now = slices[big_slice.file_id]
    rewritten = big_now.base_instant_time > big_slice.base_instant_time
    assert rewritten is (candidates == 2) and bool(big_now.log_files) is (candidates == 1)
    got = {r["id"]: r["val"] for r in pyhudi.read(spark, path).collect()}
    assert (got["big000"], got["small0"], got["new0"]) == ("u", "u", "n")


def test_a_slice_with_log_files_takes_no_inserts(spark, tmp_path):
    path = str(tmp_path / "t")
    opts = options()
    write(spark, path, twelve(), "insert", opts)
    write(spark, path, [("k00", "a", 2, "u")], "upsert", opts)  # partition a's group: a log
    write(spark, path, [("k12", "a", 3, "n"), ("k01", "b", 3, "u")], "upsert", opts)
    after = shapes(path)
    assert len(after["a"]) == 2 and sorted(logs for _, logs in after["a"]) == [0, 1]
    (b_slice,) = after["b"]  # b's small file took no insert: its update goes to a log
    assert b_slice[1] == 1


def test_deletes_of_new_keys_count_as_inserts_of_their_partition(spark, tmp_path):
    """An upsert's `_hoodie_is_deleted` rows of keys the table lacks are planned as inserts (Hudi's
    workload profile counts them), so their partition's small file is rewritten with the batch's
    updates to it; the deletes themselves are written nowhere."""
    path = str(tmp_path / "t")
    opts = options("GLOBAL_BLOOM")
    write(spark, path, [(*row, False) for row in twelve()], "insert", opts)
    before = shapes(path)
    write(spark, path, [("k00", "a", 2, "u", False), ("k99", "a", 2, "d", True)], "upsert", opts)
    after = shapes(path)
    ((instant, logs),) = after["a"]
    assert instant > before["a"][0][0] and logs == 0
    assert pyhudi.read(spark, path).count() == 12
