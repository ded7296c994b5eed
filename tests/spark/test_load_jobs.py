"""Loads (`bulk_insert`, bucket loads) and bucket-index upserts check partition values in their
write job (no check scan before it): a bad value fails that job, the instant is rolled back and the
record is named, and the table is left as it was (a new one is never created)."""

from __future__ import annotations

import glob
import uuid

import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table
from tests.helpers.trees import tree_bytes

import pyhudi
from pyhudi.exceptions import InvalidRecordError
from pyhudi.writer.bucket_load import counts_pack_buckets
from pyhudi.writer.config import resolve_write_config

BULK = {**trips_options(), "hoodie.datasource.write.operation": "bulk_insert"}
BULK_OP = {"hoodie.datasource.write.operation": "bulk_insert"}
BUCKET = {
    **BULK,
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "2",
}


def _jobs_of(spark, action) -> int:  # type: ignore[no-untyped-def]
    """Spark jobs `action` ran (its own job group)."""
    group = f"load-jobs-{uuid.uuid4().hex}"
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        action()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return len(context.statusTracker().getJobIdsForGroup(group))


@pytest.mark.parametrize("options", [BULK, BUCKET], ids=["bulk_insert", "bucket_load"])
def test_a_load_runs_no_job_before_its_write(spark, tmp_path, options):
    """The partition check rides on the write job: a load of a string partition field (which
    needs the check) runs as many Spark jobs as one of an integer field (which skips it)."""
    frame = df_of(spark, trips(0, 30))
    checked = _jobs_of(spark, lambda: pyhudi.write(frame, str(tmp_path / "a"), options))
    by_number = {**options, "hoodie.datasource.write.partitionpath.field": "ts"}
    unchecked = _jobs_of(spark, lambda: pyhudi.write(frame, str(tmp_path / "b"), by_number))
    assert checked == unchecked
    assert len(hudi_rs_table(str(tmp_path / "a"))) == 30


def test_base_files_dictionary_encode_the_columns_parquet_mr_would(spark, tmp_path):
    """`hoodie.parquet.dictionary.enabled` (on): repeated values (city, ts, rider) get a
    dictionary, per-row unique ones (keys, sequence numbers, fares) are written plain, as
    parquet-mr ends up writing them after its fallback; off: no dictionary at all."""
    rows = [dict(r, fare=float(i)) for i, r in enumerate(trips(0, 300, city="sf"))]
    for name, enabled in (("on", "true"), ("off", "false")):
        options = {**BULK, "hoodie.parquet.dictionary.enabled": enabled}
        pyhudi.write(df_of(spark, rows).coalesce(1), str(tmp_path / name), options)
    (on,) = glob.glob(str(tmp_path / "on" / "sf" / "*.parquet"))
    (off,) = glob.glob(str(tmp_path / "off" / "sf" / "*.parquet"))
    assert _dictionary_columns(on) == {
        "_hoodie_commit_time",
        "_hoodie_partition_path",
        "_hoodie_file_name",
        "city",
        "ts",
        "rider",
    }
    assert _dictionary_columns(off) == set()
    assert len(hudi_rs_table(str(tmp_path / "on"))) == 300


def _dictionary_columns(file: str) -> set[str]:
    group = pq.ParquetFile(file).metadata.row_group(0)
    columns = (group.column(i) for i in range(group.num_columns))
    return {c.path_in_schema for c in columns if c.has_dictionary_page}


@pytest.mark.parametrize(
    "options",
    [BULK, BUCKET, {**BUCKET, "hoodie.datasource.write.operation": "upsert"}],
    ids=["bulk_insert", "bucket_load", "bucket_upsert"],
)
def test_a_load_with_a_bad_partition_value_names_it_and_leaves_no_table(spark, tmp_path, options):
    """Not even the parent folders the write made for the table (`a/`)."""
    path = tmp_path / "a" / "new"
    rows = [*trips(100, 20), dict(trips(200, 1)[0], city="../../escape")]
    frame = df_of(spark, rows).repartition(2)
    with pytest.raises(InvalidRecordError) as err:
        pyhudi.write(frame, str(path), options)
    message = str(err.value)
    assert "'id-00200'" in message and "'city'" in message and "'../../escape'" in message
    assert "'..' path segment" in message
    assert tree_bytes(tmp_path) == {} and not path.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("city", ["line\nbreak", "x/./y", "/somewhere"])
