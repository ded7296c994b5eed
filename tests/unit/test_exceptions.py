"""A `HudiError` raised in a Spark task is rebuilt, class and message, from Spark's text of it."""

from __future__ import annotations

from pyhudi.exceptions import (
    CorruptFileError,
    InvalidRecordError,
    WriteConflictError,
    jvm_error_summary,
    raised_in_task,
)

#: What Spark 4 puts in a failed job's exception for a Python task that raised (shortened).
SPARK_TEXT = """An error occurred while calling o273.collectToPython.
: org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in stage 3.0 failed 1 \
times, most recent failure: Lost task 1.0 (TID 7): org.apache.spark.api.python.PythonException: \
Traceback (most recent call last):
  File "/site-packages/pyhudi/bootstrap/full_record.py", line 47, in run
    check_arrow_partition_values(table, keys, keygen)
pyhudi.exceptions.InvalidRecordError: record key 'id-2': partition path field 'city' has value '..'
 SQLSTATE: 38000
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(...)
"""


def test_a_task_error_comes_back_as_its_class_with_its_message():
    error = raised_in_task(RuntimeError(SPARK_TEXT))
    assert type(error) is InvalidRecordError
    assert str(error) == "record key 'id-2': partition path field 'city' has value '..'"


def test_the_last_error_quoted_wins_and_a_same_line_sql_state_is_dropped():
    text = (
        "pyhudi.exceptions.CorruptFileError: first\n"
        "pyhudi.exceptions.WriteConflictError: instant 001 was rolled back SQLSTATE: 38000\n"
    )
    error = raised_in_task(RuntimeError(text))
    assert type(error) is WriteConflictError and str(error) == "instant 001 was rolled back"
    assert type(raised_in_task(RuntimeError(text.splitlines()[0]))) is CorruptFileError


def test_text_without_a_pyhudi_error_or_with_an_unknown_name_gives_none():
    assert raised_in_task(RuntimeError("java.lang.OutOfMemoryError: Java heap space")) is None
    assert raised_in_task(RuntimeError("pyhudi.exceptions.NotAClass: x")) is None
    assert raised_in_task(RuntimeError("pyhudi.exceptions.re: x")) is None


NO_S3A = """An error occurred while calling o1051.parquet.
: org.apache.hadoop.fs.UnsupportedFileSystemException: No FileSystem for scheme "s3"
\tat org.apache.hadoop.fs.FileSystem.getFileSystemClass(FileSystem.java:3581)
"""
MISSING_CLASS = """An error occurred while calling o327.parquet.
: java.lang.NoClassDefFoundError: software/amazon/s3/analyticsaccelerator/request/ObjectClient
\tat org.apache.hadoop.fs.s3a.S3AFileSystem.initialize(S3AFileSystem.java:700)
Caused by: java.lang.ClassNotFoundException: software.amazon.s3.analyticsaccelerator.ObjectClient
\t... 103 more
"""


def test_a_jvm_error_is_summed_up_by_its_exception_and_root_cause():
    summary = jvm_error_summary(MISSING_CLASS)
    assert "o327" not in summary
    assert summary.startswith("java.lang.NoClassDefFoundError: software/amazon/s3/")
    assert summary.endswith(
        "; caused by java.lang.ClassNotFoundException: "
        "software.amazon.s3.analyticsaccelerator.ObjectClient"
    )


def test_no_file_system_for_s3_says_what_to_add():
    summary = jvm_error_summary(NO_S3A)
    assert summary.startswith("Spark has no file system for s3:// URIs (add hadoop-aws")
    assert "spark.hadoop.fs.s3.impl=org.apache.hadoop.fs.s3a.S3AFileSystem" in summary
    assert summary.endswith('No FileSystem for scheme "s3"')


def test_other_errors_keep_their_first_line():
    assert jvm_error_summary("boom\nmore") == "boom"
    assert jvm_error_summary("") == ""
