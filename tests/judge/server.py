"""The Apache Hudi side of the judge: one long-lived process per Hudi version, in its own
virtualenv (pyspark 3.5 with Hudi's Spark bundle), driven by `tests/judge/client.py`.

Requests are JSON lines on stdin: {"op": ..., "args": {...}}; each answer is one line on stdout
that starts with `ANSWER_PREFIX` (Spark may print to stdout too). This file runs under the judge's
own Python and imports nothing from pyhudi.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from typing import Any

ANSWER_PREFIX = "@@judge@@ "

#: Hudi's own settings for a local Spark session (its quick-start guide), plus the test suite's.
SESSION_CONF = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.memory": "1500m",
    "spark.ui.enabled": "false",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.legacy.parquet.nanosAsLong": "false",
}

#: Written with every Hudi write unless the request says otherwise: the timeline server and
#: timeline-server markers have known problems in local mode.
LOCAL_WRITE_OPTIONS = {
    "hoodie.embed.timeline.server": "false",
    "hoodie.write.markers.type": "DIRECT",
}


def start(jars: str, warehouse: str, conf: dict[str, str]) -> Any:
    """Spark with `jars` (comma-separated: Hudi's bundle, and S3A's jars when the tests use S3)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("pyhudi-judge")
    builder = builder.config("spark.jars", jars).config("spark.sql.warehouse.dir", warehouse)
    for key, value in {**SESSION_CONF, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Judge:
    """What a request can ask of Apache Hudi."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.namespace: dict[str, Any] = {"spark": spark, "judge": self}

    def version(self) -> dict[str, str]:
        return {"spark": self.spark.version}

    def write(
        self,
        path: str,
        data: str,
        options: dict[str, str],
        mode: str = "append",
        file_format: str = "parquet",
    ) -> dict[str, Any]:
        """Write the rows of the parquet (or json) files at `data` with Hudi's data source."""
        df = self.spark.read.format(file_format).load(data)
        writer = df.write.format("hudi").options(**{**LOCAL_WRITE_OPTIONS, **options})
        writer.mode(mode).save(path)
        return {"rows": df.count()}

    def read(self, path: str, options: dict[str, str], out: str) -> dict[str, Any]:
        """Read the table with Hudi's data source; the rows go to parquet files at `out`."""
        df = self.spark.read.format("hudi").options(**options).load(path)
        df.write.mode("overwrite").parquet(out)
        return {"schema": df.schema.json()}

    def sql(self, statement: str) -> list[dict[str, Any]]:
        return [row.asDict(recursive=True) for row in self.spark.sql(statement).collect()]

    def run(self, code: str, **kwargs: Any) -> Any:
        """Python run with `spark`, `judge` and the request's arguments; answers `result`."""
        namespace = {**self.namespace, **kwargs, "result": None}
        exec(compile(code, "<judge request>", "exec"), namespace)
        return namespace["result"]


def answer(payload: dict[str, Any]) -> None:
    sys.stdout.write(ANSWER_PREFIX + json.dumps(payload, default=str) + "\n")
    sys.stdout.flush()


def main() -> None:
    jars, warehouse = sys.argv[1], sys.argv[2]
    conf = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    began = time.monotonic()
    try:
        judge = Judge(start(jars, warehouse, conf))
        answer({"ok": True, "result": {**judge.version(), "start_s": time.monotonic() - began}})
    except Exception:
        answer({"ok": False, "error": traceback.format_exc()})
        return
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request["op"] == "stop":
            break
        began = time.monotonic()
        try:
            result = getattr(judge, request["op"])(**request.get("args", {}))
            answer({"ok": True, "result": result, "seconds": time.monotonic() - began})
        except Exception:
            answer({"ok": False, "error": traceback.format_exc(limit=8)})
    judge.spark.stop()


if __name__ == "__main__":
    main()
