"""Table version 9 (Hudi 1.1+) against version 6 (Hudi 0.14/0.15): the same pyhudi writes and reads
of the same rows at both versions, interleaved run by run (the ratio is v9 / v6, target <= 1.1):

* `v9_vs_v6_bulk_insert`: bulk insert of the 2M-row source into a new table (metadata table on);
* `v9_vs_v6_upsert_cow`, `v9_vs_v6_upsert_mor`: the 10% update + 2% insert batch into a copy of
  the bulk-inserted table, copy-on-write and merge-on-read;
* `v9_vs_v6_snapshot_mor`: the snapshot read (a count of every column) of the upserted
  merge-on-read table, base files merged with their log files.

What a version changes on this path: the timeline's layout (completion times, Avro commit metadata),
a log file per delta commit, and the metadata table's layout.
"""

from __future__ import annotations

import shutil

from pyspark.sql import DataFrame, SparkSession

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    Measure,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    upsert_batch,
)

TARGET = 1.1
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def _options(version: str, **extra: str) -> dict[str, str]:
    return {**HUDI_OPTIONS, **extra, "hoodie.write.table.version": version}


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    results = {"v9_vs_v6_bulk_insert": _bulk_insert(source)}
    for kind, extra in (("cow", {}), ("mor", MOR)):
        bases = {v: _base(source, f"versions_{kind}_base_v{v}", v, extra) for v in ("6", "9")}
        results[f"v9_vs_v6_upsert_{kind}"] = _upsert(bases, batch, kind, extra)
    results["v9_vs_v6_snapshot_mor"] = _snapshot(spark)
    return results


def _write(df: DataFrame, target: str, options: dict[str, str], operation: str) -> None:
    pyhudi.write(df, target, {**options, "hoodie.datasource.write.operation": operation})


def _bulk_insert(source: DataFrame) -> Measure:
    def write(version: str):  # type: ignore[no-untyped-def]
        return lambda run: _write(
            source, fresh(path(f"versions_bulk_v{version}")), _options(version), "bulk_insert"
        )

    ours, theirs = median_pair(lambda run: None, write("9"), write("6"))
    return Measure(ours, theirs, target=TARGET)


def _base(source: DataFrame, name: str, version: str, extra: dict[str, str]) -> str:
    target = path(name)
    if not shutil.os.path.exists(path(name, ".hoodie")):
        _write(source, fresh(target), _options(version, **extra), "bulk_insert")
    return target


def _upsert(bases: dict[str, str], batch: DataFrame, kind: str, extra: dict[str, str]) -> Measure:
    copies = {v: path(f"versions_{kind}_v{v}") for v in bases}

    def prepare(run: int) -> None:
        for version, base in bases.items():
            shutil.copytree(base, fresh(copies[version]))

    def upsert(version: str):  # type: ignore[no-untyped-def]
        options = {k: v for k, v in _options(version, **extra).items() if "table.version" not in k}
        return lambda run: _write(batch, copies[version], options, "upsert")

    ours, theirs = median_pair(prepare, upsert("9"), upsert("6"))
    return Measure(ours, theirs, target=TARGET)


def _snapshot(spark: SparkSession) -> Measure:
    def read(version: str):  # type: ignore[no-untyped-def]
        table = path(f"versions_mor_v{version}")
        return lambda run: pyhudi.read(spark, table).selectExpr("count(*)", "max(fare)").collect()

    ours, theirs = median_pair(lambda run: None, read("9"), read("6"))
    return Measure(ours, theirs, target=TARGET)
