"""`HudiTable.to_arrow` / `pyhudi.read_arrow` on tables pyhudi writes: the same rows and schema as
`pyhudi.read(spark, ...)` and hudi-rs (Spark only writes the tables), at every instant."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from tests.helpers.bootstrap import bootstrap_options, existing_table
from tests.helpers.builders import TRIPS_SCHEMA, df_of, trip, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.file_group.slice_overlay import header_positions
from pyhudi.reader.planner import plan_read
from pyhudi.reader.slices import slice_tasks
from pyhudi.table.context import TableContext

DELETABLE = TRIPS_SCHEMA + ", _hoodie_is_deleted boolean"
MOR = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "false",  # pending plans stay pending (Hudi's default runs them)
    "hoodie.parquet.small.file.limit": "0",
}


def _same_as_spark(spark, path: str, options: dict | None = None, **kwargs) -> list[dict]:
    """to_arrow equals the Spark read (rows and schema); returns the rows."""
    ours = pyhudi.read_arrow(path, options, **kwargs)
    filters = kwargs.get("filters", ())
    frame = pyhudi.read(spark, path, options, filters=filters)
    if kwargs.get("columns"):
        frame = frame.select(*kwargs["columns"])
    theirs = frame.toArrow()
    assert ours.schema.equals(theirs.schema, check_metadata=False), (ours.schema, theirs.schema)
    key = "_hoodie_record_key" if "_hoodie_record_key" in ours.column_names else "uuid"
    assert rows(ours, key=key) == rows(theirs, key=key)
    return rows(ours, key=key)


def _every_instant(spark, path: str) -> None:
    """Snapshot, read-optimized and time travel to every commit equal Spark's read and hudi-rs."""
    assert _same_as_spark(spark, path) == rows(hudi_rs_table(path))
    optimized = {"hoodie.datasource.query.type": "read_optimized"}
    assert _same_as_spark(spark, path, optimized) == rows(hudi_rs_table(path, read_optimized=True))
    for instant in pyhudi.HudiTable(path).commits():
        as_of = {"as.of.instant": instant.time}
        assert _same_as_spark(spark, path, as_of) == rows(hudi_rs_table(path, as_of=instant.time))


def _write(spark, path, data, options, operation, schema=TRIPS_SCHEMA):
    return pyhudi.write(
        df_of(spark, data, schema),
        path,
        {**options, "hoodie.datasource.write.operation": operation},
    )


@pytest.mark.parametrize("block_format", ["avro", "parquet"])
def test_merge_on_read_logs_deletes_and_pending_compaction(spark, tmp_path, block_format):
    path = str(tmp_path / "mor")
    options = trips_options(**MOR, **{"hoodie.logfile.data.block.format": block_format})

    def write(data, operation, deleted=False):
        marked = [{**r, "_hoodie_is_deleted": deleted} for r in data]
        return _write(spark, path, marked, options, operation, DELETABLE)

    write(trips(0, 60), "bulk_insert")
    write(trips(0, 20, ts=2) + trips(60, 5, ts=2), "upsert")
    # a stale write over a base record, a newer one over a log record
    write([trip(30, ts=0, fare=-1.0), trip(5, ts=9, fare=9.0)], "upsert")
    write([trip(i, ts=3) for i in (7, 8)], "upsert", deleted=True)
    write([trip(10), trip(61)], "delete")
    _every_instant(spark, path)
    table = pyhudi.HudiTable(path)
    assert table.compaction.schedule(options) is not None
    # Logs written after a pending compaction plan merge over the slice before it (hudi-rs 0.5
    # leaves them out of its read: compared with the Spark read here).
    write(trips(20, 5, ts=4), "upsert")
    _same_as_spark(spark, path)
    _same_as_spark(spark, path, columns=["uuid", "fare"], filters=[("ts", ">", 1)])
    snapshot = {r["uuid"]: r for r in rows(pyhudi.HudiTable(path).to_arrow())}
    assert len(snapshot) == 65 - 4 and "id-00007" not in snapshot and "id-00010" not in snapshot
    # commit-time ordering (the default payload): over the base file the latest write wins
    # whatever its ts (log records among themselves are compared in tests/judge/test_log_merge_rules)
    assert snapshot["id-00030"]["fare"] == -1.0 and snapshot["id-00005"]["fare"] == 9.0
    assert snapshot["id-00020"]["ts"] == 4


@pytest.mark.parametrize("positions", [True, False], ids=["by_position", "by_key"])
def test_logs_merge_by_row_position_when_every_block_has_them(spark, tmp_path, positions):
    path = str(tmp_path / "mor")
    options = trips_options(**MOR, **{"hoodie.write.record.positions": str(positions).lower()})
    _write(spark, path, trips(0, 40), options, "bulk_insert")
    _write(spark, path, trips(0, 12, ts=2) + trips(40, 3, ts=2), options, "upsert")
    _write(spark, path, [trip(3), trip(41)], options, "delete")
    ctx = TableContext.open(path)
    plan = plan_read(ctx)
    tasks = slice_tasks(ctx, plan, plan.with_logs)
    assert tasks and all((header_positions(t) is not None) is positions for t in tasks)
    assert _same_as_spark(spark, path) == rows(hudi_rs_table(path))
    fares = _same_as_spark(spark, path, columns=["uuid", "fare"], filters=[("ts", ">", 1)])
    assert [r["uuid"] for r in fares] == [f"id-{i:05d}" for i in (*range(12), 40, 42) if i != 3]


