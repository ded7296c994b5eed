"""Phase profile of the loads (round 6): a plain COW `bulk_insert` (metadata table on and off), a
bucket-indexed `bulk_insert` and their Spark baselines, interleaved in one process: wall seconds,
Spark stages (UI REST API), the CPU of the whole process tree (driver, JVM, Python workers, from
/proc) and the driver's own CPU. `task` profiles one write-task body in-process (cProfile).

    python -m bench.profile_loads [runs] [task]
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import pyhudi
from bench.common import HUDI_OPTIONS, fresh, materialize, path, profile_session, source_data
from bench.profile_reads import stages
from bench.upserts import BUCKET
from pyhudi.file_group.control_columns import DELETE
from pyhudi.index.bucket import bucket_id_column


def _tree_cpu() -> float:
    """CPU seconds (user + system, with reaped children) of this process and all its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = defaultdict(list)
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry)] = fields
        children[int(fields[1])].append(int(entry))
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        fields = stats.get(pid)
        if fields:
            total += sum(int(v) for v in fields[11:15]) / tick
        todo.extend(children.get(pid, []))
    return total


def _measured(spark: SparkSession, label: str, action: Callable[[], object]) -> dict[str, float]:
    before = set(stages(spark))
    cpu0, own0, wall0 = _tree_cpu(), time.process_time(), time.perf_counter()
    action()
    wall, own, cpu = time.perf_counter() - wall0, time.process_time() - own0, _tree_cpu() - cpu0
    new = [s for k, s in sorted(stages(spark).items()) if k not in before]
    run = sum(s["executorRunTime"] for s in new) / 1000
    jvm = sum(s["executorCpuTime"] for s in new) / 1e9
    print(
        f"  {label}: wall {wall:.2f}s tree-cpu {cpu:.2f}s driver-cpu {own:.2f}s "
        f"stages {len(new)} run {run:.2f}s jvm-cpu {jvm:.2f}s",
        flush=True,
    )
    for s in new:
        print(
            f"    stage {s['stageId']:4d} {s['numTasks']:3d} tasks run {s['executorRunTime'] / 1000:.2f}s "
            f"cpu {s['executorCpuTime'] / 1e9:.2f}s shuffle r/w "
            f"{s.get('shuffleReadBytes', 0) / 1e6:.1f}/{s.get('shuffleWriteBytes', 0) / 1e6:.1f}MB "
            f"{s['name'][:50]}"
        )
    return {"wall": wall, "cpu": cpu, "driver": own, "jvm": jvm}


def _contenders(source: DataFrame) -> dict[str, Callable[[], object]]:
    bulk = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
    bucket = {**BUCKET, "hoodie.datasource.write.operation": "bulk_insert"}
    no_mdt = {**bulk, "hoodie.metadata.enable": "false"}

    def floor() -> None:
        buckets = int(BUCKET["hoodie.bucket.index.num.buckets"])
        bucketed = source.withColumn("bucket", bucket_id_column(F.col("key"), buckets, None, False))
        bucketed.repartition("part", "bucket").drop("bucket").write.mode("overwrite").option(
            "compression", "snappy"
        ).partitionBy("part").parquet(fresh(path("prof_floor")))

    contenders = {
        "spark partitionBy": lambda: (
            source.write.mode("overwrite")
            .option("compression", "snappy")
            .partitionBy("part")
            .parquet(fresh(path("prof_plain")))
        ),
        "cow bulk_insert": lambda: pyhudi.write(source, fresh(path("prof_cow")), bulk),
        "cow bulk_insert mdt off": lambda: pyhudi.write(source, fresh(path("prof_nomdt")), no_mdt),
        "spark bucket floor": floor,
        "mor bucket bulk_insert": lambda: pyhudi.write(source, fresh(path("prof_bucket")), bucket),
    }
    if os.environ.get("PYHUDI_PROFILE_MDT_OFF", "1") == "0":
        del contenders["cow bulk_insert mdt off"]
    return contenders


def loads(spark: SparkSession, runs: int) -> None:
    source = materialize(spark, source_data(spark), path("source"))
    results: dict[str, list[dict[str, float]]] = defaultdict(list)
    for run in range(runs + 1):  # run 0 warms the JVM up: not in the medians
        print(f"-- run {run}, load {os.getloadavg()[0]:.1f}", flush=True)
        for label, action in _contenders(source).items():
            measured = _measured(spark, label, action)
            if run:
                results[label].append(measured)
    print("== medians")
    for label, values in results.items():
        medians = {k: statistics.median(v[k] for v in values) for k in values[0]}
        print(f"{label:26s} " + " ".join(f"{k} {v:.2f}" for k, v in medians.items()))
    for ours, theirs in (
        ("cow bulk_insert", "spark partitionBy"),
        ("mor bucket bulk_insert", "spark bucket floor"),
        ("mor bucket bulk_insert", "cow bulk_insert"),
    ):
        ratio = statistics.median(
            a["wall"] / b["wall"] for a, b in zip(results[ours], results[theirs], strict=True)
        )
        print(f"{ours} / {theirs}: median of per-run wall ratios {ratio:.2f}")


def task(spark: SparkSession) -> None:
    """cProfile of one bulk_insert task body over the first ~1M prepared rows of the source."""
    from pyhudi.file_group.bulk_insert import bulk_insert_function
    from pyhudi.writer.config import resolve_write_config
    from pyhudi.writer.pipeline import task_spec
    from pyhudi.writer.prepare import prepare_records

    options = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"}
    target = fresh(path("prof_task"))
    pyhudi.write(spark.read.parquet(path("source")).limit(10), target, options)
    from pyhudi.table.context import TableContext

    ctx = TableContext.open(target)
    cfg = resolve_write_config(options, ctx.config)
    prepared, schema = prepare_records(spark.read.parquet(path("source")), cfg, None)
    rows = prepared.drop(DELETE).limit(1_000_000)
    batches = rows._collect_as_arrow()
    batches = [b.slice(i, 10_000) for b in batches for i in range(0, b.num_rows, 10_000)]
    spec = task_spec(ctx, cfg, schema, "20991231235959999")
    for _ in range(2):
        profile = cProfile.Profile()
        started = time.process_time()
        profile.enable()
        list(bulk_insert_function(spec)(iter(batches)))
        profile.disable()
        print(f"task body: {time.process_time() - started:.2f}s CPU, {len(batches)} batches")
    pstats.Stats(profile).sort_stats("tottime").print_stats(18)


def main(argv: list[str]) -> int:
    spark = profile_session("pyhudi-profile-loads", "4078")
    if "task" in argv:
        task(spark)
    else:
        loads(spark, int(argv[0]) if argv else 3)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
