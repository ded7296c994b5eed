"""A table's whole life on S3 (moto's server, through pyarrow's S3 file system and Spark's S3A):
every write operation, the table services after the commits (compaction, clustering, clean,
archival, the metadata table's own), every query type through `pyhudi.read`, `format("hudi")`
and `read_arrow`, hudi-rs reading the same table, and the CLI on it."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pyarrow as pa

import pyhudi
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

DATA = ["uuid", "city", "ts", "rider", "fare"]
OPTIONS = trips_options(
    "life",
    **{
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.compact.inline": "true",
        "hoodie.compact.inline.max.delta.commits": "2",
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "3",
        "hoodie.clean.commits.retained": "4",
        "hoodie.keep.min.commits": "5",
        "hoodie.keep.max.commits": "6",
        "hoodie.metadata.compact.max.delta.commits": "3",
    },
)
STEPS = [
    ("bulk_insert", trips(0, 60)),
    ("upsert", trips(40, 40, ts=2)),
    ("delete", trips(0, 10)),
    ("insert", trips(80, 10, ts=3)),
    ("upsert", trips(20, 30, ts=4)),
    ("upsert", trips(85, 10, ts=5)),
]


def _data(table: pa.Table) -> list[dict[str, Any]]:
    return rows(table.select(DATA), key="uuid")


def _expected(steps: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    state: dict[str, dict[str, Any]] = {}
    for operation, batch in steps:
        for row in batch:
            if operation == "delete":
                state.pop(row["uuid"], None)
            else:
                state[row["uuid"]] = row
    return _data(pa.Table.from_pylist(list(state.values())))


def test_a_merge_on_read_table_lives_on_s3(spark, bucket) -> None:  # type: ignore[no-untyped-def]
    path = f"{bucket}/life"
    for i, (operation, batch) in enumerate(STEPS):
        options = {**OPTIONS, "hoodie.datasource.write.operation": operation}
        pyhudi.write(df_of(spark, batch), path, options)
        if i == 4:  # time travel goes back here (after this write and its services)
            fifth = _expected(STEPS[: i + 1])
            fifth_instant = pyhudi.HudiTable(path).commits()[-1].time

    table = pyhudi.HudiTable(path)
    actions = [i.action.value for i in table.timeline]
    assert {"clean", "replacecommit", "commit", "deltacommit"} <= set(actions), actions
    assert table.archived_timeline(), f"nothing was archived: {actions}"
    metadata = pyhudi.HudiTable(f"{path}/.hoodie/metadata")
    assert "commit" in {i.action.value for i in metadata.timeline}, "no metadata-table compaction"

    expected = _expected(STEPS)
    assert len(expected) == 85
    assert _data(pyhudi.read_arrow(path)) == expected
    assert _data(pyhudi.read(spark, path).toArrow()) == expected
    assert _data(spark.read.format("hudi").load(path).toArrow()) == expected
    assert _data(hudi_rs_table(path)) == expected

    as_of = pyhudi.read(spark, path, {"as.of.instant": fifth_instant}).toArrow()
    assert _data(as_of) == fifth
    assert _data(hudi_rs_table(path, as_of=fifth_instant)) == fifth
    commits = [i.time for i in table.commits() if i.action.value == "deltacommit"]
    incremental = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": commits[-2],
    }
    changed = pyhudi.read(spark, path, incremental).toArrow()
    assert {r["uuid"] for r in changed.to_pylist()} == {r["uuid"] for r in STEPS[-1][1]}
    # The CLI: the timeline, the metadata table checked against S3's listing, a clean (with
    # nothing left to clean).
    assert commits[-1] in _cli("show", "timeline", path)
    _cli("metadata", "validate", path)
    _cli("clean", path, "--option", "hoodie.clean.commits.retained=1")

    optimized = {"hoodie.datasource.query.type": "read_optimized"}
    assert pyhudi.read(spark, path, optimized).count() == len(pyhudi.read_arrow(path, optimized))


def _cli(*args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "pyhudi", *args],
        capture_output=True,
        text=True,
        env=os.environ,  # the endpoint and keys, as a user's shell has them
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout
