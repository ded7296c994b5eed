"""Concurrency-control benchmarks (issue 9): what OCC costs one writer, what two writers gain.

* `occ_single_writer_overhead`: one upsert with OCC + FileSystemBasedLockProvider vs the same
  upsert in single-writer mode (ratio of seconds, target <= 1.05).
* `occ_two_writers_disjoint`: two writer processes upserting disjoint partitions at the same time
  vs one writer process doing the same writes one after the other (ratio of rows/s, target >= 1.3).
  Each process has its own local Spark: 1 core each for the two writers, both cores for the single
  writer, so the single writer is not handicapped. Session start and each process's first write
  are excluded: every process is started and runs a warm-up round first; each measured round is
  released through a barrier file.

Rows: `PYHUDI_BENCH_OCC_ROWS` (default 200,000 per upsert).
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from tests.helpers.processes import CORES_ENV, SparkProcess, row_spec, rows_frame

import pyhudi
from bench.common import (
    HUDI_OPTIONS,
    RUNS,
    Measure,
    fresh,
    materialize,
    median_pair,
    path,
    source_data,
    upsert_batch,
)

OCC_ROWS = int(os.environ.get("PYHUDI_BENCH_OCC_ROWS", "200000"))
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
}
TRIPS = {
    "hoodie.table.name": "bench_occ",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.operation": "upsert",
    **OCC,
}
WRITES_PER_WRITER = 2


def run(spark: SparkSession) -> dict[str, Measure]:
    return {
        "occ_single_writer_overhead": single_writer_overhead(spark),
        "occ_two_writers_disjoint": two_writers_disjoint(spark),
    }


def single_writer_overhead(spark: SparkSession) -> Measure:
    source = materialize(spark, source_data(spark, OCC_ROWS), path("occ_source"))
    batch = materialize(spark, upsert_batch(spark, OCC_ROWS), path("occ_upsert_batch"))
    base = path("occ_base")
    if not os.path.exists(os.path.join(base, ".hoodie")):
        pyhudi.write(
            source,
            fresh(base),
            {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "bulk_insert"},
        )
    upsert = {**HUDI_OPTIONS, "hoodie.datasource.write.operation": "upsert"}

    def prepare(run: int) -> None:
        for target in ("occ_on", "occ_off"):
            fresh(path(target))
            shutil.copytree(base, path(target))

    ours, theirs = median_pair(
        prepare,
        lambda run: pyhudi.write(batch, path("occ_on"), {**upsert, **OCC}),
        lambda run: pyhudi.write(batch, path("occ_off"), upsert),
        runs=max(RUNS, 5),
    )
    return Measure(ours, theirs, target=1.05, runs=max(RUNS, 5))


def _writes(table: Path, writer: int) -> list[dict[str, Any]]:
    """Writer `writer`'s upserts: new keys, then half of them again plus new ones, own partitions."""
    cities = [f"w{writer}_p{i}" for i in range(3)]
    start = 1_000_000 * (writer + 1)
    return [
        {
            "op": "write",
            "path": str(table),
            "options": TRIPS,
            "rows": row_spec(
                start + k * OCC_ROWS // 2, OCC_ROWS, tag=10 * writer + k, cities=cities
            ),
        }
        for k in range(WRITES_PER_WRITER)
    ]


def _seed(spark: SparkSession, table: Path) -> None:
    fresh(str(table))
    pyhudi.write(rows_frame(spark, row_spec(0, 1000, tag=0, cities=["seed"])), str(table), TRIPS)


def _released(processes: list[SparkProcess], barrier: Path, writes: int) -> float:
    """Seconds from releasing `barrier` until every process reported `writes` more results."""
    before = [len(p.step_results()) for p in processes]
    started = time.perf_counter()
    barrier.touch()
    while any(len(p.step_results()) < b + writes for p, b in zip(processes, before)):
        for process in processes:
            if not process.alive() and len(process.step_results()) < writes:
                raise RuntimeError(f"{process.name} died:\n{process.log_tail()}")
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    failed = [r for p in processes for r in p.step_results() if not r.ok]
    if failed:
        raise RuntimeError(f"benchmark writes failed: {failed}")
    return elapsed


def two_writers_disjoint(spark: SparkSession) -> Measure:
    work = Path(path("occ_two_writers"))
    shutil.rmtree(work, ignore_errors=True)
    runs = max(RUNS, 3)
    tables = {
        (mode, r): work / f"{mode}_{r}"
        for mode in ("concurrent", "serial")
        for r in range(runs + 1)
    }
    for table in tables.values():
        _seed(spark, table)
    steps: dict[str, list[dict[str, Any]]] = {"w0": [], "w1": [], "serial": []}
    for r in range(runs + 1):  # run 0 warms every process up (first write of a process)
        for w in (0, 1):
            steps[f"w{w}"] += [
                {"op": "wait_file", "path": str(work / f"go_concurrent_{r}"), "timeout_s": 3600}
            ]
            steps[f"w{w}"] += _writes(tables[("concurrent", r)], w)
        steps["serial"] += [
            {"op": "wait_file", "path": str(work / f"go_serial_{r}"), "timeout_s": 3600}
        ]
        steps["serial"] += _writes(tables[("serial", r)], 0) + _writes(tables[("serial", r)], 1)
    writers = [SparkProcess(steps[n], work, n, {CORES_ENV: "1"}).start() for n in ("w0", "w1")]
    serial = SparkProcess(steps["serial"], work, "serial", {CORES_ENV: "2"}).start()
    try:
        for process in (*writers, serial):
            process.wait_ready(timeout_s=600)
        concurrent_s, serial_s = [], []
        for r in range(runs + 1):  # interleaved, the machine is noisy
            serial_s.append(_released([serial], work / f"go_serial_{r}", 2 * WRITES_PER_WRITER))
            concurrent_s.append(_released(writers, work / f"go_concurrent_{r}", WRITES_PER_WRITER))
        per_write = [round(r.seconds, 1) for p in (*writers, serial) for r in p.step_results()]
        print(
            f"occ_two_writers_disjoint: seconds per round concurrent {concurrent_s} serial "
            f"{serial_s} (round 0 = warm-up); per write (w0, w1, serial) {per_write}",
            flush=True,
        )
    finally:
        for process in (*writers, serial):
            process.kill()
    rows = 2 * WRITES_PER_WRITER * OCC_ROWS
    return Measure(
        rows / statistics.median(concurrent_s[1:]),  # run 0 was the warm-up
        rows / statistics.median(serial_s[1:]),
        target=1.3,
        higher_is_better=True,
        runs=runs,
    )
