"""`hoodie.metadata.enable` defaults to true (Hudi 0.14/0.15): every writer entry point, with no
metadata key in its options, creates and maintains the metadata table's `files` partition, and
`validate` is clean after each. (Write operations, compaction, clustering, clean, METADATA_ONLY
bootstrap and the Data Source API are covered with the default in test_metadata_write.py; Spark
SQL through the catalog in tests/deploy.)"""

from __future__ import annotations

import json
import os

from tests.helpers.builders import TRIPS_SCHEMA, df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.cli.main import main as cli
from pyhudi.client.standalone import run_pending_services
from pyhudi.config import metadata as mkeys
from pyhudi.metadata import MetadataTable, has_metadata_table, validate
from pyhudi.model.instant import FULL_BOOTSTRAP_INSTANT, Action
from pyhudi.table.context import TableContext

COLUMNS = ["_hoodie_record_key", "uuid", "city", "ts", "fare"]


def _exact(spark, path: str, count: int) -> None:  # type: ignore[no-untyped-def]
    """A `files`-only metadata table, validated clean; pyhudi (listing through it and not) and
    hudi-rs read the same `count` rows."""
    ctx = TableContext.open(path)
    assert ctx.config.metadata_partitions == ("files",) and has_metadata_table(ctx)
    report = validate(path)
    assert report.differences == (), report.differences
    listed = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    plain = pyhudi.read(spark, path, {"hoodie.metadata.enable": "false"}).toArrow()
    assert listed == rows(plain, columns=COLUMNS) == rows(hudi_rs_table(path), columns=COLUMNS)
    assert len(listed) == count


def _deltacommits(path: str) -> set[str]:
    mdt = MetadataTable.open(TableContext.open(path)).table
    timeline = mdt.active.reload().timeline.completed()
    return {i.time for i in timeline if i.action is Action.DELTA_COMMIT}


def test_the_default_is_true_for_writes_and_reads():
    assert mkeys.METADATA_ENABLE.default is True
    assert mkeys.METADATA_ENABLE.get({}) is True
    for key in (mkeys.COLUMN_STATS_ENABLE, mkeys.BLOOM_FILTER_ENABLE, mkeys.RECORD_INDEX_ENABLE):
        assert key.default is False  # Hudi's: the index partitions stay off


def test_bulk_insert_and_full_record_bootstrap_create_the_metadata_table(spark, tmp_path):
    path = str(tmp_path / "bulk")
    options = {**trips_options(), "hoodie.datasource.write.operation": "bulk_insert"}
    first = pyhudi.write(df_of(spark, trips(0, 12)), path, options)
    assert _deltacommits(path) == {"00000000000000010", first.instant_time}
    _exact(spark, path, 12)

    source, target = str(tmp_path / "source"), str(tmp_path / "boot")
    df_of(spark, trips(0, 9)).write.partitionBy("city").parquet(source)
    selector = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
    boot = {
        **trips_options(),
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.bootstrap.mode.selector": selector,
    }
    table, result = pyhudi.HudiTable.bootstrap(source, target, boot, spark=spark)
    assert table is not None and result.full_record_rows == 9
    assert FULL_BOOTSTRAP_INSTANT in _deltacommits(target)
    _exact(spark, target, 9)
    upsert = {**boot, "hoodie.datasource.write.operation": "upsert"}
    pyhudi.write(df_of(spark, trips(5, 8, ts=2)), target, upsert)
    _exact(spark, target, 13)


def test_a_stream_maintains_the_metadata_table(spark, tmp_path):
    source, path = str(tmp_path / "in"), str(tmp_path / "t")
    os.makedirs(source)
    for index in range(2):
        with open(os.path.join(source, f"batch-{index}.json"), "w") as handle:
            for record in trips(index * 6, 6) + trips(0, 2, ts=index + 2):
                handle.write(json.dumps(record) + "\n")
    stream = spark.readStream.schema(TRIPS_SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    options = {
        **trips_options(),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": "upsert",
    }
    query = pyhudi.stream_write(
        stream,
        path,
        options,
        checkpoint_location=str(tmp_path / "chk"),
        trigger={"availableNow": True},
    )
    query.awaitTermination()
    commits = {c.time for c in pyhudi.HudiTable(path).commits()}
    assert len(commits) == 2 and commits <= _deltacommits(path)
    _exact(spark, path, 12)


def test_the_cli_and_standalone_services_maintain_the_metadata_table(spark, tmp_path, capsys):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    for i in range(2):
        pyhudi.write(df_of(spark, trips(i * 6, 6, city="sf")), path, options)
    pyhudi.write(df_of(spark, trips(0, 4, ts=2, city="sf")), path, options)  # log files
    assert cli(["compaction", "run", path]) == 0
    (compaction,) = [c.time for c in pyhudi.HudiTable(path).commits() if c.action is Action.COMMIT]
    assert compaction in _deltacommits(path)
    _exact(spark, path, 12)

    table = pyhudi.HudiTable(path)
    scheduled = table.clustering.schedule()
    assert scheduled is not None
    run_pending_services(spark, TableContext.open(path), {})
    assert scheduled.time in _deltacommits(path)
    _exact(spark, path, 12)

    retain = ["-o", "hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS"]
    assert cli(["clean", path, *retain, "-o", "hoodie.cleaner.fileversions.retained=1"]) == 0
    (clean,) = [i.time for i in TableContext.open(path).active.timeline if i.action is Action.CLEAN]
    assert clean in _deltacommits(path), capsys.readouterr().out
    _exact(spark, path, 12)
