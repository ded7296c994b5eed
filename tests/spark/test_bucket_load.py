"""Loading a bucket-indexed table (`bulk_insert` / `insert` while it has no bucket yet: one shuffle by
bucket, each bucket streamed into one new file group), then writing into its existing buckets."""

from __future__ import annotations

import os
import re
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows
from tests.helpers.trees import tree_bytes

import pyhudi
from pyhudi.codec.file_names import new_bucket_file_id
from pyhudi.exceptions import ConfigError, InvalidRecordError
from pyhudi.index.bucket import bucket_ids
from pyhudi.spark.source_operations import runs_as_data_source
from pyhudi.spark_compat import has_python_data_sources
from pyhudi.writer import bucket_load

#: Packing buckets into named tasks needs `DataFrame.repartitionById` (Spark 4.1+); before, the
#: load hashes (partition, bucket) into the shuffle partitions.
needs_repartition_by_id = pytest.mark.skipif(
    not hasattr(DataFrame, "repartitionById"), reason="needs DataFrame.repartitionById (4.1+)"
)

BUCKETS = 4
OPTIONS = {
    **trips_options(),
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": str(BUCKETS),
}
MOR = {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}
COLUMNS = ["_hoodie_record_key", "_hoodie_partition_path", "uuid", "city", "ts", "fare"]
# Hudi's bucket file id: the 8-digit bucket number, the rest of a UUID, then `-0`.
BUCKET_FILE_ID = re.compile(r"^(\d{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-0$")


def _write(spark, path, data, operation, options):  # type: ignore[no-untyped-def]
    return pyhudi.write(
        df_of(spark, data), path, {**options, "hoodie.datasource.write.operation": operation}
    )


def _data_files(path: str, suffix: str) -> list[str]:
    return sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk(path)
        if ".hoodie" not in d
        for f in fs
        if suffix in f
    )


def _assert_one_file_group_per_bucket(spark, path: str) -> dict[tuple[str, int], str]:  # type: ignore[no-untyped-def]
    """Every latest slice is one bucket's file group; every row sits in its key's bucket."""
    slices = pyhudi.HudiTable(path).latest_file_slices()
    by_bucket: dict[tuple[str, int], str] = {}
    for file_slice in slices:
        match = BUCKET_FILE_ID.match(file_slice.file_id)
        assert match, file_slice.file_id
        key = (file_slice.partition_path, int(match.group(1)))
        assert key not in by_bucket, f"two file groups for bucket {key}"
        by_bucket[key] = file_slice.file_id
    data = pyhudi.read(spark, path).select("_hoodie_record_key", "_hoodie_file_name").toArrow()
    expected = bucket_ids(data.column("_hoodie_record_key").combine_chunks(), BUCKETS)
    assert [int(name[:8]) for name in data.column("_hoodie_file_name").to_pylist()] == list(
        expected
    )
    return by_bucket


def _same_as_hudi_rs(spark, path: str) -> list[dict]:  # type: ignore[no-untyped-def]
    theirs = rows(hudi_rs_table(path), columns=COLUMNS)
    assert rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS) == theirs
    return theirs


