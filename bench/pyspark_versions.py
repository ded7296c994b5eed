"""pyspark 3.5 against 4.x: the same pyhudi writes and reads of the same rows, each version in a
process of its own (the 3.5 one in the venv `scripts/pyspark35-env` builds), with the same Spark
settings, interleaved run by run (the ratio is 3.5 / 4.x, target <= 1.2):

* `pyspark35_vs_4_bulk_insert`: bulk insert of the 2M-row source into a new copy-on-write table;
* `pyspark35_vs_4_upsert_cow`, `pyspark35_vs_4_upsert_mor`: the 10% update + 2% insert batch into
  the bulk-inserted table, copy-on-write and merge-on-read;
* `pyspark35_vs_4_snapshot_mor`: the snapshot read (a count of every column) of the upserted
  merge-on-read table, base files merged with their log files.

Each process starts its session and runs one untimed small write first, so neither side pays its
JVM's start or first-use costs in a measure. What differs on this path: 4.x writes each file group
in `groupBy().applyInArrow`, 3.5 hash-partitions, sorts and cuts groups in `mapInArrow`
(`pyhudi/spark_compat.py`).

Child side: `python -m bench.pyspark_versions <source> <batch> <work>` prints one JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from pyspark.sql import SparkSession

from bench.common import (
    HUDI_OPTIONS,
    RUNS,
    Measure,
    Skipped,
    fresh,
    materialize,
    path,
    source_data,
    timed,
    upsert_batch,
)

TARGET = 1.2
STEPS = ("bulk_insert", "upsert_cow", "upsert_mor", "snapshot_mor")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
#: The child sessions' settings, the same on both versions.
CHILD_CONF = {"spark.driver.memory": "6g", "spark.sql.shuffle.partitions": "16"}


def run(spark: SparkSession) -> dict[str, Measure | Skipped]:
    source = path("source")
    batch = path("upsert_batch")
    materialize(spark, source_data(spark), source)
    materialize(spark, upsert_batch(spark), batch)
    try:
        older = subprocess.run(
            [os.path.join(ROOT, "scripts", "pyspark35-env")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except subprocess.CalledProcessError as err:
        reason = f"the pyspark 3.5 environment could not be built: {err.stderr[-300:]}"
        return {f"pyspark35_vs_4_{step}": Skipped(reason) for step in STEPS}
    times: dict[str, dict[str, list[float]]] = {"3.5": {}, "4": {}}
    for run_number in range(RUNS):
        order = [("3.5", older), ("4", sys.executable)]
        for version, python in order if run_number % 2 == 0 else order[::-1]:
            for step, seconds in _child(python, source, batch, version).items():
                times[version].setdefault(step, []).append(seconds)
    return {
        f"pyspark35_vs_4_{step}": Measure(
            statistics.median(times["3.5"][step]), statistics.median(times["4"][step]), TARGET
        )
        for step in STEPS
    }


def _child(python: str, source: str, batch: str, version: str) -> dict[str, float]:
    work = fresh(path(f"pyspark_{version}"))
    env = {**os.environ, "PYSPARK_PYTHON": python, "PYSPARK_DRIVER_PYTHON": python}
    out = subprocess.run(
        [python, "-m", "bench.pyspark_versions", source, batch, work],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


# ---- child side ---------------------------------------------------------------------------------
def main(argv: list[str]) -> int:
    import pyhudi
    from pyhudi.spark.session import local_session

    source_path, batch_path, work = argv
    spark = local_session("pyhudi-bench-versions", cores=2, conf=CHILD_CONF)
    source, batch = spark.read.parquet(source_path), spark.read.parquet(batch_path)

    def write(df, target: str, operation: str, **extra: str) -> None:  # type: ignore[no-untyped-def]
        options = {**HUDI_OPTIONS, **extra, "hoodie.datasource.write.operation": operation}
        pyhudi.write(df, os.path.join(work, target), options)

    write(source.limit(1000), "warm", "bulk_insert")  # untimed: the JVM's and workers' first use
    write(source.limit(100), "warm", "upsert")
    times = {
        "bulk_insert": timed(lambda: write(source, "cow", "bulk_insert")),
        "upsert_cow": timed(lambda: write(batch, "cow", "upsert")),
    }
    write(source, "mor", "bulk_insert", **MOR)
    times["upsert_mor"] = timed(lambda: write(batch, "mor", "upsert", **MOR))
    mor = os.path.join(work, "mor")

    def snapshot() -> None:
        frame = pyhudi.read(spark, mor)
        frame.selectExpr(*(f"count(`{c}`)" for c in frame.columns)).collect()

    times["snapshot_mor"] = timed(snapshot)
    spark.stop()
    print(json.dumps(times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
