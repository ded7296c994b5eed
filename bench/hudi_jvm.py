"""pyhudi against Apache Hudi itself: Hudi 0.15 and Hudi 1.2 (their Spark 3.5 bundles, pyspark
3.5.1, in their own processes) and pyhudi (Spark 4) on the same parquet inputs, one after the
other on the same 2 cores. Each engine writes, upserts, reads, compacts and cleans its own tables;
Hudi's seconds are measured inside its process (no request overhead).

Ratios: pyhudi seconds / Hudi seconds (`*_vs_hudi_0_15`, `*_vs_hudi_1_2`), median of `RUNS`.
Hudi 1.2 writes its default table version (9); pyhudi and Hudi 0.15 write version 6.
`PYHUDI_BENCH_HUDI=0.15` (or `1.2`) runs against one Hudi version only.
"""

from __future__ import annotations

import os
import shutil
import statistics
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from tests.judge.client import HUDI_0_15, HUDI_1_2, HudiVersion, Judge

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    RUNS,
    Measure,
    fresh,
    materialize,
    path,
    source_data,
    timed,
    upsert_batch,
)

COW = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
MOR = {**HUDI_OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COLUMN_STATS = {**COW, "hoodie.metadata.index.column.stats.enable": "true"}
#: Hudi in local mode (its docs): no timeline server, direct markers.
HUDI_LOCAL = {"hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT"}
CLEAN = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}

#: Python run in the Hudi process: each answers the seconds of the timed part.
HUDI_WRITE = """
import time
df = spark.read.parquet(source)
began = time.perf_counter()
df.write.format("hudi").options(**options).mode("append").save(target)
result = time.perf_counter() - began
"""
HUDI_READ = """
import time
from pyspark.sql import functions as F
began = time.perf_counter()
spark.read.format("hudi").load(target).agg(F.count(F.lit(1)), F.sum("fare")).collect()
result = time.perf_counter() - began
"""
HUDI_SQL = """
import time
for statement in before:
    spark.sql(statement).collect()
began = time.perf_counter()
spark.sql(timed).collect()
result = time.perf_counter() - began
"""

STEPS = ("bulk_insert", "cow_upsert", "mor_upsert", "mor_snapshot_read", "compaction", "clean")


def run(spark: SparkSession) -> dict[str, Measure]:
    source = path("source")
    batch = path("upsert_batch")
    materialize(spark, source_data(spark), source)
    materialize(spark, upsert_batch(spark), batch)
    ours = _pyhudi_seconds(spark, source, batch)
    results: dict[str, Measure] = {}
    wanted = os.environ.get("PYHUDI_BENCH_HUDI", "0.15,1.2").split(",")
    for version in (v for v in (HUDI_0_15, HUDI_1_2) if v.name in wanted):
        theirs = _hudi_seconds(version, source, batch)
        suffix = "hudi_" + version.name.replace(".", "_")
        for step in (*STEPS, "metadata_upsert"):
            results[f"{step}_vs_{suffix}"] = Measure(ours[step], theirs[step], target=1.0)
    return results


def _median(prepare: Callable[[int], None], action: Callable[[int], float]) -> float:
    seconds = []
    for run in range(RUNS):
        prepare(run)
        seconds.append(action(run))
    return statistics.median(seconds)


def _copy(source: str, target: str) -> str:
    fresh(target)
    shutil.copytree(source, target)
    return target


def _pyhudi_seconds(spark: SparkSession, source: str, batch: str) -> dict[str, float]:
    src, upserts = spark.read.parquet(source), spark.read.parquet(batch)
    root = path("vs_hudi", "pyhudi")

    def write(df, target: str, options: dict[str, str], operation: str) -> float:  # type: ignore[no-untyped-def]
        op = {**options, "hoodie.datasource.write.operation": operation}
        return timed(lambda: pyhudi.write(df, target, op))

    return _steps(
        root,
        write_source=lambda target, options: write(src, target, options, "bulk_insert"),
        upsert=lambda target, options: write(upserts, target, options, "upsert"),
        read=lambda target: timed(
            lambda: pyhudi.read(spark, target).agg(F.count(F.lit(1)), F.sum("fare")).collect()
        ),
        compact=lambda target: timed(lambda: pyhudi.HudiTable(target).compaction.run(spark)),
        clean=lambda target: timed(lambda: pyhudi.HudiTable(target).clean(CLEAN)),
    )


