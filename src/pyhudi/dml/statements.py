"""`HudiTable.update(...)` and `HudiTable.delete(...)`: UPDATE and DELETE FROM, one commit each.

The rows the predicate selects are read from the table's snapshot; an update writes them back
whole with the assignments applied (an upsert, merged by the table's payload class as Hudi's
UPDATE is), a delete writes their keys as a `delete`.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.dml.checks import checked_counts, expressions_checked
from pyhudi.dml.clauses import Expr, column
from pyhudi.dml.merge import MergeResult
from pyhudi.dml.rows import ACTION, MATCHED, OLD, MergeShape, assignments_by_column
from pyhudi.dml.target import StatementTarget
from pyhudi.exceptions import ConfigError
from pyhudi.file_group.control_columns import DELETE
from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.spark_env import checkpointed, release


def _selected(snapshot: DataFrame, predicate: Expr | None, alias: str) -> DataFrame:
    rows = snapshot.alias(alias)
    if predicate is None:
        return rows
    return rows.filter(F.coalesce(column(predicate), F.lit(False)))


def update(
    spark: SparkSession,
    path: str,
    set: Mapping[str, Expr],
    predicate: Expr | None = None,
    options: Mapping[str, str] | None = None,
    *,
    alias: str = "target",
) -> MergeResult:
    """UPDATE: the rows where `predicate` holds (all rows when None) get the `set` values."""
    if not set:
        raise ConfigError("an update needs at least one column in set")
    target = StatementTarget.open(spark, path, options, "an update")
    cfg = target.config("upsert")
    snapshot = target.snapshot(predicate)
    schema = target.schema(snapshot)
    shape = MergeShape(
        alias, alias, schema, cfg.keygen.record_key_fields, cfg.keygen.partition_field_names, None
    )
    assigned = assignments_by_column(set, shape, "an update")
    with expressions_checked("update"):
        selected = _selected(snapshot, predicate, alias)
    values = [
        (
            column(assigned[f.name]).cast(f.dataType)
            if f.name in assigned
            else F.col(sql_identifier(f.name))
        ).alias(f.name)
        for f in schema
    ]
    olds = [
        F.col(sql_identifier(name)).alias(f"{OLD}{i}")
        for i, name in enumerate((*shape.record_key_fields, *shape.partition_fields))
    ]
    with expressions_checked("update"):
        built = selected.select(*values, F.lit(0).alias(ACTION), F.lit(True).alias(MATCHED), *olds)
        built.schema  # noqa: B018 (analysis now: a Connect client analyses lazily)
    rows = checkpointed(built)
    try:
        counts = checked_counts(rows, cfg, updates=[0], deletes=[], inserts=[])
        commit = target.write(
            rows.select(*[sql_identifier(n) for n in schema.names]), "upsert", delete_flags=False
        )
    finally:
        release(rows)
    return MergeResult(counts.updated, 0, 0, commit)


def delete(
    spark: SparkSession,
    path: str,
    predicate: Expr | None = None,
    options: Mapping[str, str] | None = None,
    *,
    alias: str = "target",
) -> MergeResult:
    """DELETE FROM: the rows where `predicate` holds (all rows when None) are deleted."""
    target = StatementTarget.open(spark, path, options, "a delete")
    snapshot = target.snapshot(predicate)
    target.schema(snapshot)
    with expressions_checked("delete"):
        rows = _selected(snapshot, predicate, alias)
        rows.schema  # noqa: B018 (analysis now: a Connect client analyses lazily)
    commit = target.write(rows.withColumn(DELETE, F.lit(True)), "upsert", delete_flags=True)
    return MergeResult(0, 0, commit.num_deletes, commit)