@pytest.mark.parametrize("operation", ["bulk_insert", "insert"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_loading_a_bucket_table_writes_one_base_file_per_bucket(
    spark, tmp_path, operation, table_type
):
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    source = df_of(spark, trips(0, 300)).repartition(3)  # every task holds rows of every bucket
    result = pyhudi.write(source, path, {**options, "hoodie.datasource.write.operation": operation})
    assert result.num_inserts == 300 and not _data_files(path, ".log.")
    by_bucket = _assert_one_file_group_per_bucket(spark, path)
    assert by_bucket == {
        (p, b): new_bucket_file_id(result.instant_time, p, b) for p, b in by_bucket
    }
    keys = [f"id-{i:05d}" for i in range(300)]
    cities = [t["city"] for t in trips(0, 300)]

    wanted = Counter(zip(cities, bucket_ids(pa.array(keys), BUCKETS).tolist(), strict=True))
    assert set(by_bucket) == set(wanted)
    base_files = _data_files(path, ".parquet")
    assert len(base_files) == len(wanted)  # one base file per bucket, never rolled over
    for file in base_files:
        partition = os.path.basename(os.path.dirname(file))
        assert (
            pq.read_metadata(file).num_rows == wanted[(partition, int(os.path.basename(file)[:8]))]
        )
    assert [r["uuid"] for r in _same_as_hudi_rs(spark, path)] == keys


def test_inserts_into_a_loaded_bucket_table_go_to_the_existing_buckets(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**OPTIONS, **MOR}
    _write(spark, path, trips(0, 60), "bulk_insert", options)
    loaded = _assert_one_file_group_per_bucket(spark, path)
    # New keys in the same partitions, and a partition the table has not seen.
    extra = trips(100, 30) + trips(200, 6, city="lisbon")
    result = _write(spark, path, extra, "insert", options)
    assert result.num_inserts + result.num_updates == 36
    after = _assert_one_file_group_per_bucket(spark, path)
    assert {k: v for k, v in after.items() if k in loaded} == loaded  # same file groups
    assert {k[0] for k in set(after) - set(loaded)} <= {"lisbon"}
    assert _data_files(path, ".log.")  # merge-on-read: appended to the existing buckets' slices
    assert len(_same_as_hudi_rs(spark, path)) == 96
    _write(spark, path, trips(0, 10, ts=5), "upsert", options)
    fares = {r["uuid"]: r["ts"] for r in _same_as_hudi_rs(spark, path)}
    assert len(fares) == 96 and fares["id-00003"] == 5 and fares["id-00050"] == 1


def test_upserts_name_new_buckets_as_loads_do(spark, tmp_path):
    """An upsert into an empty bucket table routes by the Spark expression of the file id; a load
    names buckets in its tasks: both give `new_bucket_file_id`."""
    path = str(tmp_path / "t")
    result = _write(spark, path, trips(0, 40), "upsert", {**OPTIONS, **MOR})
    by_bucket = _assert_one_file_group_per_bucket(spark, path)
    assert by_bucket == {
        (p, b): new_bucket_file_id(result.instant_time, p, b) for p, b in by_bucket
    }


def _write_tasks(path: str) -> set[int]:
    """The task partition ids in the write tokens of the base files (`<fid>_<pid>-<stage>-<attempt>_...`)."""
    return {
        int(os.path.basename(f).split("_")[1].split("-")[0]) for f in _data_files(path, ".parquet")
    }


def test_bucket_load_honours_the_configured_shuffle_parallelism(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**OPTIONS, **MOR, "hoodie.bulkinsert.shuffle.parallelism": "5"}
    _write(spark, path, trips(0, 90), "bulk_insert", options)
    _assert_one_file_group_per_bucket(spark, path)
    assert len(_same_as_hudi_rs(spark, path)) == 90
    assert len(_write_tasks(path)) <= 5 < len(_data_files(path, ".parquet"))


@needs_repartition_by_id
def test_the_hash_fallback_loads_the_same_buckets_as_the_packed_shuffle(
    spark, tmp_path, monkeypatch
):
    """Spark 4.0 (no `repartitionById`) or more than `MAX_NAMED_BUCKETS` buckets: the load hashes
    (partition, bucket) into the shuffle partitions; the table has the same bucket file groups
    and rows as the packed load's (the bound is lowered here to take that path on this Spark)."""
    data = trips(0, 90) + trips(100, 12, city="lisbon")
    options = {**OPTIONS, **MOR, "hoodie.bulkinsert.shuffle.parallelism": "64"}
    packed, hashed = str(tmp_path / "packed"), str(tmp_path / "hashed")
    _write(spark, packed, data, "bulk_insert", options)
    monkeypatch.setattr(bucket_load, "MAX_NAMED_BUCKETS", 0)
    _write(spark, hashed, data, "bulk_insert", options)
    packed_buckets = _assert_one_file_group_per_bucket(spark, packed)
    assert set(_assert_one_file_group_per_bucket(spark, hashed)) == set(packed_buckets)
    assert _same_as_hudi_rs(spark, hashed) == _same_as_hudi_rs(spark, packed)
    assert _write_tasks(packed) == set(range(len(packed_buckets)))  # one task per bucket
    assert _write_tasks(hashed) != _write_tasks(packed)  # hash partitions of 64


@needs_repartition_by_id
@pytest.mark.parametrize("operation", ["bulk_insert", "insert"])
def test_bucket_load_packs_the_buckets_into_one_balanced_task_per_core(spark, tmp_path, operation):
    """The partition check counted the records per partition: the buckets are packed into one
    write task per core by their expected rows (not hashed into a few coalesced tasks)."""
    path = str(tmp_path / "t")
    data = trips(0, 400) + trips(500, 40, city="lisbon")
    source = df_of(spark, data).repartition(3)
    options = {**OPTIONS, **MOR, "hoodie.datasource.write.operation": operation}
    assert pyhudi.write(source, path, options).num_inserts == 440
    by_bucket = _assert_one_file_group_per_bucket(spark, path)
    cores = spark.sparkContext.defaultParallelism
    assert _write_tasks(path) == set(range(min(cores, len(by_bucket))))
    rows_per_task: Counter[int] = Counter()
    largest = 0
    for file in _data_files(path, ".parquet"):
        n = pq.read_metadata(file).num_rows
        rows_per_task[int(os.path.basename(file).split("_")[1].split("-")[0])] += n
        largest = max(largest, n)
    assert max(rows_per_task.values()) - min(rows_per_task.values()) <= largest
    assert len(_same_as_hudi_rs(spark, path)) == 440


def test_a_bucket_load_with_a_bad_partition_value_writes_nothing(spark, tmp_path):
    """The load's check-and-count job runs before the table or the instant exists."""
    path = tmp_path / "new"
    rows = [*trips(100, 20), dict(trips(200, 1)[0], city="../../escape")]
    options = {**OPTIONS, **MOR, "hoodie.datasource.write.operation": "bulk_insert"}
    with pytest.raises(InvalidRecordError) as err:
        pyhudi.write(df_of(spark, rows), str(path), options)
    assert "'id-00200'" in str(err.value) and "'city'" in str(err.value)
    assert "'..' path segment" in str(err.value)
    assert tree_bytes(tmp_path) == {} and not path.exists()


@pytest.mark.parametrize(
    ("operation", "table_type", "mode"),
    [
        ("bulk_insert", "MERGE_ON_READ", "append"),
        ("insert", "COPY_ON_WRITE", "append"),
        ("insert", "MERGE_ON_READ", "overwrite"),  # insert_overwrite_table
    ],
)
def test_data_source_bucket_writes_it_cannot_shuffle_run_as_pyhudi_write(
    spark, tmp_path, operation, table_type, mode
):
    """`df.write.format("hudi")` writes merge-on-read bucket tables with upsert / insert / delete
    (no shuffle needed); any other write into a bucket table needs the shuffle by bucket that
    Spark's Python Data Source API cannot run: a registered session runs it through
    `pyhudi.write`, so the files are the buckets' file groups (the data source used to write
    plain file groups, breaking the table's bucket layout; unregistered, it refuses)."""
    pyhudi.register(spark)
    path = str(tmp_path / "t")
    options = {
        **OPTIONS,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.operation": operation,
    }
    assert not runs_as_data_source(path, options, overwrite=mode == "overwrite")
    df_of(spark, trips(0, 20)).write.format("hudi").options(**options).mode(mode).save(path)
    assert hudi_rs_table(path).num_rows == 20
    file_ids = {s.file_id for s in pyhudi.HudiTable(path).latest_file_slices()}
    assert file_ids and all(re.match(r"\d{8}-", f) for f in file_ids)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table"])
def test_an_overwrite_writes_bucket_file_groups(spark, tmp_path, table_type, operation):
    """The overwritten partitions get one new file group per bucket. Before, an overwrite wrote
    an unnamed file group: the next upsert, finding no bucket for those keys, wrote them again
    (25 rows for 15 keys)."""
    path = str(tmp_path / "t")
    options = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}
    _write(spark, path, trips(0, 10, city="sf"), "upsert", options)
    _write(spark, path, trips(5, 10, ts=2, city="sf"), operation, options)
    _assert_one_file_group_per_bucket(spark, path)
    _write(spark, path, trips(0, 15, ts=3, city="sf"), "upsert", options)
    _assert_one_file_group_per_bucket(spark, path)
    ours = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert ours == rows(hudi_rs_table(path), columns=COLUMNS)
    assert sorted(r["uuid"] for r in ours) == [f"id-{i:05d}" for i in range(15)]
    assert {r["ts"] for r in ours} == {3}


def test_fewer_buckets_than_the_table_has_is_refused(spark, tmp_path):
    """Keys would be hashed into other buckets than the ones holding them."""
    path = str(tmp_path / "t")
    options = {**OPTIONS, **MOR}
    _write(spark, path, trips(0, 40, city="sf"), "upsert", options)
    before = tree_bytes(path)
    fewer = {**options, "hoodie.bucket.index.num.buckets": "2"}
    with pytest.raises(ConfigError, match=r"num.buckets=2, but the table has bucket 3"):
        _write(spark, path, trips(0, 5, ts=2, city="sf"), "upsert", fewer)
    writer = df_of(spark, trips(0, 5, ts=2, city="sf")).write.format("hudi").options(**fewer)
    # the data source's error (pyspark 4) or, routed to pyhudi.write (3.5), pyhudi's own
    refused = (
        pytest.raises(
            AnalysisException, match=r"ConfigError: .*num.buckets=2, but the table has bucket 3"
        )
        if has_python_data_sources()
        else pytest.raises(ConfigError, match=r"num.buckets=2, but the table has bucket 3")
    )
    with refused:
        writer.option("hoodie.datasource.write.operation", "upsert").mode("append").save(path)
    assert tree_bytes(path) == before