def _hudi_seconds(version: HudiVersion, source: str, batch: str) -> dict[str, float]:
    work = Path(path("vs_hudi", f"hudi-{version.name}-process"))
    judge = Judge(version, work, conf={"spark.driver.memory": "8g"}).start()
    counter = iter(range(1_000_000))
    try:

        def write(data: str, target: str, options: dict[str, str], operation: str) -> float:
            op = {**HUDI_LOCAL, **options, "hoodie.datasource.write.operation": operation}
            return float(judge.run(HUDI_WRITE, source=data, target=target, options=op))

        def sql(timed_statement: str, before: tuple[str, ...] = ()) -> float:
            return float(judge.run(HUDI_SQL, timed=timed_statement, before=list(before)))

        def clean(target: str) -> float:
            name = f"bench_clean_{next(counter)}"
            register = f"CREATE TABLE {name} USING hudi LOCATION '{target}'"
            call = (
                f"CALL run_clean(table => '{name}', clean_policy => 'KEEP_LATEST_FILE_VERSIONS', "
                "file_versions_retained => 1)"
            )
            return sql(call, (register,))

        return _steps(
            path("vs_hudi", f"hudi-{version.name}"),
            write_source=lambda target, options: write(source, target, options, "bulk_insert"),
            upsert=lambda target, options: write(batch, target, options, "upsert"),
            read=lambda target: float(judge.run(HUDI_READ, target=target)),
            # Hudi schedules a compaction only after 5 delta commits by default: one is enough here.
            compact=lambda target: sql(
                f"CALL run_compaction(op => 'scheduleAndExecute', path => '{target}')",
                ("SET hoodie.compact.inline.max.delta.commits=1",),
            ),
            clean=clean,
        )
    finally:
        judge.stop()


def _done(seconds: float, target: str, action: str) -> float:
    """`seconds`, once the table's timeline shows the service completed (nothing timed for
    a service that found no work)."""
    completed = [i for i in pyhudi.HudiTable(target).timeline if i.is_completed]
    assert completed and completed[-1].action.value == action, (target, completed[-1:])
    return seconds


def _steps(
    root: str,
    *,
    write_source: Callable[[str, dict[str, str]], float],
    upsert: Callable[[str, dict[str, str]], float],
    read: Callable[[str], float],
    compact: Callable[[str], float],
    clean: Callable[[str], float],
) -> dict[str, float]:
    """The same steps for every engine, each on copies of the engine's own tables."""

    def table(name: str) -> str:
        return os.path.join(root, name)

    seconds = {
        "bulk_insert": _median(
            lambda run: fresh(table("bulk")), lambda run: write_source(table("bulk"), COW)
        )
    }
    write_source(fresh(table("mor_bulk")), MOR)
    write_source(fresh(table("stats_bulk")), COLUMN_STATS)
    seconds["cow_upsert"] = _median(
        lambda run: _copy(table("bulk"), table("cow_upsert")) and None,
        lambda run: upsert(table("cow_upsert"), COW),
    )
    seconds["mor_upsert"] = _median(
        lambda run: _copy(table("mor_bulk"), table("mor_upsert")) and None,
        lambda run: upsert(table("mor_upsert"), MOR),
    )
    seconds["mor_snapshot_read"] = _median(lambda run: None, lambda run: read(table("mor_upsert")))
    seconds["compaction"] = _median(
        lambda run: _copy(table("mor_upsert"), table("compaction")) and None,
        lambda run: _done(compact(table("compaction")), table("compaction"), "commit"),
    )
    seconds["clean"] = _median(
        lambda run: _copy(table("cow_upsert"), table("clean")) and None,
        lambda run: _done(clean(table("clean")), table("clean"), "clean"),
    )
    seconds["metadata_upsert"] = _median(
        lambda run: _copy(table("stats_bulk"), table("stats_upsert")) and None,
        lambda run: upsert(table("stats_upsert"), COLUMN_STATS),
    )
    return seconds
