"""Writes with `hoodie.metadata.enable` unset (Hudi's default: true) keep the metadata table's
`files` partition exact.

After every action (insert, upsert, delete, insert_overwrite, delete_partition, compaction,
clustering, clean, bootstrap METADATA_ONLY) on COW and MOR: the validator finds no difference,
pyhudi reads the same rows with and without the metadata listing, and hudi-rs (with and without
`hoodie.metadata.enable`) reads exactly those rows.
"""

from __future__ import annotations

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.config import table as keys
from pyhudi.metadata import MetadataTable, has_metadata_table, reads_use_metadata, validate
from pyhudi.metadata.deltacommit import FILES_FILE_GROUP
from pyhudi.model.instant import Action
from pyhudi.table.context import TableContext

ENABLE: dict[str, str] = {}  # Hudi's default, `hoodie.metadata.enable=true`: no key needed
DISABLE = {"hoodie.metadata.enable": "false"}
META_COLUMNS = ["_hoodie_record_key", "_hoodie_partition_path"]
COLUMNS = [*META_COLUMNS, "uuid", "city", "ts", "fare"]


def _rs_with_metadata(path: str, columns: list[str]) -> list[dict]:
    import hudi

    table = hudi.HudiTableBuilder.from_base_uri(path).with_hudi_option(
        "hoodie.metadata.enable", "true"
    )
    batches = table.build().read(hudi.HudiReadOptions())
    return rows(pyarrow_table(batches), columns=columns)


def pyarrow_table(batches):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    return pa.Table.from_batches(batches) if batches else pa.table({})


def _check(spark, path: str, count: int, rs_columns: list[str] = COLUMNS) -> None:  # type: ignore[no-untyped-def]
    """Metadata table validates; every reader, listing either way, returns the same rows (hudi-rs:
    `rs_columns`; it reads the skeleton files of a METADATA_ONLY bootstrap without their source)."""
    ctx = TableContext.open(path)
    assert ctx.config.metadata_partitions == ("files",)
    assert validate(path).differences == ()
    assert reads_use_metadata(ctx, None)
    listed = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    plain = pyhudi.read(spark, path, {"hoodie.metadata.enable": "false"}).toArrow()
    assert listed == rows(plain, columns=COLUMNS) and len(listed) == count
    expected = [{c: r[c] for c in rs_columns} for r in listed]
    assert rows(hudi_rs_table(path), columns=rs_columns) == expected
    assert _rs_with_metadata(path, rs_columns) == expected


def _mdt_deltacommits(path: str) -> list[str]:
    mdt = MetadataTable.open(TableContext.open(path)).table
    return [i.time for i in mdt.active.timeline.completed() if i.action is Action.DELTA_COMMIT]


def _write(spark, path, data, options, operation, **extra):  # type: ignore[no-untyped-def]
    return pyhudi.write(
        df_of(spark, data),
        path,
        {**options, "hoodie.datasource.write.operation": operation, **extra},
    )


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_write_operation_keeps_the_files_partition_exact(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **ENABLE,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.parquet.small.file.limit": "0",
    }
    first = _write(spark, path, trips(0, 12), options, "insert")
    # created with the table: Hudi's init instant on an empty timeline, then one per data instant
    assert _mdt_deltacommits(path) == ["00000000000000010", first.instant_time]
    _check(spark, path, 12)
    _write(spark, path, trips(6, 12, ts=2), options, "upsert")  # 6 updates, 6 new keys
    _check(spark, path, 18)
    _write(spark, path, trips(0, 3, ts=3), options, "delete")
    _check(spark, path, 15)
    _write(spark, path, trips(100, 2, ts=4, city="sf"), options, "insert_overwrite")
    _check(spark, path, 12)  # sf: 5 rows replaced by 2
    last = _write(
        spark,
        path,
        [],
        options,
        "delete_partition",
        **{"hoodie.datasource.write.partitions.to.delete": "chennai"},
    )
    _check(spark, path, 7)
    mdt = MetadataTable.open(TableContext.open(path))
    (piece,) = mdt.merge_slices("files")
    assert piece.file_id == FILES_FILE_GROUP
    assert piece.base_file == f"files/{FILES_FILE_GROUP}_0-0-0_00000000000000010.hfile"
    assert piece.log_files[-1].endswith(f"_00000000000000010.log.{len(piece.log_files)}_0-0-0")
    assert _mdt_deltacommits(path)[-1] == last.instant_time


