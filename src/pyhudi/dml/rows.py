"""The rows a MERGE writes: the source joined with the target's snapshot, each source row taken by
its first clause whose condition holds (SQL order), turned into full table rows with a delete flag.

| column               | meaning                                                           |
|----------------------|-------------------------------------------------------------------|
| the table's columns  | the row as written: updated (unassigned columns keep the target's value), inserted (unassigned: null), or the key, partition and ordering values of the target row a delete removes |
| `__pyhudi_delete`    | true for a delete                                                  |
| `__pyhudi_action`    | index of the clause that took the row; null: nothing written       |
| `__pyhudi_target_row`| true when the source row matched a target row                      |
| `__pyhudi_old_<i>`   | the matched target row's record key and partition values (checks) |

Ordering (precombine) field, as Hudi 0.15's `ExpressionPayload` decides it: an update whose source
ordering value is smaller than the stored one leaves the row as it is; a delete always applies.
The source ordering value is the source column named like the ordering field, else the plain
source column an update clause assigns to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.dml.clauses import Clause, ClauseKind, Expr, column, plain_source_column
from pyhudi.exceptions import ConfigError, SchemaMismatchError
from pyhudi.file_group.control_columns import DELETE
from pyhudi.keygen.spark_sql import sql_identifier

ACTION = "__pyhudi_action"
MATCHED = "__pyhudi_target_row"
OLD = "__pyhudi_old_"


@dataclass(frozen=True)
class MergeShape:
    """What the row building needs to know of the table and the statement."""

    source_alias: str
    target_alias: str
    #: The table's data columns and their Spark types, in table order.
    target_schema: T.StructType
    record_key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    ordering_field: str | None
    #: Matched updates with a smaller ordering value than the stored row's are dropped (not under
    #: Hudi 1.x's commit-time ordering, where the statement's write wins: Hudi 1.2, checked).
    drops_stale_updates: bool = True
    #: (record key or partition field, source expression) of every such field, when the source
    #: rows no clause takes are still planned as inserts (`written`); empty: they are not.
    untaken_identity: tuple[tuple[str, str], ...] = ()


def qualified(alias: str, name: str) -> Column:
    """`alias.name` of the joined rows."""
    return F.col(f"{sql_identifier(alias)}.{sql_identifier(name)}")


def assignments_by_column(
    assignments: Mapping[str, Expr], shape: MergeShape, what: str
) -> dict[str, Expr]:
    """Assignments keyed by the target column they set (`col` or `<target alias>.col`, any case)."""
    by_lower = {f.name.lower(): f.name for f in shape.target_schema}
    prefix = f"{shape.target_alias.lower()}."
    result: dict[str, Expr] = {}
    for raw, value in assignments.items():
        name = str(raw)
        lowered = name.lower().removeprefix(prefix).strip("`")
        if lowered not in by_lower:
            raise ConfigError(
                f"{what} assigns {name!r}, which is not a column of the table "
                f"(columns: {', '.join(shape.target_schema.names)})"
            )
        result[by_lower[lowered]] = value
    return result


def merge_rows(
    source: DataFrame,
    target: DataFrame,
    on: str,
    clauses: Sequence[Clause],
    shape: MergeShape,
) -> DataFrame:
    """The joined rows with the columns of the module doc (every source row, taken or not)."""
    sa, ta = shape.source_alias, shape.target_alias
    joined = source.alias(sa).join(
        target.withColumn(MATCHED, F.lit(True)).alias(ta), F.expr(on), "left"
    )
    matched = qualified(ta, MATCHED).isNotNull()
    action = _action(clauses, matched, shape, source.columns)
    olds = [
        qualified(ta, name).alias(f"{OLD}{i}")
        for i, name in enumerate((*shape.record_key_fields, *shape.partition_fields))
    ]
    with_action = joined.select("*", action.alias(ACTION))
    untaken = dict(shape.untaken_identity)
    values = []
    for field in shape.target_schema:
        value = _value(with_action, clauses, field, shape, source.columns)
        if field.name in untaken:  # a source row no clause takes keeps its key and partition
            value = F.when(
                F.col(ACTION).isNull() & ~matched, F.expr(untaken[field.name]).cast(field.dataType)
            ).otherwise(value)
        values.append(value.alias(field.name))
    deletes = [i for i, c in enumerate(clauses) if c.kind is ClauseKind.DELETE]
    deleted = F.col(ACTION).isin(deletes) if deletes else F.lit(False)
    return with_action.select(
        *values,
        F.coalesce(deleted, F.lit(False)).alias(DELETE),
        F.col(ACTION),
        matched.alias(MATCHED),
        *olds,
    )


def _action(
    clauses: Sequence[Clause], matched: Column, shape: MergeShape, source_columns: list[str]
) -> Column:
    chosen: Column | None = None
    for i, clause in enumerate(clauses):
        condition = matched if clause.matched else ~matched
        if clause.predicate is not None:
            condition = condition & F.coalesce(column(clause.predicate), F.lit(False))
        chosen = F.when(condition, F.lit(i)) if chosen is None else chosen.when(condition, F.lit(i))
    assert chosen is not None, "a merge has at least one clause"
    stale = _stale(clauses, shape, source_columns)
    updates = [i for i, c in enumerate(clauses) if c.kind is ClauseKind.UPDATE]
    if stale is None or not updates:
        return chosen
    return F.when(chosen.isin(updates) & stale, F.lit(None).cast("int")).otherwise(chosen)


def _stale(
    clauses: Sequence[Clause], shape: MergeShape, source_columns: list[str]
) -> Column | None:
    """True where the source's ordering value is below the target's (null: cannot tell)."""
    field = shape.ordering_field
    if field is None or "." in field or not shape.drops_stale_updates:
        return None
    by_lower = {c.lower(): c for c in source_columns}
    incoming: Column | None = None
    if field.lower() in by_lower:
        incoming = qualified(shape.source_alias, by_lower[field.lower()])
    else:
        for clause in clauses:
            if clause.kind is not ClauseKind.UPDATE or clause.assignments is None:
                continue
            assigned = assignments_by_column(clause.assignments, shape, "an update").get(field)
            name = (
                plain_source_column(assigned, shape.source_alias, source_columns)
                if assigned is not None
                else None
            )
            if name is not None:
                incoming = qualified(shape.source_alias, name)
                break
    if incoming is None:
        return None
    stored = qualified(shape.target_alias, field)
    return incoming.isNotNull() & stored.isNotNull() & (incoming < stored)


def _value(
    df: DataFrame,
    clauses: Sequence[Clause],
    field: T.StructField,
    shape: MergeShape,
    source_columns: list[str],
) -> Column:
    """The column's value in the written row, by the clause that took it."""
    chosen: Column | None = None
    for i, clause in enumerate(clauses):
        value = _clause_value(clause, field, shape, source_columns).cast(field.dataType)
        when = F.col(ACTION) == i
        chosen = F.when(when, value) if chosen is None else chosen.when(when, value)
    assert chosen is not None
    return chosen


