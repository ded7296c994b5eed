"""Hudi's Hive sync into a real Hive metastore, run in a fresh process (one session for all steps).

`python -m tests.deploy.hive_sync_scenario --session local[1] --work DIR --steps cow,mor_ro_rt,...`
(`tests.deploy.scenario`'s steps too) with `PYHUDI_SCENARIO_HIVE=1`: the embedded Derby
metastore under DIR (the process's cwd). Each step prints one JSON line: what the metastore
stores (read straight from the metastore client, not through Spark's catalog) and what Spark
reads through it.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import pyhudi
from tests.deploy import scenario
from tests.deploy.scenario import BASE, MOR, SCHEMA, ops, rows

SYNC = {
    "hoodie.datasource.meta.sync.enable": "true",
    "hoodie.datasource.hive_sync.database": "hms",
}


def _metastore(spark):  # type: ignore[no-untyped-def]
    from pyhudi.spark.hive_metastore import connect

    metastore, reason = connect(spark)
    assert metastore is not None, reason
    return metastore


def _state(spark, name: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The stored table and partitions, and what `spark.table` reads through it."""
    metastore = _metastore(spark)
    table = metastore.get_table("hms", name)
    partitions = metastore.partitions("hms", name)
    df = spark.table(f"hms.{name}")
    return {
        "table": asdict(table) if table else None,
        "partitions": {"/".join(k): v for k, v in sorted(partitions.items())},
        "columns": df.columns,
        "uuids": sorted(r["uuid"] for r in df.select("uuid").collect()),
    }


def _write(spark, path: str, batch, op: str, extra=None, schema: str = SCHEMA):  # type: ignore[no-untyped-def]
    options = {**BASE, **SYNC, **(extra or {}), **ops(op)}
    return pyhudi.write(spark.createDataFrame(batch, schema), path, options).instant_time


def step_cow(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Partitions added by a later commit, dropped by delete_partition; a new column."""
    path, out = os.path.join(work, "cow"), {}
    cow = {"hoodie.datasource.hive_sync.table": "rides"}
    out["first_instant"] = _write(spark, path, rows(0, 4), "insert", cow)
    out["first"] = _state(spark, "rides")
    out["extended"] = spark.sql("SHOW TABLE EXTENDED IN hms LIKE 'rides'").first()["information"]
    nyc = [("id-100", "nyc", 1, 1.0)]
    out["second_instant"] = _write(spark, path, nyc, "insert", cow)
    out["second"] = _state(spark, "rides")
    out["third_instant"] = _write(spark, path, rows(1, 1), "delete_partition", cow)
    out["third"] = _state(spark, "rides")
    evolved = [("id-200", "sf", 2, 2.0, "note")]
    schema = f"{SCHEMA}, note string"
    out["fourth_instant"] = _write(spark, path, evolved, "upsert", cow, schema)
    out["fourth"] = _state(spark, "rides")
    out["snapshot_uuids"] = sorted(r["uuid"] for r in pyhudi.read(spark, path).collect())
    return out


def step_full_resync(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Without `last_commit_time_sync` every partition on storage is compared (a lost one comes
    back); with it only the commits since are looked at."""
    metastore = _metastore(spark)
    path = os.path.join(work, "cow")
    client = metastore._client
    table = client.getTable("hms", "rides")
    table.getParameters().remove("last_commit_time_sync")
    client.alter_table("hms", "rides", table)
    metastore.drop_partition("hms", "rides", ["nyc"])
    _write(
        spark,
        path,
        [("id-300", "sf", 3, 3.0, "x")],
        "upsert",
        {"hoodie.datasource.hive_sync.table": "rides"},
        f"{SCHEMA}, note string",
    )
    return {"partitions": sorted(metastore.partitions("hms", "rides"))}


def step_mor_ro_rt(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    path = os.path.join(work, "mor_ro_rt")
    _write(spark, path, rows(0, 4), "insert", MOR)
    _write(spark, path, rows(0, 2, ts=2), "upsert", MOR)
    out = {"ro": _state(spark, "trips_ro"), "rt": _state(spark, "trips_rt")}
    for name in ("trips_ro", "trips_rt"):
        out[f"{name}_ts2"] = spark.sql(
            f"SELECT count(*) AS n FROM hms.{name} WHERE ts = 2"
        ).first()["n"]
    out["tables"] = sorted(t.name for t in spark.catalog.listTables("hms"))
    return out


def step_plain_hive(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """`sync_as_datasource=false`: a Hive table only, as Spark SQL's Hive commands show it."""
    path = os.path.join(work, "plain")
    plain = {
        "hoodie.table.name": "plain",
        "hoodie.datasource.hive_sync.sync_as_datasource": "false",
    }
    _write(spark, path, rows(0, 4), "insert", plain)
    table = _metastore(spark).get_table("hms", "plain")
    described = spark.sql("DESCRIBE FORMATTED hms.plain").collect()
    return {
        "table": asdict(table) if table else None,
        "show_partitions": sorted(r[0] for r in spark.sql("SHOW PARTITIONS hms.plain").collect()),
        "described": {r["col_name"]: r["data_type"] for r in described},
    }


def step_fallback(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """No metastore client (Spark Connect, no Hive support): a Spark-only table and a warning."""
    warnings: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logging.getLogger("pyhudi.spark.sync").addHandler(handler)
    try:
        path = os.path.join(work, "fallback")
        _write(spark, path, rows(0, 4), "insert", {"hoodie.table.name": "fallback"})
    finally:
        logging.getLogger("pyhudi.spark.sync").removeHandler(handler)
    return {"warnings": warnings, "count": spark.table("hms.fallback").count()}


def step_uri_write(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """A write synced into the standalone metastore the session's `hive.metastore.uris` names
    (and `hoodie.datasource.hive_sync.metastore.uris`, which must name the same one)."""
    uris = os.environ["PYHUDI_SCENARIO_METASTORE_URIS"]
    extra = {"hoodie.datasource.hive_sync.table": "rides_uri"}
    extra["hoodie.datasource.hive_sync.metastore.uris"] = uris
    instant = _write(spark, os.path.join(work, "uri"), rows(0, 4), "insert", extra)
    return {"instant": instant, **_state(spark, "rides_uri")}


def step_uri_read(spark, work: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Another process, another working folder (no embedded Derby of its own): the entry is found."""
    return {"cwd_has_derby": os.path.exists("metastore_db"), **_state(spark, "rides_uri")}


_OWN = {name[len("step_") :]: fn for name, fn in globals().items() if name.startswith("step_")}
assert not _OWN.keys() & scenario.STEPS.keys(), "a step name in both modules"
#: This module's steps and `tests.deploy.scenario`'s, so that one process can run both.
STEPS: dict[str, Callable[..., dict[str, Any]]] = {**scenario.STEPS, **_OWN}


def main(argv: list[str] | None = None) -> int:
    return scenario.main(argv, steps=STEPS)


if __name__ == "__main__":
    sys.exit(main())
