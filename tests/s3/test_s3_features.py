"""The rest of pyhudi on S3: bootstrap of a parquet table on S3 (METADATA_ONLY and FULL_RECORD),
a stream with its asynchronous services, and a writer that died before its commit. Each reads
back the rows it wrote."""

from __future__ import annotations

import time

import pyhudi
from pyhudi.storage import Storage
from tests.helpers.bootstrap import bootstrap_options, existing_table, source_rows
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.crash import crashed_write
from tests.helpers.oracle import META, hudi_rs_table


def test_bootstrap_a_parquet_table_on_s3(spark, bucket) -> None:  # type: ignore[no-untyped-def]
    source = existing_table(spark, f"{bucket}/existing", hive=True)
    expected = source_rows(spark, source, hive=True)
    columns = ["key", "dt", "ts"]
    for selector in ("MetadataOnly", "FullRecord"):
        target = f"{bucket}/bootstrapped-{selector.lower()}"
        table, result = pyhudi.HudiTable.bootstrap(
            source, target, bootstrap_options(source, selector), spark=spark
        )
        assert table is not None and len(result.modes) == 2, result
        assert result.table_path.startswith("s3://") and result.source_path.startswith("s3://")
        ours = pyhudi.read(spark, target)
        assert sorted(ours.select(*columns).collect()) == sorted(
            (r["key"], r["dt"], r["ts"]) for r in expected
        ), selector
        assert pyhudi.read_arrow(target).num_rows == len(expected)
        pyhudi.write(
            ours.limit(5).withColumn("ts", ours["ts"] + 1000).drop(*META),
            target,
            {**bootstrap_options(source, selector), "hoodie.datasource.write.operation": "upsert"},
        )
        assert pyhudi.read(spark, target).where("ts >= 1000").count() == 5


def test_a_stream_with_async_services_on_s3(spark, bucket, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = f"{bucket}/events"
    incoming = tmp_path / "incoming"
    options = trips_options(
        "events",
        **{
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.operation": "upsert",
            "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.clean.commits.retained": "1",
        },
    )
    # The first batch inserts; the others only update (logs: inserts would merge into the small
    # base files instead, as Hudi does when its index cannot see keys in logs).
    for batch in (trips(0, 40), trips(0, 20, ts=1), trips(10, 20, ts=2)):
        df_of(spark, batch).write.mode("append").json(str(incoming))
        query = pyhudi.stream_write(
            spark.readStream.schema(df_of(spark, trips(0, 1)).schema).json(str(incoming)),
            path,
            options,
            checkpoint_location=f"{bucket}/checkpoints/events",
            trigger={"availableNow": True},
        )
        query.awaitTermination()
    table = pyhudi.HudiTable(path)
    actions = {i.action.value for i in table.timeline}
    assert {"deltacommit", "commit", "clean"} <= actions, actions  # compaction and clean ran
    assert pyhudi.read(spark, path).where("ts = 2").count() == 20
    assert pyhudi.read_arrow(path).num_rows == 40


def test_a_writer_dead_before_its_commit_on_s3_is_rolled_back(spark, bucket) -> None:  # type: ignore[no-untyped-def]
    """A writer that wrote its data files on S3 and died before its commit: readers do not see
    it, and once its heartbeat expired the next write rolls it back and removes its files."""
    path = f"{bucket}/crashed"
    options = trips_options(
        "crashed",
        **{
            "hoodie.client.heartbeat.interval_in_ms": "500",
            "hoodie.client.heartbeat.tolerable.misses": "1",
        },
    )
    pyhudi.write(df_of(spark, trips(0, 30)), path, options)
    before = sorted(r["uuid"] for r in pyhudi.read_arrow(path).to_pylist())
    dead = crashed_write(spark, path, df_of(spark, trips(20, 20, ts=9)), options)
    storage, base = Storage.for_uri(path)
    assert [f for f in storage.walk_files(base) if dead in f.name and f.name.endswith(".parquet")]
    assert sorted(r["uuid"] for r in pyhudi.read_arrow(path).to_pylist()) == before
    assert pyhudi.read(spark, path).where("ts = 9").count() == 0
    time.sleep(1.5)  # past the dead writer's heartbeat expiry (500 ms x (1 + 1) misses)
    pyhudi.write(df_of(spark, trips(50, 5, ts=2)), path, options)
    table = pyhudi.HudiTable(path)
    assert "rollback" in {i.action.value for i in table.timeline}
    assert dead not in {i.time for i in table.timeline if i.action.value == "commit"}
    assert not [f for f in storage.walk_files(base) if dead in f.name], "the dead write's files"
    assert pyhudi.read(spark, path).count() == 35
    assert hudi_rs_table(path).num_rows == 35
