"""Writes with `hoodie.metadata.record.index.enable=true` keep the `record_index` partition exact
(and with `hoodie.metadata.index.column.stats.enable=true` the `column_stats` one).

After inserts, upserts, deletes, insert_overwrite, compaction, clustering, clean and a failed
write, on COW and MOR: the validator (its record_index check compares every key with the snapshot)
finds no difference, and upserts/deletes tagged by `hoodie.index.type=RECORD_INDEX` give the same
rows as the same writes with the (global) GLOBAL_SIMPLE index, and as hudi-rs reads them.
"""

from __future__ import annotations

import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows
from tests.helpers.pyspark_versions import DATA_SOURCE

import pyhudi
from pyhudi.exceptions import WriteError
from pyhudi.metadata import MetadataTable, validate
from pyhudi.metadata.index_records import RECORD_INDEX_PARTITION
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.table.context import TableContext
from pyhudi.writer import transaction

RI = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.record.index.min.filegroup.count": "3",
    "hoodie.metadata.record.index.max.filegroup.count": "3",
}
CS = {
    "hoodie.metadata.index.column.stats.enable": "true",
    "hoodie.metadata.index.bloom.filter.enable": "true",
}
COLUMNS = ["_hoodie_record_key", "_hoodie_partition_path", "uuid", "city", "ts", "fare"]


def _write(spark, path, data, options, operation, **extra):  # type: ignore[no-untyped-def]
    return pyhudi.write(
        df_of(spark, data),
        path,
        {**options, "hoodie.datasource.write.operation": operation, **extra},
    )


def _rows(spark, path):  # type: ignore[no-untyped-def]
    return rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)


def _check(spark, path: str, count: int) -> list[dict]:
    ctx = TableContext.open(path)
    assert RECORD_INDEX_PARTITION in ctx.config.metadata_partitions
    report = validate(path)
    assert RECORD_INDEX_PARTITION in report.checks
    for name in ("column_stats", "bloom_filters"):
        assert (name in report.checks) == (name in ctx.config.metadata_partitions)
    assert report.differences == ()
    got = _rows(spark, path)
    assert len(got) == count
    assert rows(hudi_rs_table(path), columns=COLUMNS) == got
    return got


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_record_index_writes_match_simple_index_and_hudi_rs(spark, tmp_path, table_type):
    base = {
        **trips_options(),
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.parquet.small.file.limit": "0",
    }
    # both global, keys arriving in another partition move there (record index entries follow)
    with_ri = {
        **base,
        **RI,
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.record.index.update.partition.path": "true",
    }
    simple = {**base, "hoodie.index.type": "GLOBAL_SIMPLE"}
    ri_path, simple_path = str(tmp_path / "ri"), str(tmp_path / "simple")
    steps = [
        (trips(0, 12), "insert", {}),
        (trips(6, 12, ts=2), "upsert", {}),  # 6 updates, 6 new keys
        (trips(0, 3, ts=3), "delete", {}),
        (trips(10, 4, ts=4, city="sf"), "upsert", {}),  # 2 keys move partition
        (trips(100, 2, ts=5, city="sf"), "insert_overwrite", {}),
    ]
    for data, operation, extra in steps:
        _write(spark, ri_path, data, with_ri, operation, **extra)
        _write(spark, simple_path, data, simple, operation, **extra)
        assert _rows(spark, ri_path) == _rows(spark, simple_path)
        _check(spark, ri_path, len(_rows(spark, simple_path)))
    mdt = MetadataTable.open(TableContext.open(ri_path))
    pieces = sorted(mdt.merge_slices(RECORD_INDEX_PARTITION), key=lambda s: s.file_id)
    assert [p.file_id for p in pieces] == [f"record-index-000{i}-0" for i in range(3)]
    assert all(
        p.base_file == f"record_index/{p.file_id}_0-0-0_00000000000000011.hfile" for p in pieces
    )
    keys = [r["_hoodie_record_key"] for r in _rows(spark, ri_path)]
    found = RecordIndexFileGroups.open(TableContext.open(ri_path)).lookup([*keys, "nope"])
    assert sorted(found) == sorted(keys)