def test_event_time_ordering_keeps_the_newer_base_row(spark, tmp_path):
    path = str(tmp_path / "event")
    payload = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
    options = trips_options(**MOR, **{"hoodie.datasource.write.payload.class": payload})
    _write(spark, path, trips(0, 10, ts=5), options, "bulk_insert")
    _write(spark, path, [trip(0, ts=3, fare=-3.0), trip(1, ts=7, fare=7.0)], options, "upsert")
    fares = {r["uuid"]: r["fare"] for r in _same_as_spark(spark, path)}
    assert fares["id-00000"] == trip(0, ts=5)["fare"] and fares["id-00001"] == 7.0


def test_clustering_metadata_table_data_skipping_filters_and_columns(spark, tmp_path):
    path = str(tmp_path / "cow")
    options = trips_options(
        **{
            "hoodie.metadata.enable": "true",
            "hoodie.metadata.index.column.stats.enable": "true",
        }
    )
    for start in range(0, 40, 10):
        _write(spark, path, trips(start, 10, ts=start), options, "insert")
    _write(spark, path, trips(0, 5, ts=50), options, "upsert")
    pyhudi.HudiTable(path).clustering.run(spark, options)
    _every_instant(spark, path)
    skipping = {"hoodie.enable.data.skipping": "true", "hoodie.metadata.enable": "true"}
    for filters in (
        [("uuid", ">=", "id-00025")],
        [("city", "=", "sf"), ("fare", "<", 20)],
        [("city", "in", ["sf", "chennai"]), ("ts", "!=", 50)],
        [("rider", "not in", ["rider-1"])],
    ):
        for opts in ({}, skipping):
            got = _same_as_spark(spark, path, opts, filters=filters, columns=["uuid", "fare"])
            assert got and all(set(r) == {"uuid", "fare"} for r in got)
    kept = pyhudi.read_arrow(path, skipping, filters=[("uuid", ">=", "id-00025")])
    assert sorted(kept.column("uuid").to_pylist()) == [f"id-{i:05d}" for i in range(25, 40)]


@pytest.mark.parametrize("selector", ["MetadataOnly", "FullRecord"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bootstrapped_tables(spark, tmp_path, selector, table_type):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(
        source, selector, **{"hoodie.datasource.write.table.type": table_type}
    )
    pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    _same_as_spark(spark, target)
    write = {k: v for k, v in options.items() if k != "hoodie.datasource.write.operation"}
    updates = (
        pyhudi.read(spark, target)
        .filter(F.col("qty") < 10)
        .select("key", "amount", "day", "at", "flag", "blob", "qty", "ts", "score", "dt")
        .withColumn("ts", F.lit(2).cast("long"))
    )
    pyhudi.write(updates, target, {**write, "hoodie.datasource.write.operation": "upsert"})
    got = _same_as_spark(spark, target)
    assert len(got) == 200 and sum(1 for r in got if r["ts"] == 2) == 10
    assert rows(pyhudi.read_arrow(target, filters=[("dt", "=", "2022-10-09")]))


def test_bad_requests_are_clear_errors(spark, tmp_path):
    path = str(tmp_path / "t")
    _write(spark, path, trips(0, 5), trips_options(), "insert")
    table = pyhudi.HudiTable(path)
    with pytest.raises(ConfigError, match="nope"):
        table.to_arrow(columns=["uuid", "nope"])
    with pytest.raises(ConfigError, match="nope"):
        table.to_arrow(filters=[("nope", "=", 1)])
    with pytest.raises(ConfigError, match="op in"):
        table.to_arrow(filters=[("uuid", "~", 1)])
    with pytest.raises(ConfigError, match="'ts'"):
        table.to_arrow(filters=[("ts", "=", "not a number")])
    with pytest.raises(ConfigError, match=r"hoodie\.datasource\.read\.begin\.instanttime"):
        table.to_arrow({"hoodie.datasource.query.type": "incremental"})
    with pytest.raises(ConfigError, match="is not inside the table"):
        table.to_arrow({"hoodie.datasource.read.paths": str(tmp_path / "elsewhere")})
    incremental = {"hoodie.datasource.query.type": "incremental"}
    with pytest.raises(UnsupportedOperationError, match=r"hoodie\.datasource\.read\.paths"):
        table.to_arrow({**incremental, "hoodie.datasource.read.paths": path + "/*"})
    with pytest.raises(ConfigError, match=r"as\.of\.instant"):
        table.to_arrow({"as.of.instant": "yesterday"})
    assert table.to_arrow(filters=[("ts", "=", None)]).num_rows == 0  # null compares as Spark's


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_every_type_has_the_spark_read_schema(spark, tmp_path, nested):
    from tests.interop.test_written_tables import ALL_TYPES, NESTED, _typed_rows

    path = str(tmp_path / "typed")
    schema = ALL_TYPES + (NESTED if nested else "")
    options = {**trips_options("typed"), **MOR}
    for ts, operation in ((1, "bulk_insert"), (2, "upsert")):
        pyhudi.write(
            spark.createDataFrame(_typed_rows(0, 100 * (3 - ts), ts, nested), schema),
            path,
            {**options, "hoodie.datasource.write.operation": operation},
        )
    got = _same_as_spark(spark, path)
    assert len(got) == 200 and sum(1 for r in got if r["ts"] == 2) == 100