def test_a_bulk_insert_into_a_table_with_a_bad_value_leaves_it_as_it_was(spark, tmp_path, city):
    """Other records of the batch were written by then (two tasks; new partitions among them):
    the rollback removes their files, folders and markers."""
    path = str(tmp_path / "t")
    pyhudi.write(df_of(spark, trips(0, 6)), path, BULK)
    before, around = tree_bytes(path), tree_bytes(tmp_path)
    rows = [*trips(300, 40, city="brand_new"), dict(trips(400, 1)[0], city=city)]
    with pytest.raises(InvalidRecordError) as err:
        pyhudi.write(df_of(spark, rows).repartition(2), path, BULK)
    assert "'id-00400'" in str(err.value) and repr(city) in str(err.value)
    assert tree_bytes(path) == before and tree_bytes(tmp_path) == around
    assert len(hudi_rs_table(path)) == 6


def test_an_existing_empty_folder_is_kept_when_a_load_fails(spark, tmp_path):
    path = tmp_path / "given"
    path.mkdir()
    rows = [dict(trips(200, 1)[0], city="../../escape")]
    with pytest.raises(InvalidRecordError):
        pyhudi.write(df_of(spark, rows), str(path), BULK)
    assert path.is_dir() and not any(path.iterdir())


@pytest.mark.parametrize(
    ("buckets", "parallelism", "counted"),
    [(2, 0, False), (4, 0, False), (3, 0, True), (2, 3, True)],
)
def test_bucket_loads_count_only_when_buckets_do_not_split_evenly_over_the_tasks(
    spark, buckets, parallelism, counted
):
    """2 cores: 2 or 4 buckets per partition go round the 2 tasks (no counting job); 3 buckets,
    or 3 configured tasks for 2 buckets, are packed by the counts of the checking job."""
    options = {**BUCKET, "hoodie.bucket.index.num.buckets": str(buckets)}
    if parallelism:
        options["hoodie.bulkinsert.shuffle.parallelism"] = str(parallelism)
    assert spark.sparkContext.defaultParallelism == 2
    cfg = resolve_write_config(options, None)
    # without `repartitionById` (pyspark 3.5, 4.0) a load hashes its buckets: never counts
    assert counts_pack_buckets(cfg, spark) is (counted and hasattr(DataFrame, "repartitionById"))


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_bucket_upsert_checks_in_its_write_job_and_a_bad_value_leaves_the_table(
    spark, tmp_path, table_type
):
    """No check job before the write (as many jobs as the same upsert of a table partitioned by
    an integer field); a bad value names the record and the table is byte-for-byte as it was,
    its logs or base files of the other records rolled back."""
    options = {**BUCKET, "hoodie.datasource.write.table.type": table_type}
    upsert = {**options, "hoodie.datasource.write.operation": "upsert"}
    by_number = {**upsert, "hoodie.datasource.write.partitionpath.field": "ts"}
    batch = df_of(spark, [*trips(0, 10, city="sf"), *trips(300, 10, city="brand_new")])
    for name, chosen in (("t", upsert), ("n", by_number)):
        pyhudi.write(df_of(spark, trips(0, 30)), str(tmp_path / name), {**chosen, **BULK_OP})
    checked = _jobs_of(spark, lambda: pyhudi.write(batch, str(tmp_path / "t"), upsert))
    unchecked = _jobs_of(spark, lambda: pyhudi.write(batch, str(tmp_path / "n"), by_number))
    assert checked == unchecked
    path = str(tmp_path / "t")
    before, around, count = tree_bytes(path), tree_bytes(tmp_path), len(hudi_rs_table(path))
    rows = [*trips(0, 20, city="sf"), dict(trips(400, 1)[0], city="x/./y")]
    with pytest.raises(InvalidRecordError) as err:
        pyhudi.write(df_of(spark, rows).repartition(2), path, upsert)
    assert "'id-00400'" in str(err.value) and "'x/./y'" in str(err.value)
    assert tree_bytes(path) == before and tree_bytes(tmp_path) == around
    assert len(hudi_rs_table(path)) == count
