"""Partition values checked before a write creates anything (rules: `pyhudi.storage.segments`).

Spark writes (`pyhudi.write`, `stream_write`): one filtered scan of the prepared records on the
driver, before the instant starts and before a table is created, that stops at the first record
whose partition path part is not a portable folder name (`limit(1)`); the error names its record
key, the field and the value. No Python UDF: the test is Spark SQL (`split`, `exists`, `rlike`).
Fields whose values cannot make a bad segment (numbers, booleans, dates, timestamps rendered as
epoch micros, timestamp formats without separators at the ends) skip the scan altogether.
Arrow writes (Data Source, full-record bootstrap) check each batch in the task before writing it
(`pyhudi.keygen.arrow_check`).
"""

from __future__ import annotations

from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import RECORD_KEY
from pyhudi.exceptions import InvalidRecordError
from pyhudi.keygen import spark as keygen
from pyhudi.keygen.spec import KeyGenSpec, PartitionFieldType
from pyhudi.storage.segments import (
    CONTROL_CHAR_PATTERN,
    MAX_SEGMENT_BYTES,
    invalid_partition_value,
    partition_path_problem,
)

_SAFE_TYPES = (
    T.IntegralType,
    T.FractionalType,
    T.BooleanType,
    T.DateType,
    T.TimestampType,
    T.TimestampNTZType,
)


def invalid_segment(part: Column) -> Column:
    """True when `part` (one field's part of the path) has an unusable `/`-separated segment."""
    pieces = F.split(part, "/", -1)
    bad_piece = F.exists(
        pieces, lambda p: p.isin("", ".", "..") | (F.octet_length(p) > MAX_SEGMENT_BYTES)
    )
    return bad_piece | part.rlike(CONTROL_CHAR_PATTERN)


def _needs_check(df: DataFrame, spec: KeyGenSpec) -> bool:
    for name, kind in spec.partition_fields:
        if kind is PartitionFieldType.TIMESTAMP:
            fmt = spec.timestamp.output_format if spec.timestamp else ""
            if fmt.startswith("/") or fmt.endswith("/") or "//" in fmt or "'" in fmt or ".." in fmt:
                return True
        elif not isinstance(keygen.field_type(df, name), _SAFE_TYPES):
            return True
    return False


def check_partition_values(records: DataFrame, spec: KeyGenSpec) -> None:
    """`InvalidRecordError` for the first record whose partition value cannot be a folder."""
    if not spec.partition_fields or not _needs_check(records, spec):
        return
    parts = keygen.partition_segments(records, spec)
    bad = reduce(lambda a, b: a | b, [invalid_segment(column) for _, column in parts])
    columns = [F.col(RECORD_KEY)]
    for index, (name, column) in enumerate(parts):
        columns += [column.alias(f"part{index}"), F.col(name).cast("string").alias(f"raw{index}")]
    try:
        found = records.filter(bad).select(*columns).limit(1).collect()
    except (PySparkException, Py4JJavaError) as err:
        if keygen.KEY_ERROR_PREFIX not in str(err):
            raise
        detail = str(err).split(keygen.KEY_ERROR_PREFIX, 1)[1].split("\n", 1)[0].strip()
        raise InvalidRecordError(f"{detail}; nothing was written") from None
    if not found:
        return
    row = found[0]
    for index, (name, _) in enumerate(parts):
        problem = partition_path_problem(row[f"part{index}"])
        if problem is not None:
            raise invalid_partition_value(row[RECORD_KEY], name, row[f"raw{index}"], problem)
