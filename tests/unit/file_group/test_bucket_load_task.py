"""The bucket-load task body: rows of several buckets arrive interleaved in many Arrow batches and
each bucket becomes exactly one base file (row groups written as the task's buffer bound is hit)."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from pyhudi.codec.file_names import new_bucket_file_id
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY, with_meta_fields
from pyhudi.file_group import bulk_insert
from pyhudi.file_group.identity import local_task
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import REFUSED, refused_partitions
from pyhudi.storage import Storage
from pyhudi.writer.config import resolve_write_config

INSTANT = "20240101000000000"
BUCKETS = {"p1": 0, "p2": 1}


def _batches(count: int, rows: int) -> list[pa.RecordBatch]:
    out = []
    for b in range(count):
        numbers = range(b * rows, (b + 1) * rows)
        parts = ["p1" if i % 3 else "p2" for i in numbers]
        out.append(
            pa.record_batch(
                {
                    RECORD_KEY: [f"k{i:06d}" for i in numbers],
                    PARTITION_PATH: parts,
                    "v": [float(i) for i in numbers],
                    "b": [BUCKETS[p] for p in parts],
                }
            )
        )
    return out


def test_each_bucket_is_one_file_however_the_rows_arrive(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(bulk_insert, "_BUFFER_BYTES", 4096)  # force a row group every few batches
    monkeypatch.setattr(bulk_insert, "_SPLIT_BYTES", 3000)  # split every few batches
    storage, root = Storage.for_uri(str(tmp_path / "t"))
    cfg = resolve_write_config({"hoodie.table.name": "t"}, None)
    schema = with_meta_fields(pa.schema([pa.field("v", pa.float64())]))
    spec = WriteTaskSpec(storage, root, INSTANT, schema, cfg.sizing, cfg.bloom)
    with local_task(3):
        out = list(bulk_insert.bucket_load_function(spec, "b")(iter(_batches(12, 100))))
    stats = pa.Table.from_batches(out).to_pylist()
    ids = {p: new_bucket_file_id(INSTANT, p, b) for p, b in BUCKETS.items()}
    assert {s["partition_path"]: s["file_id"] for s in stats} == ids
    assert ids["p1"].startswith("00000000-") and ids["p2"].startswith("00000001-")
    for s in stats:
        part = s["partition_path"]
        file = pq.ParquetFile(os.path.join(root, part, s["file_name"]))
        keys = file.read(columns=[RECORD_KEY]).column(0).to_pylist()
        expected = [f"k{i:06d}" for i in range(1200) if ("p1" if i % 3 else "p2") == part]
        assert keys == expected and s["num_inserts"] == s["num_writes"] == len(expected)
        assert file.metadata.num_row_groups > 1
    files = [f for _, _, fs in os.walk(root) for f in fs if f.endswith(".parquet")]
    assert len(files) == 2


def test_split_by_bucket_groups_rows_by_partition_and_bucket_in_their_order() -> None:
    table = pa.table(
        {
            PARTITION_PATH: ["a", "b", "a", "a", "b", "c", "a"],
            "b": [7, 0, 2, 7, 0, 7, 2],
            "v": [0, 1, 2, 3, 4, 5, 6],
        }
    )
    groups = {k: t.column("v").to_pylist() for k, t in bulk_insert.split_by_bucket(table, "b")}
    assert groups == {("a", 7): [0, 3], ("b", 0): [1, 4], ("a", 2): [2, 6], ("c", 7): [5]}
    single = pa.table({PARTITION_PATH: ["x", "x"], "b": [3, 3], "v": [1, 2]})
    [(key, rows)] = list(bulk_insert.split_by_bucket(single, "b"))
    assert key == ("x", 3) and rows is single  # one bucket: no copy


def test_one_bucket_spread_over_many_small_batches_is_one_row_group_per_split(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(bulk_insert, "_SPLIT_BYTES", 1 << 30)  # every batch in one split
    storage, root = Storage.for_uri(str(tmp_path / "t"))
    cfg = resolve_write_config({"hoodie.table.name": "t"}, None)
    schema = with_meta_fields(pa.schema([pa.field("v", pa.float64())]))
    spec = WriteTaskSpec(storage, root, INSTANT, schema, cfg.sizing, cfg.bloom)
    with local_task(0):
        out = list(bulk_insert.bucket_load_function(spec, "b")(iter(_batches(12, 100))))
    for s in pa.Table.from_batches(out).to_pylist():
        file = pq.ParquetFile(os.path.join(root, s["partition_path"], s["file_name"]))
        assert file.metadata.num_row_groups == 1 and file.metadata.num_rows == s["num_writes"]


def test_load_tasks_that_check_partitions_write_nothing_in_a_bad_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`check_partitions`: the rows of `../escape` make no file or folder anywhere (a `REFUSED`
    row says so); the good partition is written as usual, by both load task bodies."""
    storage, root = Storage.for_uri(str(tmp_path / "t"))
    cfg = resolve_write_config({"hoodie.table.name": "t"}, None)
    schema = with_meta_fields(pa.schema([pa.field("v", pa.float64())]))
    spec = WriteTaskSpec(
        storage, root, INSTANT, schema, cfg.sizing, cfg.bloom, check_partitions=True
    )
    batch = pa.record_batch(
        {
            RECORD_KEY: ["k1", "k2", "k3"],
            PARTITION_PATH: ["ok", "../escape", "ok"],
            "v": [1.0, 2.0, 3.0],
            "b": [0, 0, 0],
        }
    )
    bodies = {
        "bulk": bulk_insert.bulk_insert_function(spec),
        "bucket": bulk_insert.bucket_load_function(spec, "b"),
    }
    for name, body in bodies.items():
        rows = batch if name == "bucket" else batch.drop_columns(["b"])
        with local_task(0):
            stats = pa.Table.from_batches(list(body(iter([rows])))).to_pylist()
        assert refused_partitions(stats) == ["../escape"], name
        written = [s for s in stats if s["io_type"] != REFUSED]
        assert [(s["partition_path"], s["num_inserts"]) for s in written] == [("ok", 2)], name
    assert sorted(os.listdir(tmp_path)) == ["t"]
    assert "escape" not in os.listdir(root) and sorted(os.listdir(root)) == [".hoodie", "ok"]
    unchecked = WriteTaskSpec(storage, root, INSTANT, schema, cfg.sizing, cfg.bloom)
    assert spec.refuses("../escape") and not unchecked.refuses("../escape")
    assert not spec.refuses("") and not spec.refuses("2024/01/31")  # the root; nested folders
