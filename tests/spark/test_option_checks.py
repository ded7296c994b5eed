"""Option keys and values pyhudi cannot honour fail every entry point before anything is written
or read: misspelt keys (issue 34 item 1), table versions other than 6 (item 5), CDC (item 6)."""

from __future__ import annotations

import os
import re

import pytest
from pyspark.errors import PySparkException
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.pyspark_versions import DATA_SOURCE

import pyhudi
from pyhudi.exceptions import ConfigError

TYPO = {"hoodie.datasource.write.partitionpath.feild": "city"}


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("checks") / "t")
    pyhudi.write(
        df_of(spark, trips(0, 6)),
        path,
        {**trips_options(), "hoodie.datasource.write.operation": "insert"},
    )
    return path


def _options_without_partitioning(**extra: str) -> dict[str, str]:
    options = trips_options(**extra)
    del options["hoodie.datasource.write.partitionpath.field"]
    return options


@pytest.mark.parametrize(
    "extra",
    [
        TYPO,
        {"hoodi.datasource.write.operation": "insert"},
        {"hoodie.write.table.version": "7"},
        {"hoodie.table.cdc.enabled": "true", "hoodie.table.cdc.supplemental.logging.mode": "all"},
    ],
)
def test_pyhudi_write_refuses_before_creating_the_table(spark, tmp_path, extra):
    path = str(tmp_path / "t")
    with pytest.raises(ConfigError):
        pyhudi.write(df_of(spark, trips(0, 3)), path, _options_without_partitioning(**extra))
    assert not os.path.exists(os.path.join(path, ".hoodie", "hoodie.properties"))


def test_misspelt_partition_key_names_the_key_meant(spark, tmp_path):
    with pytest.raises(
        ConfigError, match=re.escape("did you mean 'hoodie.datasource.write.partitionpath.field'")
    ):
        pyhudi.write(
            df_of(spark, trips(0, 3)), str(tmp_path / "t"), _options_without_partitioning(**TYPO)
        )


def test_table_version_7_names_the_versions_pyhudi_writes(spark, tmp_path):
    with pytest.raises(ConfigError, match="pyhudi writes table versions 6, 8, 9"):
        pyhudi.write(
            df_of(spark, trips(0, 3)),
            str(tmp_path / "t"),
            trips_options(**{"hoodie.write.table.version": "7"}),
        )


#: What a bad `format("hudi")` call raises: Spark's error from the data source (pyspark 4), or
#: pyhudi's own from the routed call (3.5).
FORMAT_ERROR = PySparkException if DATA_SOURCE else ConfigError


def test_data_source_write_refuses_a_misspelt_key(spark, tmp_path):
    path = str(tmp_path / "t")
    writer = (
        df_of(spark, trips(0, 3))
        .write.format("hudi")
        .options(**{**trips_options(), "hoodie.datasource.write.operatoin": "bulk_insert"})
        .mode("append")
    )
    with pytest.raises(
        FORMAT_ERROR, match=re.escape("did you mean 'hoodie.datasource.write.operation'")
    ):
        writer.save(path)
    assert not os.path.exists(os.path.join(path, ".hoodie", "hoodie.properties"))


def test_stream_write_refuses_a_misspelt_key_before_the_query_starts(spark, tmp_path):
    stream = spark.readStream.format("rate").option("rowsPerSecond", 1).load()
    with pytest.raises(ConfigError, match="did you mean"):
        pyhudi.stream_write(
            stream,
            str(tmp_path / "t"),
            _options_without_partitioning(**TYPO),
            checkpoint_location=str(tmp_path / "chk"),
        )
    assert spark.streams.active == []


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"hoodie.datasource.query.typ": "incremental"},
            "did you mean 'hoodie.datasource.query.type'",
        ),
        ({"as.of.instnt": "20200101000000000"}, "did you mean 'as.of.instant'"),
        (
            {
                "hoodie.datasource.query.type": "incremental",
                "hoodie.datasource.read.begin.instanttime": "000",
                "hoodie.datasource.query.incremental.format": "cdc",
            },
            "not a CDC table",  # a CDC query of a table written without CDC logging
        ),
    ],
)
def test_every_read_path_refuses_misspelt_keys_and_cdc_queries(spark, table, options, match):
    with pytest.raises(ConfigError, match=match):
        pyhudi.read(spark, table, options)
    with pytest.raises(ConfigError, match=match):
        pyhudi.read_arrow(table, options)
    with pytest.raises(ConfigError, match=match):
        pyhudi.HudiTable(table).read(spark, options)
    with pytest.raises(ConfigError, match=match):
        pyhudi.HudiTable(table).to_arrow(options)
    with pytest.raises(FORMAT_ERROR, match=match):
        spark.read.format("hudi").options(**options).load(table).collect()


def test_data_source_read_accepts_spark_options(spark, table):
    frame = (
        spark.read.format("hudi")
        .option("mergeSchema", "true")
        .option("pathGlobFilter", "*")
        .load(table)
    )
    assert frame.count() == 6


def test_strict_false_reads_with_a_warning(spark, table):
    options = {"hoodie.datasource.query.typ": "incremental", "pyhudi.options.strict": "false"}
    with pytest.warns(UserWarning, match=re.escape("did you mean 'hoodie.datasource.query.type'")):
        assert pyhudi.read_arrow(table, options).num_rows == 6


def test_table_services_refuse_misspelt_keys(spark, table):
    hudi_table = pyhudi.HudiTable(table)
    typo = {"hoodie.cleaner.commits.retaind": "1"}
    with pytest.raises(
        ConfigError, match=re.escape("did you mean 'hoodie.cleaner.commits.retained'")
    ):
        hudi_table.clean(typo)
    with pytest.raises(ConfigError, match="did you mean"):
        hudi_table.archive({"hoodie.keep.max.comits": "5"})
    with pytest.raises(ConfigError, match="did you mean"):
        hudi_table.clustering.schedule({"hoodie.clustering.plan.strategy.sort.colums": "ts"})
    with pytest.raises(ConfigError, match="did you mean"):
        hudi_table.compaction.schedule({"hoodie.compact.inline.max.delta.comits": "1"})
    assert [i.time for i in hudi_table.refresh().timeline] == [i.time for i in hudi_table.commits()]


def test_cli_service_refuses_a_misspelt_option(table, capsys):
    from pyhudi.cli.main import main

    assert main(["clean", table, "-o", "hoodie.cleaner.commits.retaind=1"]) != 0
    assert "did you mean 'hoodie.cleaner.commits.retained'" in capsys.readouterr().err
