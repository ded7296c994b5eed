"""The record-index changes and column ranges the write tasks return (`pyhudi.file_group.
index_results`) build exactly the metadata records the driver builds by reading the files.

Every write below runs the metadata writer twice at commit time, at the same table state: with the
tasks' side results (what is committed) and without them (the driver path: the key column of each
written file group before and after the instant, the footer of each written base file). The records
must be identical (keys, values, Avro wrappers) on COW and MOR, for inserts, updates, deletes,
inserts into small files and global-index partition moves, and the task path must not read what
it was given (no slice keys, no footers). Log appends under `hoodie.index.type=RECORD_INDEX`
return their key changes too (updates only: none at all; deletes; global moves; a pending
compaction's slice), falling back to the driver's read only where the append cannot know them (a
key upserted and deleted in one append, a bucket index routing inserts into logs). Log files get `column_stats` records from the appended
records (the driver path has none); the validator checks them against the log files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from tests.helpers.builders import TRIPS_SCHEMA, df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.metadata import MetadataTable, validate
from pyhudi.metadata import column_stats_writer as cs_writer
from pyhudi.metadata import record_index_writer as ri_writer
from pyhudi.metadata import writer as mdt_writer
from pyhudi.metadata.column_stats_check import column_stats_differences
from pyhudi.metadata.column_stats_records import column_stats_record
from pyhudi.reader.data_skipping import skip_slices
from pyhudi.services.compaction.execute import run_compaction, schedule_compaction
from pyhudi.table.context import TableContext

OPTIONS = {
    "hoodie.metadata.enable": "true",
    "hoodie.metadata.record.index.enable": "true",
    "hoodie.metadata.record.index.min.filegroup.count": "2",
    "hoodie.metadata.record.index.max.filegroup.count": "2",
    "hoodie.metadata.index.column.stats.enable": "true",
}
SKIPPING = {"hoodie.enable.data.skipping": "true"}
COLUMNS = ["_hoodie_record_key", "_hoodie_partition_path", "uuid", "city", "ts", "fare"]


@dataclass
class Spy:
    """Both builds of every commit, and the driver reads the task path made."""

    record_index: list[tuple[list[Any], list[Any]]] = field(default_factory=list)
    column_stats: list[tuple[list[Any], list[Any]]] = field(default_factory=list)
    task_reads: list[str] = field(default_factory=list)
    reading: bool = False


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Spy]:
    found = Spy()
    record_index, column_stats = ri_writer.record_index_updates, cs_writer.column_stats_updates
    slice_keys, file_records = ri_writer.slice_keys, cs_writer._file_records

    def counted(name: str, original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if found.reading:
                found.task_reads.append(name)
            return original(*args, **kwargs)

        return call

    def both_record_index(ctx, instant, commit, count, results=None):  # type: ignore[no-untyped-def]
        found.reading = True
        task = record_index(ctx, instant, commit, count, results)
        found.reading = False
        driver = record_index(ctx, instant, commit, count, None)
        found.record_index.append((_index_groups(task), _index_groups(driver)))
        return task

    def both_column_stats(ctx, commit, options, count, results=None):  # type: ignore[no-untyped-def]
        found.reading = True
        task = column_stats(ctx, commit, options, count, results)
        found.reading = False
        driver = column_stats(ctx, commit, options, count, None)
        found.column_stats.append((_records(task), _records(driver)))
        return task

    monkeypatch.setattr(ri_writer, "slice_keys", counted("slice_keys", slice_keys))
    monkeypatch.setattr(cs_writer, "_file_records", counted("footer", file_records))
    monkeypatch.setattr(mdt_writer, "record_index_updates", both_record_index)
    monkeypatch.setattr(mdt_writer, "column_stats_updates", both_column_stats)
    yield found


def _index_groups(groups: list[Any]) -> list[Any]:
    return [(g.file_id, _sorted(g.records), tuple(r.record_key for r in g.deleted)) for g in groups]


def _records(groups: list[Any]) -> list[Any]:
    return _sorted(r for g in groups for r in g.records)


def _sorted(records: Any) -> list[Any]:
    """Records in key order, each with the Avro wrapper its values are stored in."""
    return sorted(
        ((r.key, r, r.column_stats.value_wrapper if r.column_stats else None) for r in records),
        key=lambda item: item[0],
    )


def _write(spark, path, data, options, operation, schema=TRIPS_SCHEMA):  # type: ignore[no-untyped-def]
    pyhudi.write(
        df_of(spark, data, schema),
        path,
        {**options, "hoodie.datasource.write.operation": operation},
    )


def _check_same(spy: Spy, *, log_files: bool, appended: bool = False) -> None:
    """Task-built == driver-built for the last commit; a write of base files only reads nothing
    on the driver (one that `appended` log files reads their file groups' keys)."""
    task, driver = spy.record_index[-1]
    assert task == driver and task  # every step changes some key
    cs_task, cs_driver = spy.column_stats[-1]
    on_logs = [r for r in cs_task if ".log." in r[1].column_stats.file_name]
    assert [r for r in cs_task if r not in on_logs] == cs_driver
    assert bool(on_logs) == log_files
    assert set(spy.task_reads) == ({"slice_keys"} if appended else set())
    spy.task_reads.clear()


def _same_without_reads(spy: Spy, *, changes: bool = True, reads: bool = False) -> None:
    """Task-built == driver-built record-index records for the last commit (none when
    `changes` is false) and the task path read no slice's keys unless `reads`."""
    task, driver = spy.record_index[-1]
    assert task == driver
    assert bool(task) == changes
    assert ("slice_keys" in spy.task_reads) == reads
    spy.task_reads.clear()


def _validated(spark, path: str, count: int) -> None:
    report = validate(path)
    assert {"record_index", "column_stats"} <= set(report.checks)
    assert report.differences == ()
    got = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert len(got) == count
    assert rows(hudi_rs_table(path), columns=COLUMNS) == got


def test_cow_task_results_build_the_driver_records(spark, tmp_path, spy):
    path = str(tmp_path / "cow")
    options = {**trips_options(), **OPTIONS}
    _write(spark, path, trips(0, 12), options, "insert")  # new file groups
    _check_same(spy, log_files=False)
    _write(spark, path, trips(6, 12, ts=2), options, "upsert")  # updates + small-file inserts
    _check_same(spy, log_files=False)
    _write(spark, path, trips(0, 4, ts=3), options, "delete")
    _check_same(spy, log_files=False)
    _write(spark, path, trips(8, 2, ts=4) + trips(30, 2, ts=4), options, "upsert")
    _check_same(spy, log_files=False)
    _validated(spark, path, 16)


def test_cow_global_index_partition_moves(spark, tmp_path, spy):
    path = str(tmp_path / "global")
    options = {
        **trips_options(),
        **OPTIONS,
        "hoodie.index.type": "GLOBAL_SIMPLE",
        "hoodie.simple.index.update.partition.path": "true",
        "hoodie.parquet.small.file.limit": "0",
    }
    _write(spark, path, trips(0, 9), options, "insert")
    _write(spark, path, trips(0, 3, ts=2, city="sf"), options, "upsert")  # 2 keys move
    _check_same(spy, log_files=False)
    _validated(spark, path, 9)


def test_mor_task_results_build_the_driver_records(spark, tmp_path, spy):
    path = str(tmp_path / "mor")
    options = {**trips_options(), **OPTIONS, "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    _write(spark, path, trips(0, 12), options, "insert")
    _check_same(spy, log_files=False)
    _write(spark, path, trips(6, 12, ts=2), options, "upsert")  # small files without logs: merged
    _check_same(spy, log_files=False)
    no_small = {**options, "hoodie.parquet.small.file.limit": "0"}
    _write(spark, path, trips(0, 5, ts=3) + trips(40, 3, ts=3), no_small, "upsert")  # logs
    _check_same(spy, log_files=True, appended=True)
    _write(spark, path, trips(1, 2, ts=4), no_small, "delete")  # delete blocks: no ranges
    _check_same(spy, log_files=False, appended=True)
    _validated(spark, path, 19)
    mdt = MetadataTable.open(TableContext.open(path))
    logs = [
        r.column_stats
        for r in mdt.records("column_stats").values()
        if r.column_stats and ".log." in (r.column_stats.file_name or "")
    ]
    assert {s.column_name for s in logs} >= {"_hoodie_record_key", "uuid", "ts", "fare"}
    assert all(s.total_size_bytes == 0 and not s.is_deleted for s in logs)
    # data skipping now prunes slices with log files: ids 0-17 (bases) and 0-4 (logs) vs >= 40
    ctx = TableContext.open(path)
    slices = ctx.view().latest_merged_file_slices()
    assert any(s.log_files for s in slices)
    kept = {s.file_id for s in skip_slices(ctx, SKIPPING, slices, [("uuid", ">=", "id-00040")])}
    assert kept and any(s.log_files and s.file_id not in kept for s in slices)
    _wrong_log_entry_is_reported(ctx, slices)
    pyhudi.register(spark)
    filtered = spark.read.format("hudi").options(**SKIPPING).load(path).filter("uuid >= 'id-00040'")
    assert sorted(r["uuid"] for r in filtered.collect()) == ["id-00040", "id-00041", "id-00042"]


def _wrong_log_entry_is_reported(ctx: TableContext, slices: list[Any]) -> None:
    """The validator compares a log file's entries with its records: a wrong max is a difference."""
    records = list(MetadataTable.open(ctx).records("column_stats").values())
    on_uuid = {
        r.column_stats.file_name: r
        for r in records
        if r.column_stats and r.column_stats.column_name == "uuid"
    }
    log = next(lf for s in slices for lf in s.log_files if lf.file_name in on_uuid)
    entry = on_uuid[log.file_name]
    assert entry.column_stats is not None
    wrong = column_stats_record(
        log.partition_path, replace(entry.column_stats, max_value="id-99999")
    )
    others = [r for r in records if r.key != entry.key]
    assert column_stats_differences(ctx, records, [], [log]) == ([], None)
    found, _ = column_stats_differences(ctx, [*others, wrong], [], [log])
    assert [(d.subject, "id-99999" in d.detail) for d in found] == [
        (f"{log.file_name} column uuid", True)
    ]


RI_MOR = {
    **trips_options(),
    **OPTIONS,
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "false",  # pending plans stay pending (Hudi's default runs them)
    "hoodie.index.type": "RECORD_INDEX",
    "hoodie.parquet.small.file.limit": "0",
}
DELETABLE = TRIPS_SCHEMA + ", _hoodie_is_deleted boolean"


def _marked(data: list[dict[str, Any]], deleted: bool = False) -> list[dict[str, Any]]:
    return [{**r, "_hoodie_is_deleted": deleted} for r in data]


def test_record_index_log_appends_return_their_key_changes(spark, tmp_path, spy):
    path = str(tmp_path / "ri_mor")

    def write(data, operation, options=RI_MOR):  # type: ignore[no-untyped-def]
        _write(spark, path, data, options, operation, DELETABLE)

    write(_marked(trips(0, 12)), "insert")
    _same_without_reads(spy)
    write(_marked(trips(0, 6, ts=2)), "upsert")  # updates only: logs, no record-index change
    _same_without_reads(spy, changes=False)
    write(_marked(trips(3, 3, ts=3) + trips(20, 2, ts=3)), "upsert")  # logs + new file groups
    _same_without_reads(spy)
    write(_marked(trips(0, 2, ts=4) + trips(90, 1, ts=4)), "delete")  # one key never existed
    _same_without_reads(spy)
    write(_marked(trips(6, 1, ts=5)) + _marked(trips(7, 1, ts=5), deleted=True), "upsert")
    _same_without_reads(spy)  # `_hoodie_is_deleted` in a log append
    write(_marked(trips(0, 1, ts=6)), "upsert")  # a deleted key comes back: a new file group
    _same_without_reads(spy)
    uncombined = {**RI_MOR, "hoodie.combine.before.upsert": "false"}
    both = _marked(trips(8, 1, ts=7), deleted=True) + _marked(trips(8, 1, ts=8))
    # one key deleted and upserted in one append: the delete's ordering value is the smaller, so
    # the log scan keeps the upsert (Hudi 0.15) and the key stays where it is
    write(both, "upsert", uncombined)
    _same_without_reads(spy, changes=False, reads=True)
    moving = {**RI_MOR, "hoodie.record.index.update.partition.path": "true"}
    write(_marked(trips(9, 3, ts=9, city="sao_paulo")), "upsert", moving)  # 9, 10 move
    _same_without_reads(spy)
    pending = schedule_compaction(TableContext.open(path), RI_MOR, force=True)
    assert pending is not None
    write(_marked(trips(2, 2, ts=10)) + _marked(trips(3, 1, ts=10), deleted=True), "upsert")
    _same_without_reads(spy)  # into the pending compaction's new slice
    assert any(f"_{pending.time}.log." in name for _, _, names in os.walk(path) for name in names)
    assert validate(path).differences == ()  # hudi-rs 0.5 does not read a pending slice's logs
    run_compaction(spark, TableContext.open(path), RI_MOR, schedule=False)
    assert spy.record_index[-1] == ([], [])  # compaction moves no key
    _validated(spark, path, 11)  # 12 + 2 new - 2 deleted - 7 - 3 + 0 back


def test_bucket_index_log_inserts_are_read_on_the_driver(spark, tmp_path, spy):
    path = str(tmp_path / "bucket_mor")
    options = {
        **RI_MOR,
        "hoodie.index.type": "BUCKET",
        "hoodie.bucket.index.num.buckets": "2",
    }
    _write(spark, path, trips(0, 6), options, "insert")
    _write(spark, path, trips(3, 6, ts=2), options, "upsert")  # new keys into buckets' logs
    _same_without_reads(spy, reads=True)
    _validated(spark, path, 9)
