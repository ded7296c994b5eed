"""Bootstrap of existing parquet/ORC tables: modes, selectors, reads, writes afterwards, safety."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F
from tests.helpers.bootstrap import (
    DATA_COLUMNS,
    SCHEMA,
    bootstrap_options,
    existing_table,
    sample_rows,
    source_rows,
)
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.cli.main import main
from pyhudi.codec.bootstrap_index import (
    FILEIDS_FOLDER,
    INDEX_FILE_NAME,
    PARTITIONS_FOLDER,
    decode_file_index,
)
from pyhudi.codec.hfile import HFileReader
from pyhudi.exceptions import ConfigError, CorruptFileError, InvalidRecordError, TableExistsError
from pyhudi.model.instant import FULL_BOOTSTRAP_INSTANT, METADATA_BOOTSTRAP_INSTANT
from pyhudi.spark_compat import has_python_data_sources


def _digest(root: str) -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                out[os.path.relpath(os.path.join(folder, name), root)] = hashlib.sha256(
                    handle.read()
                ).hexdigest()
    return out


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
@pytest.mark.parametrize("selector", ["MetadataOnly", "FullRecord"])
def test_bootstrap_reads_equal_the_source_and_leave_it_untouched(
    spark, tmp_path, selector, file_format
):
    source = existing_table(spark, str(tmp_path / "src"), hive=True, file_format=file_format)
    before = _digest(source)
    target = str(tmp_path / "hudi")
    result = pyhudi.write(
        spark.createDataFrame([], "x int"), target, bootstrap_options(source, selector)
    )
    instant = METADATA_BOOTSTRAP_INSTANT if selector == "MetadataOnly" else FULL_BOOTSTRAP_INSTANT
    assert result.instant_time == instant and result.num_writes == 200
    table = pyhudi.read(spark, target)
    assert sorted(table.select(*DATA_COLUMNS).collect()) == source_rows(
        spark, source, True, file_format
    )
    assert {r["_hoodie_commit_time"] for r in table.select("_hoodie_commit_time").collect()} == {
        instant
    }
    assert _digest(source) == before
    if selector == "FullRecord":  # the independent reader sees the same rows, all columns
        ours = pa.Table.from_pylist([r.asDict() for r in table.select(*DATA_COLUMNS).collect()])
        theirs = hudi_rs_table(target)
        assert theirs.num_rows == 200
        assert rows(theirs, key="key", columns=DATA_COLUMNS) == rows(
            ours, key="key", columns=DATA_COLUMNS
        )

    else:
        skeletons = [
            f for f in os.listdir(os.path.join(target, "dt=2022-10-08")) if f.endswith(".parquet")
        ]
        assert len(skeletons) == 2 and all(
            len(f.split("_")[0]) == 36 for f in skeletons
        )  # bare UUID file ids
        index = decode_file_index(Path(target, FILEIDS_FOLDER, INDEX_FILE_NAME).read_bytes())
        assert len(index) == 4 and all(uri.startswith("file://") for uri in index.values())
        keys = [
            k
            for k, _ in HFileReader(
                Path(target, PARTITIONS_FOLDER, INDEX_FILE_NAME).read_bytes()
            ).items()
        ]
        assert keys == [b"part=dt=2022-10-08", b"part=dt=2022-10-09"]


def test_regex_selector_and_the_separator_mismatch(spark, tmp_path):
    source = existing_table(spark, str(tmp_path / "src"), hive=False)
    mismatch = pyhudi.write(
        spark.createDataFrame([], "x int"),
        str(tmp_path / "a"),
        bootstrap_options(
            source,
            "BootstrapRegexModeSelector",
            **{
                "hoodie.bootstrap.mode.selector.regex": "2022/10/0[0-9]",
                "hoodie.datasource.write.hive_style_partitioning": "false",
            },
        ),
    )
    assert (
        mismatch.instant_time == FULL_BOOTSTRAP_INSTANT
    )  # '/' never matches '2022-10-08': all FULL_RECORD
    mixed = pyhudi.write(
        spark.createDataFrame([], "x int"),
        str(tmp_path / "b"),
        bootstrap_options(
            source,
            "BootstrapRegexModeSelector",
            **{
                "hoodie.bootstrap.mode.selector.regex": "2022-10-08",
                "hoodie.datasource.write.hive_style_partitioning": "false",
            },
        ),
    )
    assert (
        "METADATA_ONLY    1 partition(s)" in mixed.services[0]
        and "FULL_RECORD      1 partition(s)" in mixed.services[0]
    )
    commits = [c.time for c in pyhudi.HudiTable(str(tmp_path / "b")).commits()]
    assert commits == [METADATA_BOOTSTRAP_INSTANT, FULL_BOOTSTRAP_INSTANT]
    data = (
        pyhudi.read(spark, str(tmp_path / "b"))
        .select("key", "_hoodie_commit_time", "_hoodie_partition_path")
        .collect()
    )
    assert len(data) == 200
    by_partition = {r["_hoodie_partition_path"]: r["_hoodie_commit_time"] for r in data}
    assert by_partition == {
        "2022-10-08": METADATA_BOOTSTRAP_INSTANT,
        "2022-10-09": FULL_BOOTSTRAP_INSTANT,
    }


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bootstrapped_tables_take_upserts_compaction_and_clustering(spark, tmp_path, table_type):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    before = _digest(source)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(source, **{"hoodie.datasource.write.table.type": table_type})
    pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    write = {k: v for k, v in options.items() if k != "hoodie.datasource.write.operation"}
    updates = (
        spark.createDataFrame(sample_rows(10), SCHEMA)
        .withColumn("ts", F.lit(2).cast("long"))
        .withColumn("dt", F.date_format("day", "yyyy-MM-dd"))
    )
    pyhudi.write(updates, target, {**write, "hoodie.datasource.write.operation": "upsert"})
    table = pyhudi.HudiTable(target)
    if table_type == "MERGE_ON_READ":
        table.compaction.run(spark, write)
    table.refresh().clustering.run(
        spark, {**write, "hoodie.clustering.plan.strategy.sort.columns": "key"}
    )
    data = pyhudi.read(spark, target).collect()
    assert len(data) == 200 and sum(1 for r in data if r["ts"] == 2) == 10
    assert all(
        not (s.base_file and s.base_file.bootstrap_source_path)
        for s in table.refresh().latest_file_slices()
    )
    assert sorted(r["key"] for r in hudi_rs_table(target).to_pylist()) == sorted(
        r["key"] for r in data
    )
    assert _digest(source) == before  # clean and rewrites never touch the source


def test_bootstrap_checks_and_save_modes(spark, tmp_path):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    target = str(tmp_path / "hudi")
    pyhudi.write(spark.createDataFrame([], "x int"), target, bootstrap_options(source))
    with pytest.raises(TableExistsError, match=r"[Rr]oll back"):
        pyhudi.write(spark.createDataFrame([], "x int"), target, bootstrap_options(source))
    ignored = pyhudi.write(
        spark.createDataFrame([], "x int"), target, bootstrap_options(source), mode="ignore"
    )
    assert ignored.instant_time == "" and len(pyhudi.HudiTable(target).commits()) == 1


def test_a_source_changed_after_bootstrap_is_a_clear_error(spark, tmp_path):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    target = str(tmp_path / "hudi")
    pyhudi.write(spark.createDataFrame([], "x int"), target, bootstrap_options(source))
    folder = os.path.join(source, "dt=2022-10-08")
    victim = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))[0]
    spark.createDataFrame(sample_rows(3), SCHEMA).coalesce(1).write.mode("overwrite").parquet(
        str(tmp_path / "tmp")
    )
    (written,) = [f for f in os.listdir(tmp_path / "tmp") if f.endswith(".parquet")]
    os.replace(tmp_path / "tmp" / written, os.path.join(folder, victim))
    with pytest.raises(CorruptFileError, match="rows but its source file"):
        pyhudi.read(spark, target).collect()


def test_a_failed_bootstrap_is_rolled_back(spark, tmp_path):
    source = str(tmp_path / "src")
    rows = sample_rows(20)
    rows[3] = (None, *rows[3][1:])
    spark.createDataFrame(rows, SCHEMA).withColumn("dt", F.lit("x")).write.partitionBy(
        "dt"
    ).parquet(source)
    target = str(tmp_path / "hudi")
    with pytest.raises(InvalidRecordError, match="recordKey value for field 'key' is null"):
        pyhudi.write(spark.createDataFrame([], "x int"), target, bootstrap_options(source))
    # the failed bootstrap created the table and committed nothing: its skeleton files, index
    # and timeline are gone, and so is the table folder it created
    assert not os.path.exists(target)
    assert os.listdir(tmp_path) == ["src"]


@pytest.mark.parametrize("selector", ["MetadataOnly", "FullRecord"])
def test_a_failed_bootstrap_leaves_no_file_of_its_late_tasks(spark, tmp_path, selector):
    """One task fails at once (a null key in its small source file) while the other still
    writes a large one: Spark fails the job without waiting for it, and the driver removes the
    table. The late task finds the instant gone and removes its files (`writer.late_tasks`)."""
    source = str(tmp_path / "src")
    ids = spark.range(0, 400_000, 1, numPartitions=1)
    key = F.when(F.col("id") == 0, F.lit(None)).otherwise(F.concat(F.lit("k"), F.col("id")))
    frame = ids.select(
        key.alias("key"),
        F.col("id").alias("ts"),
        F.when(F.col("id") < 1000, "a").otherwise("b").alias("dt"),
        *[F.rand(i).alias(f"c{i}") for i in range(6)],
    )
    frame.write.partitionBy("dt").parquet(source)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(source, selector, **{"hoodie.bootstrap.parallelism": "2"})
    with pytest.raises(InvalidRecordError, match="recordKey value for field 'key' is null"):
        pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    # The other task's Python worker finishes its files, then removes them: give it up to a
    # minute (a fixed 3 s failed in a CI run with Apache Hudi's judges busy on the same cores).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and os.path.exists(target) and _digest(target):
        time.sleep(0.5)
    assert not os.path.exists(target) or not _digest(target), _digest(target)


@pytest.mark.parametrize("selector", ["MetadataOnly", "FullRecord"])
def test_bootstrap_through_the_data_source(spark, tmp_path, selector):
    source = existing_table(spark, str(tmp_path / "src"), hive=False)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(
        source, selector, **{"hoodie.datasource.write.hive_style_partitioning": "false"}
    )
    spark.createDataFrame([], "x int").write.format("hudi").options(**options).mode("append").save(
        target
    )
    instant = METADATA_BOOTSTRAP_INSTANT if selector == "MetadataOnly" else FULL_BOOTSTRAP_INSTANT
    assert [c.time for c in pyhudi.HudiTable(target).commits()] == [instant]
    data = spark.read.format("hudi").load(target)
    assert sorted(data.select(*DATA_COLUMNS).collect()) == source_rows(spark, source, False)
    partitions = {
        r["_hoodie_partition_path"] for r in data.select("_hoodie_partition_path").collect()
    }
    assert partitions == {"2022-10-08", "2022-10-09"}
    # again: the data source's error (pyspark 4) or, routed to pyhudi.write (3.5), pyhudi's own
    refused = (
        pytest.raises(AnalysisException, match=r"TableExistsError: .*empty timeline")
        if has_python_data_sources()
        else pytest.raises(TableExistsError, match=r"empty timeline")
    )
    with refused:
        spark.createDataFrame([], "x int").write.format("hudi").options(**options).mode(
            "append"
        ).save(target)
    # save mode overwrite deletes the table and bootstraps again
    spark.createDataFrame([], "x int").write.format("hudi").options(**options).mode(
        "overwrite"
    ).save(target)
    assert [c.time for c in pyhudi.HudiTable(target).commits()] == [instant]
    assert spark.read.format("hudi").load(target).count() == 200


def test_deletes_after_bootstrap_and_clean_keeps_the_source(spark, tmp_path):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    before = _digest(source)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(source, **{"hoodie.cleaner.commits.retained": "1"})
    pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    write = {k: v for k, v in options.items() if k != "hoodie.datasource.write.operation"}
    doomed = spark.createDataFrame(sample_rows(200), SCHEMA).filter(F.col("qty") % 10 == 0)
    doomed = doomed.withColumn("dt", F.date_format("day", "yyyy-MM-dd"))
    pyhudi.write(doomed, target, {**write, "hoodie.datasource.write.operation": "delete"})
    pyhudi.write(doomed.limit(0), target, {**write, "hoodie.datasource.write.operation": "upsert"})
    pyhudi.HudiTable(target).clean()
    keys = sorted(r["key"] for r in pyhudi.read(spark, target).select("key").collect())
    assert keys == [f"k{i:04d}" for i in range(200) if i % 10]
    assert _digest(source) == before


def test_decoded_partition_path_translator(spark, tmp_path):
    source = str(tmp_path / "src")
    frame = spark.createDataFrame(sample_rows(20), SCHEMA).withColumn("city", F.lit("new:york"))
    frame.write.partitionBy("city").parquet(source)
    assert "city=new%3Ayork" in os.listdir(source)  # Spark escapes the folder name
    target = str(tmp_path / "hudi")
    translator = (
        "org.apache.hudi.client.bootstrap.translator.DecodedBootstrapPartitionPathTranslator"
    )
    options = bootstrap_options(
        source,
        **{
            "hoodie.datasource.write.partitionpath.field": "city",
            "hoodie.bootstrap.partitionpath.translator.class": translator,
        },
    )
    pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    data = pyhudi.read(spark, target).select("key", "city", "_hoodie_partition_path").collect()
    assert len(data) == 20 and {r["_hoodie_partition_path"] for r in data} == {"city=new:york"}

    with pytest.raises(
        ConfigError, match=r"unknown hoodie.bootstrap.partitionpath.translator.class 'Mine'"
    ):
        pyhudi.write(
            spark.createDataFrame([], "x int"),
            str(tmp_path / "other"),
            {**options, "hoodie.bootstrap.partitionpath.translator.class": "com.acme.Mine"},
        )


def test_cli_bootstrap_prints_what_it_did(spark, tmp_path, capsys):
    source = existing_table(spark, str(tmp_path / "src"), hive=True)
    target = str(tmp_path / "hudi")
    argv = ["bootstrap", "--source", source, "--target", target, "--record-key", "key"]
    argv += ["--partition-field", "dt", "--mode", "REGEX", "--regex", "dt=2022-10-0[9]"]
    argv += ["-o", "hoodie.datasource.write.hive_style_partitioning=true"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "METADATA_ONLY    1 partition(s), 100 rows: dt=2022-10-09" in out
    assert "FULL_RECORD      1 partition(s), 100 rows: dt=2022-10-08" in out
    assert "skeleton files: 2" in out
    assert pyhudi.read(spark, target).count() == 200
    assert main(argv) == 2 and "empty timeline" in capsys.readouterr().err


def test_hudi_table_bootstrap_without_spark(spark, tmp_path):
    source = existing_table(spark, str(tmp_path / "src"), hive=True, file_format="orc")
    options = {
        k: v
        for k, v in bootstrap_options(source, "FullRecord").items()
        if "bootstrap.base" not in k
    }
    table, result = pyhudi.HudiTable.bootstrap(source, str(tmp_path / "hudi"), options)
    assert table is not None and [c.time for c in table.commits()] == [FULL_BOOTSTRAP_INSTANT]
    assert result.full_record_rows == 200 and result.skeleton_files == 0
    assert sorted(pyhudi.read(spark, table.path).select(*DATA_COLUMNS).collect()) == source_rows(
        spark, source, True, "orc"
    )
    again, ignored = pyhudi.HudiTable.bootstrap(source, table.path, options, mode="ignore")
    assert again is None and ignored.ignored


@pytest.mark.parametrize(
    ("record_key", "file_format"), [("key", "parquet"), ("key,dt", "parquet"), ("key", "orc")]
)
def test_native_bootstrap_scan_equals_the_stored_skeletons(
    spark, tmp_path, record_key, file_format
):
    """The Spark-native scan rebuilds exactly the meta columns the skeletons store (or declines)."""
    from pyhudi.reader import bootstrap_scan
    from pyhudi.reader.bootstrap_scan import native_stitched_frame
    from pyhudi.reader.dataframe import arrow_slices_frame, spark_schema
    from pyhudi.reader.planner import plan_read
    from pyhudi.table.context import TableContext

    source = existing_table(spark, str(tmp_path / "src"), hive=True, file_format=file_format)
    target = str(tmp_path / "hudi")
    options = bootstrap_options(source, **{"hoodie.datasource.write.recordkey.field": record_key})
    pyhudi.write(spark.createDataFrame([], "x int"), target, options)
    ctx = TableContext.open(target)
    plan = plan_read(ctx)
    schema = spark_schema(plan)
    native = native_stitched_frame(spark, ctx, plan.stitched, schema)
    if file_format == "orc":
        assert native is None  # no row positions for ORC in Spark: the Arrow stitcher reads it
        return
    assert native is not None
    stored = arrow_slices_frame(spark, ctx, plan, plan.stitched, schema)
    assert sorted(native.collect()) == sorted(stored.collect())
    assert native.count() == 200
    # A Spark whose reader leaves the internal row-index column unfilled gets the Arrow stitcher
    assert bootstrap_scan._ROW_INDEX_FILLED[spark.version] is True
    bootstrap_scan._ROW_INDEX_FILLED[spark.version] = False
    try:
        assert native_stitched_frame(spark, ctx, plan.stitched, schema) is None
        assert sorted(pyhudi.read(spark, target).collect()) == sorted(stored.collect())
    finally:
        bootstrap_scan._ROW_INDEX_FILLED[spark.version] = True
