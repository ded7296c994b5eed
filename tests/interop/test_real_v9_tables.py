"""Table version 9 (Hudi 1.1) beyond the shared snapshot/time-travel checks: the data source on COW
tables (Lance included), bounded incremental windows (completion-time ranges), pending instants as
hudi-rs resolves them, and the error when the Lance extra is missing."""

from __future__ import annotations

import shutil
import sys

import pytest
from tests.helpers.oracle import META, hudi_rs_table, rows

import pyhudi
from pyhudi.exceptions import MissingDependencyError
from pyhudi.metadata.validation import validate

COW_V9 = [
    "cow__v9_lance_txns_simple",
    "cow__v9_txns_complex_meta",
    "cow__v9_txns_nonpart_nometa",
    "cow__v9_txns_simple_meta",
]


def _same(ours, theirs) -> None:
    assert ours.column_names == theirs.column_names
    assert rows(ours) == rows(theirs)


@pytest.mark.parametrize("name", COW_V9)
def test_v9_cow_snapshot_through_the_data_source_matches_hudi_rs(spark, hudi_tables, name):
    path = str(hudi_tables[name])
    _same(spark.read.format("hudi").load(path).toArrow(), hudi_rs_table(path))


@pytest.mark.parametrize("name", ["cow__v9_txns_simple_meta", "mor_avro__v9_txns_complex_meta"])
def test_v9_bounded_incremental_windows_compare_completion_times_like_hudi_rs(
    spark, hudi_tables, name
):
    path = str(hudi_tables[name])
    completions = [i.completion_time for i in pyhudi.HudiTable(path).commits()]
    assert all(completions) and completions == sorted(completions)
    for start, end in zip(completions, completions[2:]):
        options = {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": start,
            "hoodie.datasource.read.end.instanttime": end,
        }
        ours = pyhudi.read(spark, path, options).toArrow()
        theirs = hudi_rs_table(path, start=start, end=end)
        if theirs.num_columns == 0:
            assert ours.num_rows == 0, (start, end)
        else:
            _same(ours, theirs)


@pytest.mark.parametrize("name", ["cow__v9_txns_complex_nometa", "mor_avro__v9_txns_simple_meta"])
def test_v9_time_travel_to_completion_times_matches_hudi_rs(spark, hudi_tables, name):
    """`as.of.instant` compares requested times: at an instant's completion time, the instants
    requested before it are visible (as in hudi-rs)."""
    path = str(hudi_tables[name])
    for instant in pyhudi.HudiTable(path).commits():
        at = instant.completion_time
        _same(
            pyhudi.read(spark, path, {"as.of.instant": at}).toArrow(), hudi_rs_table(path, as_of=at)
        )


@pytest.mark.parametrize(
    "completed_file",
    [
        "20260307135840975_20260307135841179.deltacommit",  # the last deltacommit: now inflight
        "20260307135840454_20260307135840902.replacecommit",  # a clustering: now pending
    ],
)
def test_v9_pending_instants_are_invisible_as_in_hudi_rs(
    spark, hudi_tables, tmp_path, completed_file
):
    path = tmp_path / "table"
    shutil.copytree(hudi_tables["mor_avro__v9_txns_simple_nometa"], path)
    (path / ".hoodie" / "timeline" / completed_file).unlink()
    commit_times = [i.time for i in pyhudi.HudiTable(str(path)).commits()]
    assert completed_file.split("_")[0] not in commit_times
    _same(pyhudi.read(spark, str(path)).toArrow(), hudi_rs_table(str(path)))
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    _same(
        pyhudi.read(spark, str(path), ro).toArrow(), hudi_rs_table(str(path), read_optimized=True)
    )


def test_lance_table_without_pylance_is_an_error_naming_the_extra(spark, hudi_tables, monkeypatch):
    monkeypatch.setitem(sys.modules, "lance", None)  # `import lance` now raises ImportError
    monkeypatch.setitem(sys.modules, "lance.file", None)
    with pytest.raises(MissingDependencyError) as caught:
        pyhudi.read(spark, str(hudi_tables["cow__v9_lance_txns_simple"]))
    assert "pyhudi[lance]" in str(caught.value) and "LANCE" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "partitions"),
    [
        ("cow__v9_txns_simple_nometa", "column_stats,files,partition_stats"),
        ("mor_avro__v9_txns_simple_meta", "column_stats,files,partition_stats,record_index"),
    ],
)
def test_pyhudi_writes_a_v9_table_with_its_metadata_table(
    spark, hudi_tables, tmp_path, name, partitions
):
    """The metadata table of a Hudi 1.x table is written on (created where there was none): its
    `files` partition lists exactly the files on storage, and it has (or keeps) Hudi 1.2's
    default index partitions, `column_stats` and `partition_stats`, and keeps a record index
    Hudi built."""
    copy = tmp_path / "v9"
    shutil.copytree(hudi_tables[name], copy)
    df = pyhudi.read(spark, str(copy)).drop(*META)
    before = df.count()
    result = pyhudi.write(df.limit(3), str(copy), {"hoodie.datasource.write.operation": "upsert"})
    props = pyhudi.HudiTable(str(copy)).properties
    assert props["hoodie.table.version"] == "9"
    assert props["hoodie.table.metadata.partitions"] == partitions
    mdt = copy / ".hoodie" / "metadata"
    assert (mdt / ".hoodie" / "hoodie.properties").read_text().count("hoodie.table.version=9") == 1
    own_logs = list((mdt / "files").glob(f".files-0000-0_{result.instant_time}.log.1_*"))
    assert len(own_logs) == 1, sorted(p.name for p in (mdt / "files").iterdir())
    report = validate(str(copy))
    assert report.ok, [str(d) for d in report.differences]
    assert pyhudi.read(spark, str(copy)).count() == before
