"""`pyhudi demo` (what `make demo` runs): a trips table written, updated, read and inspected."""

from __future__ import annotations

import argparse
import os
import shutil
import time
from typing import TYPE_CHECKING, Any

from pyhudi.cli.inspect_cmds import show_commits

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DEMO_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("demo", help="write, update, time-travel and read a demo table")
    parser.add_argument("--path", default="demo-data", help="folder for the demo table (recreated)")
    parser.add_argument("--rows", type=int, default=10_000, help="rows of the first write")
    parser.add_argument(
        "--table-type", default="COPY_ON_WRITE", choices=("COPY_ON_WRITE", "MERGE_ON_READ")
    )
    parser.add_argument(
        "--master", default=None, help="Spark master URL (default: a local session, local[2])"
    )
    parser.set_defaults(handler=run_demo)


def _trips(spark, start: int, count: int, ts: int):  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    cities = F.element_at(
        F.array(*[F.lit(c) for c in ("san_francisco", "chennai", "sao_paulo", "amsterdam")]),
        (F.col("id") % 4 + 1).cast("int"),
    )
    return spark.range(start, start + count).select(
        F.format_string("trip-%06d", F.col("id")).alias("uuid"),
        cities.alias("city"),
        F.lit(ts).cast("long").alias("ts"),
        F.format_string("rider-%03d", F.col("id") % 97).alias("rider"),
        (F.col("id") % 50 * 1.75 + ts).alias("fare"),
        F.timestamp_seconds(F.lit(1_700_000_000) + F.col("id")).alias("pickup_at"),
    )


def run_demo(args: argparse.Namespace) -> int:
    import pyhudi
    from pyhudi.spark.session import local_session, user_session

    started = time.monotonic()
    table_path = os.path.join(os.path.abspath(args.path), "trips")
    shutil.rmtree(table_path, ignore_errors=True)
    spark = (
        local_session("pyhudi-demo", cores=2)
        if args.master is None
        else user_session("pyhudi-demo", args.master)
    )
    options = {**DEMO_OPTIONS, "hoodie.datasource.write.table.type": args.table_type}
    print(f"== pyhudi demo: {args.table_type} table at {table_path}")

    first = pyhudi.write(
        _trips(spark, 0, args.rows, 1),
        table_path,
        {**options, "hoodie.datasource.write.operation": "bulk_insert"},
    )
    _step("bulk_insert", first)
    updates = _trips(spark, 0, args.rows // 10, 2).unionByName(
        _trips(spark, args.rows, args.rows // 50, 2)
    )
    second = pyhudi.write(
        updates, table_path, {**options, "hoodie.datasource.write.operation": "upsert"}
    )
    _step("upsert (10% updates, 2% new)", second)
    deletes = _trips(spark, args.rows // 10, 25, 3).select("uuid", "city")
    third = pyhudi.write(
        deletes, table_path, {**options, "hoodie.datasource.write.operation": "delete"}
    )
    _step("delete 25 keys", third)

    snapshot = pyhudi.read(spark, table_path)
    print(f"\nsnapshot: {snapshot.count()} rows (expected {args.rows + args.rows // 50 - 25})")
    snapshot.groupBy("city").count().orderBy("city").show()
    before = pyhudi.read(spark, table_path, {"as.of.instant": first.instant_time})
    fare_then = _trip_fare(before)
    fare_now = _trip_fare(snapshot)
    print(
        f"time travel to {first.instant_time}: {before.count()} rows; trip-000001 fare then {fare_then}, now {fare_now}"
    )
    changes = pyhudi.read(
        spark,
        table_path,
        {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": first.instant_time,
        },
    )
    print(f"incremental after {first.instant_time}: {changes.count()} changed rows")
    print("\n== timeline (pyhudi show commits)")
    show_commits(argparse.Namespace(path=table_path, json=False, limit=0))
    _independent_reader(table_path)
    print(f"\ndone in {time.monotonic() - started:.1f}s")
    return 0


def _trip_fare(df: DataFrame) -> Any:
    row = df.filter("uuid = 'trip-000001'").first()
    if row is None:
        raise TypeError("trip-000001 is not in the demo table")
    return row["fare"]


def _step(what: str, result) -> None:  # type: ignore[no-untyped-def]
    print(
        f"  {what:32s} instant {result.instant_time}: {result.num_inserts} inserts, "
        f"{result.num_updates} updates, {result.num_deletes} deletes, {result.files_written} files"
    )


def _independent_reader(table_path: str) -> None:
    try:
        import hudi
        import pyarrow as pa
    except ImportError:
        print("\n(the independent reader `hudi` is not installed: pip install hudi==0.5.0)")
        return
    table = hudi.HudiTable(table_path)
    batches = table.read()
    rows = pa.Table.from_batches(batches).num_rows if batches else 0
    latest = table.get_timeline().get_latest_commit_timestamp()
    print(f"\n== the independent reader hudi-rs ({hudi.__version__}) sees {rows} rows at {latest}")
