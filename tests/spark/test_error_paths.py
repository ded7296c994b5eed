"""One error story: the same bad input gets the same `HudiError` subclass and message through
`pyhudi.read` and `pyhudi.read_arrow`; through `spark.read.format("hudi")` and Spark SQL, where
Spark raises its own exception, the message is short and names the pyhudi class (pyspark 4: the
data source; on 3.5 `format("hudi")` runs pyhudi's calls, which raise their own errors)."""

from __future__ import annotations

import re

import pytest
from pyspark.errors import AnalysisException, PythonException
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.pyspark_versions import DATA_SOURCE

import pyhudi
from pyhudi.exceptions import (
    ConfigError,
    InvalidRecordError,
    TableNotFoundError,
    UnsupportedOperationError,
)

BAD_FILTER = [("no_such_column", "=", 1)]
BAD_OPTION = {"hoodie.datasource.query.type": "bogus"}
BAD_OPTION_MESSAGE = (
    "invalid value 'bogus' for hoodie.datasource.query.type: "
    "expected one of snapshot, read_optimized, incremental"
)


@pytest.fixture(scope="module")
def table(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("errors") / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    pyhudi.write(df_of(spark, trips(0, 6)), path, options)
    return path


def _message(call) -> tuple[type, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as raised:
        call()
    return type(raised.value), str(raised.value)


def test_a_filter_on_a_missing_column_is_one_config_error_in_read_and_read_arrow(spark, table):
    spark_read = _message(lambda: pyhudi.read(spark, table, filters=BAD_FILTER))
    arrow_read = _message(lambda: pyhudi.read_arrow(table, filters=BAD_FILTER))
    assert spark_read == arrow_read
    assert spark_read[1].startswith("filter column 'no_such_column' is not a column of the table")
    assert "uuid, city, ts, rider, fare" in spark_read[1]


def test_a_bad_option_value_is_one_config_error_in_read_and_read_arrow(spark, table):
    spark_read = _message(lambda: pyhudi.read(spark, table, BAD_OPTION))
    arrow_read = _message(lambda: pyhudi.read_arrow(table, BAD_OPTION))
    assert spark_read == arrow_read == (ConfigError, BAD_OPTION_MESSAGE)


def _short_hudi_error(err: Exception, name: str, message: str) -> None:
    """Spark's exception carries the pyhudi class and message and no pyhudi stack frames but
    the one that re-raised it."""
    text = str(err)
    assert f"pyhudi.exceptions.{name}: {message}" in text
    assert text.count("File ") <= 1 and "planner.py" not in text and len(text.splitlines()) <= 5


def test_format_hudi_reports_a_bad_option_value_briefly_with_the_class_name(spark, table):
    if not DATA_SOURCE:  # pyspark 3.5: `pyhudi.read` itself runs the load
        with pytest.raises(ConfigError, match=re.escape(BAD_OPTION_MESSAGE)):
            spark.read.format("hudi").options(**BAD_OPTION).load(table).collect()
        return
    with pytest.raises(AnalysisException, match="PYTHON_DATA_SOURCE_ERROR") as raised:
        spark.read.format("hudi").options(**BAD_OPTION).load(table).collect()
    _short_hudi_error(raised.value, "ConfigError", BAD_OPTION_MESSAGE)


def test_sql_reports_a_bad_table_option_briefly_with_the_class_name(spark, table):
    statement = (
        "CREATE TABLE bad_query_type USING hudi "
        f"OPTIONS ('hoodie.datasource.query.type' 'bogus') LOCATION '{table}'"
    )
    if not DATA_SOURCE:  # pyspark 3.5: no catalog table of the `hudi` format
        with pytest.raises(UnsupportedOperationError, match=r"USING hudi needs .*pyspark>=4"):
            spark.sql(statement)
        assert not spark.catalog.tableExists("bad_query_type")
        return
    with pytest.raises(AnalysisException, match="PYTHON_DATA_SOURCE_ERROR") as raised:
        spark.sql(statement)
    _short_hudi_error(raised.value, "ConfigError", BAD_OPTION_MESSAGE)
    assert not spark.catalog.tableExists("bad_query_type")


def test_format_hudi_and_sql_leave_a_missing_column_to_sparks_analyzer(spark, table):
    """Spark resolves the columns of a filter before any data source sees it: the error is
    Spark's own, as for every other format."""
    with pytest.raises(AnalysisException) as through_format:
        spark.read.format("hudi").load(table).filter("no_such_column = 1").collect()
    raised_by = [through_format]
    if DATA_SOURCE:  # pyspark 3.5 has no catalog table of the `hudi` format
        spark.sql(f"CREATE TABLE IF NOT EXISTS errors_trips USING hudi LOCATION '{table}'")
        try:
            with pytest.raises(AnalysisException) as through_sql:
                spark.sql("SELECT * FROM errors_trips WHERE no_such_column = 1").collect()
        finally:
            spark.sql("DROP TABLE IF EXISTS errors_trips")
        raised_by.append(through_sql)
    for raised in raised_by:
        # pyspark 3.5 has no getCondition (4.x deprecates getErrorClass)
        condition = getattr(raised.value, "getCondition", raised.value.getErrorClass)
        assert condition() == "UNRESOLVED_COLUMN.WITH_SUGGESTION"


def test_format_hudi_reports_a_missing_table_briefly_with_the_class_name(spark, tmp_path):
    missing = tmp_path / "none"
    if not DATA_SOURCE:
        with pytest.raises(TableNotFoundError, match=f"no Hudi table at .*{missing}"):
            spark.read.format("hudi").load(str(missing)).collect()
        return
    with pytest.raises(AnalysisException, match="PYTHON_DATA_SOURCE_ERROR") as raised:
        spark.read.format("hudi").load(str(missing)).collect()
    _short_hudi_error(raised.value, "TableNotFoundError", f"no Hudi table at {missing}")


def test_a_failed_write_task_reports_briefly_with_the_class_name(spark, tmp_path):
    rows = trips(0, 3)
    rows[1]["uuid"] = None
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    message = "recordKey value for field 'uuid' is null or empty"
    writer = df_of(spark, rows).write.format("hudi").options(**options).mode("append")
    if not DATA_SOURCE:  # pyspark 3.5: `pyhudi.write` itself runs the save
        with pytest.raises(InvalidRecordError, match=re.escape(message)):
            writer.save(str(tmp_path / "t"))
        return
    with pytest.raises(PythonException, match="InvalidRecordError") as raised:
        writer.save(str(tmp_path / "t"))
    _short_hudi_error(raised.value, "InvalidRecordError", message)
