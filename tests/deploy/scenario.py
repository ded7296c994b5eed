"""End-to-end steps a user runs in a SparkSession of their own, run in a fresh process.

`python -m tests.deploy.scenario --session local[1]|spark://host:port|sc://host:port --work DIR
--steps a,b,...` runs each step and prints one JSON line per step (its results, or its error), so
the same steps run against a plain local session, a standalone cluster and a Spark Connect server.
Tables go under DIR; tests check them with hudi-rs afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pyhudi

#: Recorded before anything imports pyspark: `import pyhudi` must not.
IMPORT_FACTS = {
    "pyspark_imported_by_import_pyhudi": "pyspark" in sys.modules,
    "register_reachable": callable(pyhudi.spark.datasource.register) and callable(pyhudi.register),
}

SCHEMA = "uuid string, city string, ts long, fare double"
BASE = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
}
MOR = {**BASE, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}


def rows(start: int, count: int, ts: int = 1) -> list[tuple]:
    cities = ("sf", "chennai")
    return [(f"id-{i:03d}", cities[i % 2], ts, float(i + ts)) for i in range(start, start + count)]


def session(target: str):  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("pyhudi-deploy")
    if target.startswith("sc://"):
        os.environ["SPARK_REMOTE"] = target  # what a Connect user sets; the README's blocks use it
        return builder.remote(target).getOrCreate()
    builder = builder.master(target).config("spark.ui.enabled", "false")
    if os.environ.get("PYHUDI_SCENARIO_HIVE") == "1":  # the embedded Derby metastore, in the cwd
        builder = builder.enableHiveSupport()
    if uris := os.environ.get("PYHUDI_SCENARIO_METASTORE_URIS"):  # a standalone metastore
        builder = builder.enableHiveSupport().config("spark.hadoop.hive.metastore.uris", uris)
    if target.startswith("spark://"):
        builder = builder.config("spark.executor.memory", "1g").config("spark.cores.max", "1")
    return builder.getOrCreate()


def ops(op: str) -> dict[str, str]:
    return {"hoodie.datasource.write.operation": op}


def actions(path: str) -> list[str]:
    return [f"{c.action.value}" for c in pyhudi.HudiTable(path).commits()]


def step_format_unregistered(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """`format("hudi")` with no pyhudi call before: Spark finds the source by itself."""
    path = os.path.join(work, "fmt")
    df = spark.createDataFrame(rows(0, 6), SCHEMA)
    df.write.format("hudi").options(**BASE, **ops("bulk_insert")).mode("append").save(path)
    return {"path": path, "count": spark.read.format("hudi").load(path).count()}


def step_format_registered(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    path = os.path.join(work, "fmt")
    pyhudi.register(spark)
    spark.createDataFrame(rows(6, 4), SCHEMA).write.format("hudi").options(
        **BASE, **ops("insert")
    ).mode("append").save(path)
    # Hudi's default operation (upsert) through Spark's own writer: pyhudi.write runs it.
    spark.createDataFrame(rows(6, 2, ts=2), SCHEMA).write.format("hudi").options(**BASE).mode(
        "append"
    ).save(path)
    df = spark.read.format("hudi").load(path)
    sf = df.filter("city = 'sf'")
    upserted = df.filter("ts = 2").count()
    return {
        "path": path,
        "count": df.count(),
        "sf": sf.count(),
        "upserted": upserted,
        "actions": actions(path),
    }


def step_write_read_cow(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    path = os.path.join(work, "cow")
    pyhudi.write(spark.createDataFrame(rows(0, 10), SCHEMA), path, {**BASE, **ops("bulk_insert")})
    pyhudi.write(spark.createDataFrame(rows(0, 4, ts=2), SCHEMA), path, {**BASE, **ops("upsert")})
    df = pyhudi.read(spark, path)
    return {"path": path, "count": df.count(), "ts2": df.filter("ts = 2").count()}


def step_mor(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    path = os.path.join(work, "mor")
    pyhudi.write(spark.createDataFrame(rows(0, 10), SCHEMA), path, {**MOR, **ops("insert")})
    pyhudi.write(spark.createDataFrame(rows(0, 4, ts=2), SCHEMA), path, {**MOR, **ops("upsert")})
    df = pyhudi.read(spark, path)
    return {
        "path": path,
        "count": df.count(),
        "ts2": df.filter("ts = 2").count(),
        "format_ts2": spark.read.format("hudi").load(path).filter("ts = 2").count(),
        "read_optimized_ts2": pyhudi.read(
            spark, path, {"hoodie.datasource.query.type": "read_optimized"}
        )
        .filter("ts = 2")
        .count(),
    }


def step_services(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    path = os.path.join(work, "mor")
    table = pyhudi.HudiTable(path)
    compacted = table.compaction.run(spark)
    clustered = table.clustering.run(spark)
    table.refresh()
    return {
        "path": path,
        "compactions": len(compacted),
        "clusterings": len(clustered),
        "actions": actions(path),
        "count": pyhudi.read(spark, path).count(),
    }


def step_bootstrap(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    source, path = os.path.join(work, "bsrc"), os.path.join(work, "boot")
    spark.createDataFrame(rows(0, 8), SCHEMA).write.partitionBy("city").parquet(source)
    options = {
        **BASE,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
    }
    pyhudi.HudiTable.bootstrap(source, path, options, spark=spark)
    return {"path": path, "count": pyhudi.read(spark, path).count(), "actions": actions(path)}


def step_stream(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    source, path = os.path.join(work, "in"), os.path.join(work, "stream")
    os.makedirs(source, exist_ok=True)
    for index in range(2):
        with open(os.path.join(source, f"b{index}.json"), "w") as handle:
            for uuid, city, ts, fare in rows(index * 5, 5):
                handle.write(json.dumps({"uuid": uuid, "city": city, "ts": ts, "fare": fare}))
                handle.write("\n")
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    for attempt in range(3):
        try:
            query = pyhudi.stream_write(
                stream,
                path,
                {**BASE, **ops("insert")},
                checkpoint_location=os.path.join(work, "chk"),
                trigger={"availableNow": True},
            )
            break
        except Exception as err:
            # A Connect server waits 10 s (fixed) for the Python process of a foreachBatch to
            # start; on an overloaded test machine that can be too short. Nothing was started.
            if "failed to connect back" not in str(err) or attempt == 2:
                raise
    query.awaitTermination()
    return {"path": path, "count": pyhudi.read(spark, path).count(), "actions": actions(path)}


def step_demo(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """What `make demo-cluster` runs, `pyhudi demo --master <this session's master>`: the CLI in
    this driver, whose session it gets (`getOrCreate`), and its printed output."""
    import contextlib
    import io

    from pyhudi.cli.main import main as cli

    printed = io.StringIO()
    path = os.path.join(work, "demo")
    with contextlib.redirect_stdout(printed):
        code = cli(["demo", "--master", spark.sparkContext.master, "--rows", "500", "--path", path])
    return {"code": code, "stdout": printed.getvalue(), "path": os.path.join(path, "trips")}


#: The documentation page whose blocks the deployment tests run as written.
DEPLOYMENTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "deployments.md"


def _section(section: str) -> str:
    """One section of the deployments page, from its heading (found by its title, whatever its
    level: `### A cluster` finds `## A cluster`) up to the next heading of the same or a higher
    level."""
    title = section.lstrip("#").strip()
    text = DEPLOYMENTS_PAGE.read_text()
    heading = re.search(rf"^(#+) {re.escape(title)}", text, flags=re.M)
    if heading is None:
        raise LookupError(f"no section {title!r} in {DEPLOYMENTS_PAGE}")
    level = len(heading.group(1))
    body = text[heading.start() :]
    end = re.search(rf"^#{{1,{level}}} ", body[heading.end() - heading.start() :], flags=re.M)
    return body if end is None else body[: heading.end() - heading.start() + end.start()]


def readme_blocks(section: str = "# Where it runs") -> list[str]:
    """The Python code blocks of one section of docs/deployments.md (the whole page by default:
    the user-session, Spark SQL and catalog sync blocks)."""
    return re.findall(r"```python\n(.*?)```", _section(section), flags=re.S)


def readme_commands(section: str) -> list[str]:
    """The shell commands of the bash blocks of one docs/deployments.md section, comments dropped."""
    blocks = re.findall(r"```bash\n(.*?)```", _section(section), flags=re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [line for line in lines if line]


def step_readme(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Run the section's blocks as written, with `/data/` under the work folder."""
    blocks = readme_blocks()
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(block.replace("/data/", f"{work}/readme/"), namespace)
    return {"blocks": len(blocks), "path": f"{work}/readme/trips"}


