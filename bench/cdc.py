"""The change feed (CDC): what logging changes costs a write, and what a CDC query costs a read.

* `cdc_upsert_on_vs_off`: the 10% update + 2% insert batch upserted into a copy of the 2M-row
  copy-on-write table with `hoodie.table.cdc.enabled=true` (every merged file group also writes a
  CDC log of its changes, before and after images) against the same upsert without CDC (target
  <= 1.3);
* `cdc_query_vs_incremental_one_commit`: the CDC query of that upsert commit (`op`, `ts_ms`, and
  before/after images as JSON) against the incremental read of the same commit (the changed
  records' latest state), both through `pyhudi.read` with a count of every column (target
  <= 3: the CDC query also decodes the CDC logs and prints two JSON images per change).
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
from pyhudi.table.context import TableContext

TARGET = 1.3
QUERY_TARGET = 3.0
CDC = {"hoodie.table.cdc.enabled": "true"}


def run(spark: SparkSession) -> dict[str, Measure]:
    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    bases = {
        "on": _base(source, "cdc_base_on", {**HUDI_OPTIONS, **CDC}),
        "off": _base(source, "cdc_base_off", HUDI_OPTIONS),
    }
    results = {"cdc_upsert_on_vs_off": _upsert(bases, batch)}
    results["cdc_query_vs_incremental_one_commit"] = _query(spark)
    return results


def _write(df: DataFrame, target: str, options: dict[str, str], operation: str) -> None:
    pyhudi.write(df, target, {**options, "hoodie.datasource.write.operation": operation})


def _base(source: DataFrame, name: str, options: dict[str, str]) -> str:
    target = path(name)
    if not shutil.os.path.exists(path(name, ".hoodie")):
        _write(source, fresh(target), options, "bulk_insert")
    return target


def _upsert(bases: dict[str, str], batch: DataFrame) -> Measure:
    copies = {kind: path(f"cdc_{kind}") for kind in bases}

    def prepare(run: int) -> None:
        for kind, base in bases.items():
            shutil.copytree(base, fresh(copies[kind]))

    def upsert(kind: str):  # type: ignore[no-untyped-def]
        options = {**HUDI_OPTIONS, **(CDC if kind == "on" else {})}
        return lambda run: _write(batch, copies[kind], options, "upsert")

    ours, theirs = median_pair(prepare, upsert("on"), upsert("off"))
    return Measure(ours, theirs, target=TARGET)


def _query(spark: SparkSession) -> Measure:
    table = path("cdc_on")  # the last upserted copy: its latest commit is the upsert
    commit = TableContext.open(table).active.timeline.commits().last
    assert commit is not None
    window = {
        "hoodie.datasource.query.type": "incremental",
        "hoodie.datasource.read.begin.instanttime": str(int(commit.time) - 1),
        "hoodie.datasource.read.end.instanttime": commit.time,
    }
    cdc = {**window, "hoodie.datasource.query.incremental.format": "cdc"}

    def count(options: dict[str, str]):  # type: ignore[no-untyped-def]
        def read(run: int) -> None:
            frame = pyhudi.read(spark, table, options)
            frame.selectExpr("count(*)", *(f"max({c})" for c in frame.columns[:4])).collect()

        return read

    ours, theirs = median_pair(lambda run: None, count(cdc), count(window))
    return Measure(ours, theirs, target=QUERY_TARGET)