def test_enabling_on_an_existing_table_initialises_from_its_snapshot(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    _write(spark, path, trips(0, 9), options, "insert")
    second = _write(spark, path, trips(3, 9, ts=2), options, "upsert")  # log files
    enable = {**options, **RI, **CS, "hoodie.index.type": "RECORD_INDEX"}
    _write(spark, path, trips(20, 3), enable, "upsert")
    mdt = MetadataTable.open(TableContext.open(path)).table
    times = [i.time for i in mdt.active.timeline.completed()]
    # `files` exists (the default); record_index before the write tags its records, then
    # column_stats and bloom_filters at its commit
    initialised = [t for t in times if t.startswith(second.instant_time) and len(t) == 20]
    assert initialised == [second.instant_time + s for s in ("010", "011", "012")]
    assert {"column_stats", "bloom_filters", "record_index"} <= set(validate(path).checks)
    _check(spark, path, 15)
    # unset: kept and maintained; explicitly false: dropped with the partition list updated
    _write(spark, path, trips(30, 3), options, "insert")
    _check(spark, path, 18)
    off = {**options, "hoodie.metadata.record.index.enable": "false"}
    _write(spark, path, trips(40, 3), off, "insert")
    assert TableContext.open(path).config.metadata_partitions == (
        "files",
        "column_stats",
        "bloom_filters",
    )
    assert validate(path).differences == ()


def test_services_and_a_failed_write_keep_the_record_index_exact(spark, tmp_path, monkeypatch):
    path = str(tmp_path / "t")
    options = {
        **trips_options(),
        **RI,
        **CS,
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.parquet.small.file.limit": "0",
    }
    for i in range(3):
        _write(spark, path, trips(i * 10, 10, city="sf"), options, "insert")
    _write(spark, path, trips(0, 5, ts=7, city="sf"), options, "upsert")
    _write(spark, path, trips(5, 2, ts=8, city="sf"), options, "delete")
    _check(spark, path, 28)
    table = pyhudi.HudiTable(path)
    table.compaction.run(spark, options)
    _check(spark, path, 28)
    table.refresh()
    (clustering,) = table.clustering.run(spark, options)  # every key moves file group
    before = _check(spark, path, 28)
    table.refresh().clean(
        {
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
        }
    )
    _check(spark, path, 28)
    monkeypatch.setattr(transaction, "fault_point", _fail_at("write.after_metadata_commit"))
    with pytest.raises(WriteError, match="after_metadata_commit"):  # its deltacommit discarded
        _write(spark, path, trips(50, 4, ts=9, city="sf"), options, "upsert")
    monkeypatch.undo()
    assert _check(spark, path, 28) == before
    _write(spark, path, trips(60, 1, ts=9, city="sf"), options, "upsert")
    _check(spark, path, 29)
    del clustering


class _Failed(RuntimeError):
    pass


def _fail_at(point: str):  # type: ignore[no-untyped-def]
    def fail(name: str) -> None:
        if name == point:
            raise _Failed(name)

    return fail


def test_column_stats_are_maintained_and_data_skipping_keeps_the_rows(spark, tmp_path):
    from pyspark.sql import functions as F

    path = str(tmp_path / "cs")
    options = {
        **trips_options(),
        "hoodie.metadata.enable": "true",
        **CS,
        "hoodie.parquet.small.file.limit": "0",
    }
    for i in range(3):  # uuid ranges per file: id-000i0 .. id-000i9
        _write(spark, path, trips(i * 10, 10, city="sf"), options, "insert")
    _write(spark, path, trips(0, 4, ts=2, city="sf"), options, "upsert")
    ctx = TableContext.open(path)
    assert "column_stats" in ctx.config.metadata_partitions
    report = validate(path)
    assert {"column_stats", "bloom_filters"} <= set(report.checks) and report.differences == ()
    pyhudi.HudiTable(path).clean(
        {
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
        }
    )
    assert validate(path).differences == ()
    pyhudi.register(spark)
    on = {"hoodie.enable.data.skipping": "true"}
    condition = F.col("uuid") >= "id-00025"  # not floats: NaN is outside parquet min/max
    expected = sorted(r["uuid"] for r in hudi_rs_table(path).to_pylist() if r["uuid"] >= "id-00025")
    assert len(expected) == 5
    plain = spark.read.format("hudi").load(path).filter(condition)
    skipping = spark.read.format("hudi").options(**on).load(path).filter(condition)
    assert sorted(r["uuid"] for r in skipping.collect()) == expected
    assert sorted(r["uuid"] for r in plain.collect()) == expected
    if not DATA_SOURCE:  # pyspark 3.5: `load` runs `pyhudi.read`, which skips by its `filters`
        plain = pyhudi.read(spark, path, filters=[("uuid", ">=", "id-00025")])
        skipping = pyhudi.read(spark, path, on, filters=[("uuid", ">=", "id-00025")])
    assert skipping.rdd.getNumPartitions() < plain.rdd.getNumPartitions()
