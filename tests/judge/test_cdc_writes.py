"""Apache Hudi's CDC query over the change logs pyhudi writes (`hoodie.table.cdc.enabled`), commit
by commit, pyhudi's own CDC query returning the same, and the two writers continuing each other's
CDC tables: Hudi 0.15 at table version 6 (copy-on-write), Hudi 1.2 at version 9 (merge-on-read,
with a compaction)."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow.parquet as pq

import pyhudi
from pyhudi.services.compaction.execute import run_compaction
from pyhudi.table.context import TableContext
from tests.spark.test_cdc_writes import _options, _rows  # the same table and rows

DATA = ("id", "ts", "v", "p")
CDC_QUERY = {
    "hoodie.datasource.query.type": "incremental",
    "hoodie.datasource.query.incremental.format": "cdc",
    "hoodie.datasource.read.begin.instanttime": "0",
}


def _write(spark, path, ids, ts, v, operation, options) -> str:  # type: ignore[no-untyped-def]
    options = {**options, "hoodie.datasource.write.operation": operation}
    return pyhudi.write(_rows(spark, ids, ts, v), path, options).instant_time


def _image(text: str | None) -> tuple | None:
    """A before/after column of Hudi's CDC rows (JSON text; 'null' for none) as its data values."""
    if text in (None, "", "null"):
        return None
    record = json.loads(text)
    return tuple(record[c] for c in DATA)


def _changes(judge, path: str) -> dict[str, list[tuple[Any, ...]]]:  # type: ignore[no-untyped-def]
    """Hudi's CDC query: instant -> sorted (op, before, after) rows."""
    table = pq.read_table(judge.read(path, CDC_QUERY))
    by_instant: dict[str, list[tuple[Any, ...]]] = {}
    for row in table.to_pylist():
        change = (row["op"], _image(row["before"]), _image(row["after"]))
        by_instant.setdefault(row["ts_ms"], []).append(change)
    return {t: sorted(rows, key=repr) for t, rows in by_instant.items()}


def _our_changes(path: str) -> dict[str, list[tuple[Any, ...]]]:
    """pyhudi's CDC query, in the form of `_changes`."""
    by_instant: dict[str, list[tuple[Any, ...]]] = {}
    for row in pyhudi.read_arrow(path, CDC_QUERY).to_pylist():
        change = (row["op"], _image(row["before"]), _image(row["after"]))
        by_instant.setdefault(row["ts_ms"], []).append(change)
    return {t: sorted(rows, key=repr) for t, rows in by_instant.items()}


def _r(i: int, ts: int, v: str) -> tuple:
    return (f"k{i}", ts, v, f"p{i % 2}")


def _expected(*rows: tuple) -> list[tuple]:
    return sorted(rows, key=repr)


def _latest_commit(path: str) -> str:
    last = TableContext.open(path).active.timeline.commits().last
    assert last is not None
    return last.time


def test_hudi_0_15_queries_the_cdc_logs_of_a_pyhudi_copy_on_write_table(spark, hudi_0_15, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "cow")
    options = _options("DATA_BEFORE_AFTER")
    insert = _write(spark, path, range(4), 1, "a", "insert", options)
    upsert = _write(spark, path, range(2, 6), 2, "b", "upsert", options)
    delete = _write(spark, path, [0, 3], 3, "c", "delete", options)
    # Hudi continues pyhudi's table with CDC, then pyhudi continues Hudi's commit.
    hudi_0_15.write(path, _rows(spark, [1], 4, "h"), {**options, "hoodie.datasource.write.operation": "upsert"})  # fmt: skip
    hudi = _latest_commit(path)
    assert os.path.exists(os.path.join(path, "p1")) and any(
        f"_{hudi}.log.1_" in n and n.endswith(".cdc") for n in os.listdir(os.path.join(path, "p1"))
    )
    after = _write(spark, path, [4], 5, "q", "upsert", options)

    changes = _changes(hudi_0_15, path)
    assert _our_changes(path) == changes  # pyhudi reads its logs (and Hudi's) as Hudi does
    assert changes == {
        insert: _expected(*[("i", None, _r(i, 1, "a")) for i in range(4)]),
        upsert: _expected(
            ("u", _r(2, 1, "a"), _r(2, 2, "b")),
            ("u", _r(3, 1, "a"), _r(3, 2, "b")),
            ("i", None, _r(4, 2, "b")),
            ("i", None, _r(5, 2, "b")),
        ),
        delete: _expected(("d", _r(0, 1, "a"), None), ("d", _r(3, 2, "b"), None)),
        hudi: [("u", _r(1, 1, "a"), _r(1, 4, "h"))],
        after: [("u", _r(4, 2, "b"), _r(4, 5, "q"))],
    }
    assert pyhudi.read(spark, path).count() == 4


def test_hudi_1_2_queries_a_pyhudi_version_9_merge_on_read_cdc_table(spark, hudi_1_2, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "mor")
    options = _options(
        "DATA_BEFORE",
        **{
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.write.table.version": "9",
        },
    )
    # Hudi creates the table; pyhudi merges into its small files (CDC logs), appends a log,
    # compacts (a CDC log of the compaction, which the query leaves out), then Hudi upserts.
    hudi_1_2.write(path, _rows(spark, range(4), 1, "a"), {**options, "hoodie.datasource.write.operation": "insert"})  # fmt: skip
    insert = _latest_commit(path)
    merge = _write(spark, path, range(2, 6), 2, "b", "upsert", options)
    appended = _write(spark, path, [3], 3, "c", "upsert", options)
    (compaction,) = run_compaction(spark, TableContext.open(path), options, force=True)
    assert any(
        f"_{compaction.instant_time}.log.1_" in n and n.endswith(".cdc")
        for n in os.listdir(os.path.join(path, "p1"))
    )
    hudi_1_2.write(path, _rows(spark, [5], 4, "h"), {**options, "hoodie.datasource.write.operation": "upsert"})  # fmt: skip
    hudi = _latest_commit(path)

    changes = _changes(hudi_1_2, path)
    assert _our_changes(path) == changes  # pyhudi reads its logs (and Hudi's) as Hudi does
    assert compaction.instant_time not in changes
    assert changes == {
        insert: _expected(*[("i", None, _r(i, 1, "a")) for i in range(4)]),
        merge: _expected(
            ("u", _r(2, 1, "a"), _r(2, 2, "b")),
            ("u", _r(3, 1, "a"), _r(3, 2, "b")),
            ("i", None, _r(4, 2, "b")),
            ("i", None, _r(5, 2, "b")),
        ),
        appended: [("u", _r(3, 2, "b"), _r(3, 3, "c"))],
        hudi: [("u", _r(5, 2, "b"), _r(5, 4, "h"))],
    }
    assert sorted(r["v"] for r in pyhudi.read(spark, path).select("v").collect()) == [
        "a",
        "a",
        "b",
        "b",
        "c",
        "h",
    ]
