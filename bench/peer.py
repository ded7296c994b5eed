"""The peer a Python data engineer would pick instead: delta-rs (`deltalake`, no Spark), on the same
rows in the same run. Ratios are pyhudi / delta-rs (lower is better for pyhudi).

* load: `write_deltalake(partition_by=part)` of the source parquet vs pyhudi bulk_insert;
* upsert: `DeltaTable.merge` (matched on key and partition, update all / insert all) of the 10%+2%
  batch vs pyhudi upsert into COW, MOR (base files not small) and MOR with the bucket index;
* full-scan read: every column of every row (`to_pyarrow_table`) vs a Spark scan of every column
  of the pyhudi table (`write.format("noop")`), COW and MOR;
* Arrow read: the same tables read without Spark, `HudiTable(path).to_arrow()` (every column, the
  Hudi meta columns included) vs `to_pyarrow_table`, COW and MOR.
"""

from __future__ import annotations

import os
import shutil

import pyarrow.dataset as pads
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

MOR = {
    **HUDI_OPTIONS,
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",
}
BUCKET = {**MOR, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
LAYOUTS = {"cow": HUDI_OPTIONS, "mor": MOR, "mor_bucket": BUCKET}


def run(spark: SparkSession) -> dict[str, Measure]:
    from deltalake import write_deltalake  # the bench extra: pip install -e '.[bench]'

    source = materialize(spark, source_data(spark), path("source"))
    batch = materialize(spark, upsert_batch(spark), path("upsert_batch"))
    results = {"bulk_insert_vs_delta_rs": load(source, write_deltalake)}
    for name, options in LAYOUTS.items():
        if name != "cow":  # the cow table is the one load() wrote
            _bulk_insert(source, path(f"peer_{name}_base"), options)
    for name, options in LAYOUTS.items():
        results[f"{name}_upsert_vs_delta_rs"] = upsert(batch, name, options)
    for name in ("cow", "mor"):
        results[f"{name}_full_scan_read_vs_delta_rs"] = full_scan(spark, name)
    for name in ("cow", "mor"):
        results[f"{name}_arrow_read_vs_delta_rs"] = arrow_read(name)
    return results


def _bulk_insert(source: DataFrame, target: str, options: dict[str, str]) -> None:
    pyhudi.write(
        source, fresh(target), {**options, "hoodie.datasource.write.operation": "bulk_insert"}
    )


def _source_dataset(name: str) -> pads.Dataset:
    return pads.dataset(path(name), format="parquet")


def load(source: DataFrame, write_deltalake) -> Measure:  # type: ignore[no-untyped-def]
    def delta(run: int) -> None:
        write_deltalake(
            fresh(path("delta_base")),
            _source_dataset("source").scanner().to_reader(),
            partition_by=["part"],
            mode="overwrite",
        )

    ours, theirs = median_pair(
        lambda run: None,
        lambda run: _bulk_insert(source, path("peer_cow_base"), HUDI_OPTIONS),
        delta,
    )
    return Measure(ours, theirs, target=3.0)


def _copy(source: str, target: str) -> None:
    fresh(target)
    shutil.copytree(source, target)


def upsert(batch: DataFrame, name: str, options: dict[str, str]) -> Measure:
    from deltalake import DeltaTable

    def prepare(run: int) -> None:
        _copy(path(f"peer_{name}_base"), path(f"peer_{name}_upsert"))
        _copy(path("delta_base"), path("delta_upsert"))

    def delta(run: int) -> None:
        (
            DeltaTable(path("delta_upsert"))
            .merge(
                _source_dataset("upsert_batch").to_table(),
                predicate="t.key = s.key AND t.part = s.part",
                source_alias="s",
                target_alias="t",
            )
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )

    ours, theirs = median_pair(
        prepare,
        lambda run: pyhudi.write(
            batch,
            path(f"peer_{name}_upsert"),
            {**options, "hoodie.datasource.write.operation": "upsert"},
        ),
        delta,
    )
    return Measure(ours, theirs, target=1.5 if name == "mor_bucket" else 3.0)


def full_scan(spark: SparkSession, name: str) -> Measure:
    from deltalake import DeltaTable

    table = path(f"peer_{name}_upsert")
    assert os.path.isdir(table)
    ours, theirs = median_pair(
        lambda run: None,
        lambda run: pyhudi.read(spark, table).write.format("noop").mode("overwrite").save(),
        lambda run: DeltaTable(path("delta_upsert")).to_pyarrow_table(),
        runs=5,
    )
    return Measure(ours, theirs, target=2.0, runs=5)


def arrow_read(name: str) -> Measure:
    """`HudiTable(path).to_arrow()` (no Spark) vs `DeltaTable(path).to_pyarrow_table()`."""
    from deltalake import DeltaTable

    table = path(f"peer_{name}_upsert")
    assert os.path.isdir(table)
    ours, theirs = median_pair(
        lambda run: None,
        lambda run: pyhudi.HudiTable(table).to_arrow(),
        lambda run: DeltaTable(path("delta_upsert")).to_pyarrow_table(),
        runs=5,
    )
    return Measure(ours, theirs, target=2.0, runs=5)
