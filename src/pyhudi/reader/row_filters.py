"""A read's filter tuples as one Spark condition (the rows they keep)."""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.reader.pruning import COMPARISONS, PartitionFilter


def rows_condition(filters: Sequence[PartitionFilter]) -> Column | None:
    """The conjunction of `filters` over the columns they name; None when there are none."""
    condition: Column | None = None
    for column, op, value in filters:
        col = F.col(sql_identifier(column))
        if op == "in":
            term = col.isin(list(value))
        elif op == "not in":
            term = ~col.isin(list(value))
        else:
            term = COMPARISONS[op](col, F.lit(value))
        condition = term if condition is None else condition & term
    return condition
