"""Partition values of an Arrow batch checked before a task writes it (rules: `pyhudi.storage.segments`).

The Arrow write paths (Data Source writes, FULL_RECORD bootstrap) compute partition paths in the
tasks (`pyhudi.keygen.arrow`); each batch is checked there, vectorised, before any of its rows is
written. The error names the first offending record's key, the field and the value, like the Spark
scan of `pyhudi.writer.partition_check` does for Spark writes.
"""

from __future__ import annotations

import pyarrow as pa

from pyhudi.keygen.arrow import column_values, partition_segments
from pyhudi.keygen.spec import KeyGenSpec
from pyhudi.storage.segments import (
    first_invalid_index,
    invalid_partition_value,
    partition_path_problem,
)


def check_arrow_partition_values(table: pa.Table, keys: pa.Array, spec: KeyGenSpec) -> None:
    """`InvalidRecordError` for the first row whose partition value cannot be a folder."""
    for name, part in partition_segments(table, spec):
        index = first_invalid_index(part)
        if index is not None:
            value = column_values(table, name)[index].as_py()
            problem = partition_path_problem(part[index].as_py()) or "an invalid path segment"
            raise invalid_partition_value(keys[index].as_py(), name, value, problem)


__all__ = ["check_arrow_partition_values"]
