"""Partition values checked before a write creates anything (rules: `pyhudi.storage.segments`).

Spark writes (`pyhudi.write`, `stream_write`): one filtered scan of the prepared records on the
driver, before the instant starts and before a table is created, that stops at the first record
whose partition path part is not a portable folder name (`limit(1)`); the error names its record
key, the field and the value. Upserts that count their records per partition before the instant
and bucket loads (`check_and_count`) check in that counting job instead: one scan of the batch,
not two: it counts per partition path and the distinct paths are checked on the driver. Loads
(`bulk_insert`, bucket loads without counts) and bucket upserts check in their write tasks
instead (`WriteTaskSpec.check_partitions`: no scan of their own, no per-record test): a task
writes nothing in a partition whose path is not a usable folder and returns a `REFUSED` row for
it; the write then fails, its instant is rolled back (the job has ended: no task still writes)
and `partition_errors_named` names the record as above. No Python UDF: the scan's test is Spark
SQL (`split`, `exists`, `rlike`).
Fields whose values cannot make a bad segment (numbers, booleans, dates, timestamps rendered as
epoch micros, timestamp formats without separators at the ends) skip the scan altogether.
Arrow writes (Data Source, full-record bootstrap) check each batch in the task before writing it
(`pyhudi.keygen.arrow_check`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import reduce

from py4j.protocol import Py4JJavaError
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.exceptions import InvalidRecordError
from pyhudi.keygen import spark as keygen
from pyhudi.keygen.spec import KeyGenSpec, PartitionFieldType
from pyhudi.storage.segments import (
    CONTROL_CHAR_PATTERN,
    GUARD_FAILURE,
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
    found = _collect(
        lambda: records.filter(_bad(parts)).select(*_described(parts)).limit(1).collect()
    )
    if found:
        _raise_for(found[0], parts)


@contextmanager
def partition_errors_named(records: DataFrame, spec: KeyGenSpec) -> Iterator[None]:
    """Around a write whose tasks check the partition paths (`WriteTaskSpec.check_partitions`): a
    refusal (the instant rolled back, `GUARD_FAILURE`) becomes the error `check_partition_values`
    gives, naming the record key, the field and the value (one scan of `records` that stops at the
    first bad record, on failure only)."""
    try:
        yield
    except InvalidRecordError as err:
        if GUARD_FAILURE in str(err):
            check_partition_values(records, spec)
        raise


def check_and_count(records: DataFrame, spec: KeyGenSpec) -> dict[str, int]:
    """Records per partition path, counted by the job that checks the partition values (one scan
    of the batch where an upsert or a bucket load needed two: the check, then the counts). The
    job only counts (a hash aggregate on the path); the distinct paths it returns are checked
    here, with the rules of the SQL test (`partition_path_problem`: a path is its fields' parts
    joined by `/`, so its segments are theirs), where a per-record test ran a lambda and a regex
    over every record at ~1 us each. When a path is bad, `check_partition_values` names the
    record (its key, field and value). Raises as `check_partition_values` does, before anything
    is written."""
    rows = _collect(lambda: records.groupBy(PARTITION_PATH).count().collect())
    counts = {row[0]: row[1] for row in rows}
    checked = bool(spec.partition_fields) and _needs_check(records, spec)
    if checked and any(partition_path_problem(path or "") for path in counts):
        check_partition_values(records, spec)
        raise InvalidRecordError(  # not reached: the same test names the record above
            f"a partition value of {spec.partition_field_names} is not a folder name; "
            "nothing was written"
        )
    return counts


def _bad(parts: list[tuple[str, Column]]) -> Column:
    return reduce(lambda a, b: a | b, [invalid_segment(column) for _, column in parts])


def _described(parts: list[tuple[str, Column]]) -> list[Column]:
    """The columns an error names: the record key, each field's path part and raw value."""
    columns = [F.col(RECORD_KEY)]
    for index, (name, column) in enumerate(parts):
        columns += [column.alias(f"part{index}"), F.col(name).cast("string").alias(f"raw{index}")]
    return columns


def _collect(action: Callable[[], list[Row]]) -> list[Row]:
    try:
        return action()
    except (PySparkException, Py4JJavaError) as err:
        detail = keygen.record_error_detail(str(err))
        if detail is None:
            raise
        raise InvalidRecordError(f"{detail}; nothing was written") from None


def _raise_for(row: Row, parts: list[tuple[str, Column]]) -> None:
    for index, (name, _) in enumerate(parts):
        problem = partition_path_problem(row[f"part{index}"])
        if problem is not None:
            raise invalid_partition_value(row[RECORD_KEY], name, row[f"raw{index}"], problem)