def step_sql(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Catalog tables: CREATE TABLE over existing Hudi tables, SELECT, INSERT, INSERT OVERWRITE."""
    path, opt_path = os.path.join(work, "sqlt"), os.path.join(work, "sqlo")
    for target in (path, opt_path):
        pyhudi.write(
            spark.createDataFrame(rows(0, 4), SCHEMA), target, {**BASE, **ops("bulk_insert")}
        )
    spark.sql(
        f"CREATE TABLE s_trips USING hudi LOCATION '{path}' TBLPROPERTIES (primaryKey = 'uuid')"
    )
    spark.sql(
        f"CREATE TABLE s_trips_bulk USING hudi OPTIONS (path '{opt_path}', "
        "'hoodie.spark.sql.insert.into.operation' = 'bulk_insert')"
    )
    out: dict[str, Any] = {"path": path, "opt_path": opt_path}
    out["select"] = spark.sql("SELECT count(*) AS n FROM s_trips").collect()[0]["n"]
    spark.sql("INSERT INTO s_trips (uuid, city, ts, fare) VALUES ('id-100', 'sf', 5, 1.5)")
    spark.sql(
        "INSERT INTO s_trips BY NAME SELECT 'id-101' AS uuid, 'sf' AS city, 5L AS ts, 2.5D AS fare"
    )
    out["after_insert"] = spark.sql("SELECT count(*) AS n FROM s_trips").collect()[0]["n"]
    spark.sql(
        "INSERT INTO s_trips_bulk (uuid, city, ts, fare) VALUES ('id-200', 'chennai', 5, 1.0)"
    )
    out["bulk_count"] = spark.table("s_trips_bulk").count()
    spark.sql("INSERT OVERWRITE s_trips (uuid, city, ts, fare) VALUES ('id-300', 'sf', 6, 3.0)")
    out["after_overwrite"] = [r["uuid"] for r in spark.sql("SELECT uuid FROM s_trips").collect()]
    out["operations"] = [
        pyhudi.HudiTable(path).commit_metadata(c).operation_type.value
        for c in pyhudi.HudiTable(path).commits()
    ]
    out["bulk_operations"] = [
        pyhudi.HudiTable(opt_path).commit_metadata(c).operation_type.value
        for c in pyhudi.HudiTable(opt_path).commits()
    ]
    return out


def step_dml(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Hudi's SQL through `spark.sql` (MERGE on a catalog table, UPDATE on a path) and through
    `pyhudi.sql` (DELETE on a path, a CALL procedure)."""
    path = os.path.join(work, "dmlt")
    pyhudi.write(spark.createDataFrame(rows(0, 4), SCHEMA), path, {**MOR, **ops("upsert")})
    spark.sql(f"CREATE TABLE d_trips USING hudi LOCATION '{path}'")
    merged = spark.sql(
        "MERGE INTO d_trips t USING (SELECT 'id-000' AS uuid, 'sf' AS city, 2L AS ts, 9.0D AS "
        "fare UNION ALL SELECT 'id-009', 'sf', 2L, 1.0D) s ON t.uuid = s.uuid "
        "WHEN MATCHED THEN UPDATE SET fare = s.fare WHEN NOT MATCHED THEN INSERT *",
    ).first()
    spark.sql(f"UPDATE hudi.`{path}` SET fare = fare * 10 WHERE uuid = 'id-001'")
    pyhudi.sql(spark, f"DELETE FROM hudi.`{path}` WHERE uuid = 'id-002'")
    commits = pyhudi.sql(spark, "CALL show_commits(table => 'd_trips')").collect()
    table = spark.sql("SELECT uuid, fare FROM d_trips ORDER BY uuid").collect()
    return {
        "merged": [merged["num_updated_rows"], merged["num_inserted_rows"]],
        "rows": [[r["uuid"], r["fare"]] for r in table],
        "actions": [r["action"] for r in commits],
    }


def step_sync(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Meta sync after each commit into the session's catalog (a Hive metastore when enabled)."""
    sync = {
        "hoodie.datasource.meta.sync.enable": "true",
        "hoodie.datasource.hive_sync.database": "lake",
        "hoodie.datasource.hive_sync.partition_fields": "city",
    }
    cow, mor = os.path.join(work, "sync_cow"), os.path.join(work, "sync_mor")
    cow_sync = {**sync, "hoodie.datasource.hive_sync.table": "rides"}
    pyhudi.write(
        spark.createDataFrame(rows(0, 6), SCHEMA), cow, {**BASE, **cow_sync, **ops("insert")}
    )
    out: dict[str, Any] = {"catalog": spark.conf.get("spark.sql.catalogImplementation")}
    out["rides"] = spark.sql("SELECT count(*) AS n FROM lake.rides").first()["n"]
    evolved = spark.createDataFrame([(*rows(6, 1)[0], "note")], f"{SCHEMA}, note string")
    pyhudi.write(evolved, cow, {**BASE, **cow_sync, **ops("insert")})
    out["rides_columns"] = spark.table("lake.rides").columns
    out["rides_after"] = spark.sql("SELECT count(*) AS n FROM lake.rides").first()["n"]
    for op, batch in (("insert", rows(0, 6)), ("upsert", rows(0, 2, ts=2))):
        pyhudi.write(spark.createDataFrame(batch, SCHEMA), mor, {**MOR, **sync, **ops(op)})
    out["tables"] = sorted(t.name for t in spark.catalog.listTables("lake"))
    for name in ("trips_ro", "trips_rt"):
        out[name] = spark.sql(f"SELECT count(*) AS n FROM lake.{name} WHERE ts = 2").first()["n"]
    return out


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    name[len("step_") :]: fn for name, fn in globals().items() if name.startswith("step_")
}


def main(
    argv: list[str] | None = None,
    steps: Mapping[str, Callable[..., dict[str, Any]]] | None = None,
) -> int:
    """Run `--steps` of `steps` (this module's by default) in one session, a JSON line each."""
    steps = STEPS if steps is None else steps
    parser = argparse.ArgumentParser()
    parser.add_argument("--session", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", required=True)
    args = parser.parse_args(argv)
    print(json.dumps({"step": "import", **IMPORT_FACTS}), flush=True)
    spark = session(args.session)
    try:
        for name in args.steps.split(","):
            started = time.monotonic()
            try:
                result = steps[name](spark, args.work)
            except Exception as err:
                result = {"error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc()}
            result["seconds"] = round(time.monotonic() - started, 1)
            print(json.dumps({"step": name, **result}, default=str), flush=True)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