def _clause_value(
    clause: Clause, field: T.StructField, shape: MergeShape, source_columns: list[str]
) -> Column:
    kept = qualified(shape.target_alias, field.name)
    if clause.kind is ClauseKind.DELETE:  # the writer needs only the row's identity
        return kept if field.name.lower() in _identity_columns(shape) else F.lit(None)
    if clause.assignments is None:  # SET * / INSERT *: the source column of the same name
        by_lower = {c.lower(): c for c in source_columns}
        name = by_lower.get(field.name.lower())
        if name is None:
            star = "UPDATE SET *" if clause.kind is ClauseKind.UPDATE else "INSERT *"
            raise SchemaMismatchError(
                f"{star} takes every column of the table from the source, which has no column "
                f"{field.name!r} (source columns: {', '.join(source_columns)})"
            )
        return qualified(shape.source_alias, name)
    assigned = assignments_by_column(clause.assignments, shape, f"an {clause.kind.value}")
    if field.name in assigned:
        return column(assigned[field.name])
    if clause.kind is ClauseKind.UPDATE:
        return kept
    return F.lit(None)


def _identity_columns(shape: MergeShape) -> set[str]:
    """The (top-level) columns a deleted row is written with: its record key, partition and
    ordering fields; the others are null, so the target's scan reads only what the statement
    uses (Spark prunes the columns nothing refers to)."""
    ordering = (shape.ordering_field or "").split(",")  # several ordering fields: each
    fields = (*shape.record_key_fields, *shape.partition_fields, *ordering)
    return {name.strip().split(".", 1)[0].lower() for name in fields if name.strip()}


def written(rows: DataFrame, shape: MergeShape) -> DataFrame:
    """The rows to write (full table rows and their delete flags), and with `untaken_identity`
    the source rows no clause took that match no target row, as deletes of keys the table does not
    have: the write plans them as inserts and writes them nowhere. Hudi's MERGE INTO hands every
    source row to its upsert, whose workload profile counts those rows as inserts of their
    partition; on merge-on-read the partition's small files then take its updates and deletes
    into a new base file instead of a log file (Hudi 0.15 and 1.2, checked)."""
    names = [sql_identifier(n) for n in shape.target_schema.names]
    taken = F.col(ACTION).isNotNull()
    if not shape.untaken_identity:
        return rows.filter(taken).select(*names, DELETE)
    untaken = ~taken & ~F.col(MATCHED)
    for name, _ in shape.untaken_identity:
        untaken = untaken & F.col(sql_identifier(name)).isNotNull()
    return rows.filter(taken | untaken).select(*names, (F.col(DELETE) | untaken).alias(DELETE))


def untaken_identity(
    equalities: Mapping[str, str],
    identity_fields: Sequence[str],
    source_alias: str,
    source_columns: Sequence[str],
) -> tuple[tuple[str, str], ...]:
    """(field, source expression) of every record key and partition field: the ON condition's
    expression for it, else the source column of its name; empty when one has neither (or is
    nested)."""
    by_lower = {c.lower(): c for c in source_columns}
    found: list[tuple[str, str]] = []
    for name in identity_fields:
        if "." in name:
            return ()
        expression = equalities.get(name)
        if expression is None and name.lower() in by_lower:
            expression = f"{sql_identifier(source_alias)}.{sql_identifier(by_lower[name.lower()])}"
        if expression is None:
            return ()
        found.append((name, expression))
    return tuple(found)