def test_compaction_clustering_and_clean_keep_the_files_partition_exact(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **ENABLE,
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    for i in range(3):
        _write(spark, path, trips(i * 10, 10, city="sf"), options, "insert")
    _write(spark, path, trips(0, 5, ts=7, city="sf"), options, "upsert")  # log files
    _check(spark, path, 30)
    table = pyhudi.HudiTable(path)
    (compaction,) = table.compaction.run(spark, options)
    _check(spark, path, 30)
    assert compaction.instant_time in _mdt_deltacommits(path)
    table.refresh()
    (clustering,) = table.clustering.run(spark, options)
    _check(spark, path, 30)
    cleaned = table.refresh().clean(
        {
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
        }
    )
    assert cleaned is not None and cleaned.deleted_files
    assert cleaned.instant_time in _mdt_deltacommits(path)
    _check(spark, path, 30)
    del clustering


def test_enabling_on_an_existing_table_initialises_from_its_listing(spark, tmp_path):
    path = str(tmp_path / "t")
    options = trips_options()
    # a table without a metadata table: written with it disabled
    _write(spark, path, trips(0, 9), {**options, **DISABLE}, "insert")
    second = _write(spark, path, trips(3, 9, ts=2), {**options, **DISABLE}, "upsert")
    assert not has_metadata_table(TableContext.open(path))
    third = _write(spark, path, trips(20, 3), options, "upsert")  # the default builds it
    assert _mdt_deltacommits(path) == [second.instant_time + "010", third.instant_time]
    _check(spark, path, 15)
    fourth = _write(
        spark, path, trips(30, 3), {**options, "hoodie.metadata.enable": "true"}, "insert"
    )
    assert _mdt_deltacommits(path)[-1] == fourth.instant_time
    _check(spark, path, 18)
    _write(spark, path, trips(40, 3), {**options, **DISABLE}, "insert")  # false: deleted
    ctx = TableContext.open(path)
    assert not has_metadata_table(ctx) and ctx.config.metadata_partitions == ()
    assert not ctx.config.get(keys.METADATA_PARTITIONS_INFLIGHT.key)
    assert len(pyhudi.read(spark, path).collect()) == 21


def test_metadata_only_bootstrap_then_upsert_keep_the_files_partition_exact(spark, tmp_path):
    source = str(tmp_path / "source")
    frame = df_of(spark, trips(0, 12))
    frame.write.partitionBy("city").parquet(source)
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **ENABLE,
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.bootstrap.mode.selector": (
            "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector"
        ),
    }
    table, result = pyhudi.HudiTable.bootstrap(source, path, options, spark=spark)
    assert table is not None and result.skeleton_files > 0
    assert _mdt_deltacommits(path) == ["00000000000000010", "00000000000001"]
    _check(spark, path, 12, META_COLUMNS)
    _write(spark, path, trips(6, 12, ts=2), options, "upsert")
    _check(spark, path, 18, META_COLUMNS)


def test_the_metadata_table_is_compacted_after_writes(spark, tmp_path):
    """MOR upserts with the metadata table: the post-commit services compact the metadata table at
    `<deltacommit>001` every ten deltacommits and say so; every reader still agrees."""
    path = str(tmp_path / "t")
    options = {**trips_options(), **ENABLE, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    reports: list[str] = []
    for batch in range(22):
        reports.extend(_write(spark, path, trips(batch, 4), options, "upsert").services)
    mdt = MetadataTable.open(TableContext.open(path)).table
    compactions = [i.time for i in mdt.active.timeline.completed() if i.action is Action.COMMIT]
    assert len(compactions) >= 2 and all(t.endswith("001") for t in compactions)
    assert {t[:-3] for t in compactions} <= set(_mdt_deltacommits(path))
    assert sum("metadata table compaction" in r for r in reports) == len(compactions)
    _check(spark, path, 25)


def test_a_data_source_api_write_maintains_the_files_partition(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), **ENABLE, "hoodie.datasource.write.operation": "insert"}
    df_of(spark, trips(0, 9)).write.format("hudi").options(**options).mode("append").save(path)
    df_of(spark, trips(9, 3)).write.format("hudi").options(**options).mode("append").save(path)
    assert len(_mdt_deltacommits(path)) == 3  # initialisation + two data instants
    _check(spark, path, 12)
