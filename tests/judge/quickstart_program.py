"""A Hudi user's PySpark program in the style of Hudi's quickstart: DataFrame writes with Hudi's
option keys (Hudi's default operation, then deletes), snapshot, incremental and time-travel
reads, a streaming write, then Spark SQL (CREATE TABLE with TBLPROPERTIES, INSERT, MERGE,
UPDATE, DELETE, CALL, TIMESTAMP AS OF).

Nothing here names pyhudi: `tests/judge/test_migration.py` runs `run` in Apache Hudi 0.15's
session (the Hudi bundle) and in a pyhudi session (`pyhudi.register(spark)`), the only change,
and compares what each saw and wrote. Self-contained (the judge runs its source as is); every
result is plain values without commit times, so the two runs compare."""

from __future__ import annotations

import os
import time
from typing import Any

SCHEMA = "ts long, uuid string, rider string, driver string, fare double, city string"
TRIPS = [
    (1695159649087, "334e26e9", "rider-A", "driver-K", 19.10, "san_francisco"),
    (1695091554788, "e96c4396", "rider-C", "driver-M", 27.70, "san_francisco"),
    (1695046462179, "9909a8b1", "rider-D", "driver-L", 33.90, "san_francisco"),
    (1695332066204, "1dced545", "rider-E", "driver-O", 93.50, "san_francisco"),
    (1695516137016, "e3cf430c", "rider-F", "driver-P", 34.15, "sao_paulo"),
    (1695376420876, "7a84095f", "rider-G", "driver-Q", 43.40, "sao_paulo"),
    (1695173887231, "3eeb61f7", "rider-I", "driver-S", 41.06, "chennai"),
    (1695115999911, "c8abbe79", "rider-J", "driver-T", 17.85, "chennai"),
]
COLUMNS = ["uuid", "rider", "driver", "fare", "city", "ts"]


def _rows(frame: Any) -> list[list[Any]]:
    return sorted([list(r) for r in frame.select(*COLUMNS).collect()], key=repr)


def _commits(spark: Any, path: str) -> list[str]:
    """The table's commit times as the quickstart finds them: from the data."""
    frame = spark.read.format("hudi").load(path).select("_hoodie_commit_time").distinct()
    return sorted(r[0] for r in frame.collect())


def run(spark: Any, base: str) -> dict[str, Any]:
    results: dict[str, Any] = {}
    path = os.path.join(base, "trips")
    options = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    }
    inserts = spark.createDataFrame(TRIPS, SCHEMA)
    inserts.write.format("hudi").options(**options).mode("overwrite").save(path)
    results["after_insert"] = _rows(spark.read.format("hudi").load(path))

    time.sleep(1)  # distinct commit times at the quickstart's pace
    updates = spark.read.format("hudi").load(path).where("rider = 'rider-D'")
    updates = updates.select(*SCHEMA_COLUMNS).withColumn("fare", updates.fare * 10)
    updates.write.format("hudi").options(**options).mode("append").save(path)  # upsert
    results["after_update"] = _rows(spark.read.format("hudi").load(path))

    first = _commits(spark, path)[0]
    incremental = (
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "incremental")
        .option("hoodie.datasource.read.begin.instanttime", first)
        .load(path)
    )
    results["incremental"] = _rows(incremental)
    results["time_travel"] = _rows(
        spark.read.format("hudi").option("as.of.instant", first).load(path)
    )

    time.sleep(1)
    deletes = spark.read.format("hudi").load(path).where("rider = 'rider-F'")
    deletes.select(*SCHEMA_COLUMNS).write.format("hudi").options(**options).option(
        "hoodie.datasource.write.operation", "delete"
    ).mode("append").save(path)
    results["after_delete"] = _rows(spark.read.format("hudi").load(path))
    results["read_optimized"] = len(
        spark.read.format("hudi")
        .option("hoodie.datasource.query.type", "read_optimized")
        .load(path)
        .collect()
    )

    # Streaming: parquet files landing in a folder, written on with the Hudi sink.
    landing, streamed = os.path.join(base, "landing"), os.path.join(base, "streamed")
    spark.createDataFrame(TRIPS[:4], SCHEMA).write.parquet(landing)
    stream = spark.readStream.schema(SCHEMA).parquet(landing)
    query = (
        stream.writeStream.format("hudi")
        .options(**{**options, "hoodie.table.name": "streamed"})
        .option("checkpointLocation", os.path.join(base, "checkpoint"))
        .outputMode("append")
        .trigger(availableNow=True)
        .start(streamed)
    )
    query.awaitTermination()
    results["streamed"] = _rows(spark.read.format("hudi").load(streamed))

    # Spark SQL
    sql_path = os.path.join(base, "sql_trips")
    spark.sql(
        f"""CREATE TABLE mig_trips (ts bigint, uuid string, rider string, driver string,
            fare double, city string) USING hudi PARTITIONED BY (city)
            TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'cow')
            LOCATION '{sql_path}'"""
    )
    try:
        spark.sql(
            "INSERT INTO mig_trips VALUES "
            + ", ".join(f"({ts}, '{u}', '{r}', '{d}', {f}, '{c}')" for ts, u, r, d, f, c in TRIPS)
        )
        spark.sql(
            """MERGE INTO mig_trips t
               USING (SELECT 1695159649088 AS ts, '334e26e9' AS uuid, 'rider-A' AS rider,
                             'driver-K' AS driver, 25.0D AS fare, 'san_francisco' AS city
                      UNION ALL
                      SELECT 1695159649088, 'new00001', 'rider-Z', 'driver-Z', 5.0D, 'chennai') s
               ON t.uuid = s.uuid
               WHEN MATCHED THEN UPDATE SET *
               WHEN NOT MATCHED THEN INSERT *"""
        )
        spark.sql("UPDATE mig_trips SET fare = fare * 2 WHERE rider = 'rider-C'")
        spark.sql("DELETE FROM mig_trips WHERE rider = 'rider-J'")
        results["sql"] = _rows(spark.sql("SELECT * FROM mig_trips"))
        commits = spark.sql("CALL show_commits(table => 'mig_trips', limit => 10)").collect()
        results["sql_commits"] = sorted(r["action"] for r in commits)
        first_sql = min(r["commit_time"] for r in commits)
        results["sql_as_of"] = _rows(
            spark.sql(f"SELECT * FROM mig_trips TIMESTAMP AS OF '{first_sql}'")
        )
    finally:
        spark.sql("DROP TABLE IF EXISTS mig_trips")
    return results


SCHEMA_COLUMNS = [c.split(" ")[0] for c in SCHEMA.split(", ")]
