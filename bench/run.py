"""`make bench`: every benchmark suite, results in bench/results.json (ratios, median of runs)."""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import time

from bench.common import ROWS, RUNS, WORK, Skipped

SUITES = [
    "bench.cow",
    "bench.mor",
    "bench.services",
    "bench.bootstrap",
    "bench.occ",
    "bench.upserts",
    "bench.peer",
    "bench.merge",
    "bench.table_versions",
    "bench.pyspark_versions",
    "bench.cdc",
    "bench.metadata",
    "bench.s3",
    "bench.hudi_jvm",
]
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.json")


def main(argv: list[str]) -> int:
    from pyhudi.spark.session import local_session

    wanted = argv or SUITES
    os.makedirs(WORK, exist_ok=True)
    conf = {"spark.driver.memory": "10g", "spark.sql.shuffle.partitions": "16"}
    if "bench.s3" in wanted:  # S3A and the endpoint must be there when the session starts
        from bench.s3 import session_conf

        conf |= session_conf()
    spark = local_session("pyhudi-bench", cores=2, conf=conf)
    results: dict[str, dict] = {}
    if os.path.exists(RESULTS):
        with open(RESULTS) as handle:
            results = {k: v for k, v in json.load(handle).items() if not k.startswith("_")}
    for name in wanted:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        started = time.monotonic()
        for measure, value in module.run(spark).items():
            results[measure] = value.to_json()
            if isinstance(value, Skipped):
                print(f"{measure:40s} skipped: {value.reason}", flush=True)
                continue
            unit = "/s" if value.higher_is_better else "s"
            bound = ">=" if value.higher_is_better else "<="
            print(
                f"{measure:40s} pyhudi {value.pyhudi_s:10.2f}{unit}  baseline {value.baseline_s:10.2f}{unit}  "
                f"ratio {value.ratio:5.2f} (target {bound} {value.target})",
                flush=True,
            )
        print(f"-- {name} took {time.monotonic() - started:.0f}s", flush=True)
    results["_meta"] = {
        "rows": ROWS,
        "runs": RUNS,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(RESULTS, "w") as handle:
        json.dump(results, handle, indent=2, sort_keys=True)
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
