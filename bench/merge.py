"""MERGE INTO (`HudiTable.merge`) of 10% updates, 2% inserts and 1% deletes into the 2M-row
copy-on-write table, as one commit, against:

* `merge_vs_upsert_and_delete`: the same changes as two pyhudi writes, an upsert (the updates and
  inserts) and a delete (the deleted keys): what a user did before MERGE (target <= 0.7);
* `merge_vs_hudi_0_15`, `merge_vs_hudi_1_2`: Apache Hudi's Spark SQL `MERGE INTO` of the same
  source on its own copy of the table (its bulk_insert of the same rows), timed inside its process
  (`bench/hudi_jvm.py`; `PYHUDI_BENCH_HUDI=0.15` runs one version);
* `merge_vs_delta_rs`: delta-rs `DeltaTable.merge` with the same clauses on a Delta table of the
  same rows (`bench/peer.py`).

Every merge matches on key and partition (`t.key = s.key AND t.part = s.part`) and takes the
source's `op` column: `'D'` deletes the matched row, other matches update every column, unmatched
rows are inserted. `PYHUDI_BENCH_ROWS` sets the table's size (a quick check: 20000).
"""

from __future__ import annotations

import os
import shutil
import statistics
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    ROWS,
    RUNS,
    Measure,
    Skipped,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    timed,
)

ON = "t.key = s.key AND t.part = s.part"
#: Of every 100 keys of the table: 10 updated, 1 deleted; plus ROWS / 50 new keys.
UPDATED_PER_100 = 10
DELETED_PER_100 = 1
HUDI_MERGE = (
    "MERGE INTO {table} t USING {source} s ON " + ON + " "
    "WHEN MATCHED AND s.op = 'D' THEN DELETE "
    "WHEN MATCHED THEN UPDATE SET * "
    "WHEN NOT MATCHED THEN INSERT *"
)


def run(spark: SparkSession) -> dict[str, Measure | Skipped]:
    source = path("source")
    materialize(spark, source_data(spark), source)
    changes = materialize(spark, merge_batch(spark), path("merge_batch"))
    upserts = materialize(
        spark, changes.filter("op <> 'D'").drop("op"), path("merge_batch_upserts")
    )
    deletes = materialize(spark, changes.filter("op = 'D'").drop("op"), path("merge_batch_deletes"))
    base = path("merge_base")
    _write(spark.read.parquet(source), fresh(base), "bulk_insert")

    ours: list[float] = []

    def merge_run(run: int) -> None:
        ours.append(timed(lambda: _merge(changes, path("merge_ours"))))

    def two_writes(run: int) -> None:
        _write(upserts, path("merge_two_writes"), "upsert")
        _write(deletes, path("merge_two_writes"), "delete")

    def prepare(run: int) -> None:
        _copy(base, path("merge_ours"))
        _copy(base, path("merge_two_writes"))

    _, theirs = median_pair(prepare, merge_run, two_writes)
    merged = statistics.median(ours)
    _check_same_rows(spark, path("merge_ours"), path("merge_two_writes"))
    results: dict[str, Measure | Skipped] = {
        "merge_vs_upsert_and_delete": Measure(merged, theirs, target=0.7)
    }
    results |= _vs_hudi(source, path("merge_batch"), merged)
    results["merge_vs_delta_rs"] = _vs_delta(changes, merged)
    return results


def merge_batch(spark: SparkSession, rows: int = ROWS) -> DataFrame:
    """The merge's source: `op` 'U' for 10% of the keys (later `ts`, new fare), 'D' for 1%, 'I'
    for ROWS / 50 new keys; every other column as the table's."""
    base = source_data(spark, rows).withColumn("slot", F.xxhash64("key") % 100)
    slot = F.abs(F.col("slot"))
    updates = base.filter(slot < UPDATED_PER_100).select(
        *[c for c in base.columns if c not in ("ts", "fare", "slot")],
        (F.col("ts") + 1).alias("ts"),
        (F.col("fare") + 1).alias("fare"),
        F.lit("U").alias("op"),
    )
    deletes = base.filter(slot >= 100 - DELETED_PER_100).drop("slot").withColumn("op", F.lit("D"))
    inserts = source_data(spark, rows // 50, start=rows).withColumn("op", F.lit("I"))
    columns = [*source_data(spark, 1).columns, "op"]
    return (
        updates.select(*columns)
        .unionByName(deletes.select(*columns))
        .unionByName(inserts.select(*columns))
    )


def _write(df: DataFrame, target: str, operation: str) -> None:
    pyhudi.write(df, target, {**HUDI_OPTIONS, "hoodie.datasource.write.operation": operation})


def _merge(changes: DataFrame, target: str) -> None:
    (
        pyhudi.HudiTable(target)
        .merge(changes, ON, source_alias="s", target_alias="t")
        .when_matched_delete("s.op = 'D'")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )


def _copy(source: str, target: str) -> str:
    fresh(target)
    shutil.copytree(source, target)
    return target


def _check_same_rows(spark: SparkSession, merged: str, written: str) -> None:
    """The merge and the two writes leave the same rows (a bench of a wrong merge is no bench)."""
    columns = source_data(spark, 1).columns
    ours = pyhudi.read(spark, merged).select(*columns)
    theirs = pyhudi.read(spark, written).select(*columns)
    assert ours.count() == theirs.count() == ROWS + ROWS // 50 - _deleted(spark)
    assert ours.exceptAll(theirs).isEmpty() and theirs.exceptAll(ours).isEmpty()


def _deleted(spark: SparkSession) -> int:
    return spark.read.parquet(path("merge_batch_deletes")).count()


# ---- Apache Hudi's MERGE INTO ----------------------------------------------------------------


def _vs_hudi(source: str, batch: str, ours: float) -> dict[str, Measure | Skipped]:
    from tests.judge.client import HUDI_0_15, HUDI_1_2, Judge

    from bench.hudi_jvm import COW, HUDI_LOCAL, HUDI_SQL, HUDI_WRITE

    wanted = os.environ.get("PYHUDI_BENCH_HUDI", "0.15,1.2").split(",")
    results: dict[str, Measure | Skipped] = {}
    for version in (v for v in (HUDI_0_15, HUDI_1_2) if v.name in wanted):
        name = "merge_vs_hudi_" + version.name.replace(".", "_")
        work = Path(path("vs_hudi", f"merge-hudi-{version.name}-process"))
        judge = Judge(version, work, conf={"spark.driver.memory": "8g"}).start()
        try:
            base = fresh(path("vs_hudi", f"merge-hudi-{version.name}-base"))
            options = {**HUDI_LOCAL, **COW, "hoodie.datasource.write.operation": "bulk_insert"}
            judge.run(HUDI_WRITE, source=source, target=base, options=options)
            seconds = []
            for run in range(RUNS):
                target = _copy(base, path("vs_hudi", f"merge-hudi-{version.name}"))
                table = f"bench_merge_{run}"
                before = [
                    *(f"SET {k}={v}" for k, v in HUDI_LOCAL.items()),
                    f"CREATE TABLE {table} USING hudi LOCATION '{target}'",
                    f"CREATE OR REPLACE TEMPORARY VIEW merge_source USING parquet "
                    f"OPTIONS (path '{batch}')",
                ]
                statement = HUDI_MERGE.format(table=table, source="merge_source")
                seconds.append(float(judge.run(HUDI_SQL, timed=statement, before=list(before))))
                _assert_merged(target)
            results[name] = Measure(ours, statistics.median(seconds), target=1.0)
        finally:
            judge.stop()
    return results


def _assert_merged(target: str) -> None:
    """Hudi's merge committed (its seconds are of a merge that did the work)."""
    last = [i for i in pyhudi.HudiTable(target).timeline if i.is_completed][-1]
    assert last.action.value == "commit", (target, last)


# ---- delta-rs --------------------------------------------------------------------------------


def _vs_delta(changes: DataFrame, ours: float) -> Measure | Skipped:
    try:
        from deltalake import DeltaTable, write_deltalake
    except ModuleNotFoundError:
        return Skipped("deltalake is not installed (pip install -e '.[bench]')")
    import pyarrow.dataset as pads

    base = path("merge_delta_base")
    if not os.path.isdir(os.path.join(base, "_delta_log")):
        write_deltalake(
            fresh(base),
            pads.dataset(path("source"), format="parquet").scanner().to_reader(),
            partition_by=["part"],
            mode="overwrite",
        )
    source = pads.dataset(path("merge_batch"), format="parquet").to_table()
    columns = [c for c in changes.columns if c != "op"]
    every = {c: f"s.{c}" for c in columns}

    def delta(run: int) -> None:
        (
            DeltaTable(path("merge_delta"))
            .merge(source, predicate=ON, source_alias="s", target_alias="t")
            .when_matched_delete(predicate="s.op = 'D'")
            .when_matched_update(updates=every)
            .when_not_matched_insert(updates=every)
            .execute()
        )

    seconds = []
    for run in range(RUNS):
        _copy(base, path("merge_delta"))
        seconds.append(timed(lambda run=run: delta(run)))
    return Measure(ours, statistics.median(seconds), target=3.0)
