"""The parts of a MERGE: its clauses, and the check of its ON condition against the table's keys.

Expressions are Spark SQL strings (evaluated with `F.expr` over the joined rows, where the source
and the target are reachable by their aliases) or `Column`s. The ON condition must be a string:
it is read with sqlglot to check that it equates every record key field of the target with an
expression of the source (Hudi matches records by key; nothing else can decide a match).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import sqlglot
from pyspark.sql import Column
from pyspark.sql import functions as F
from sqlglot import expressions as exp

from pyhudi.exceptions import ConfigError, UnsupportedOperationError

#: A Spark SQL expression string or a Column.
Expr = str | Column


class ClauseKind(str, Enum):
    """What a clause does to the rows it takes."""

    UPDATE = "update"
    DELETE = "delete"
    INSERT = "insert"


@dataclass(frozen=True)
class Clause:
    """One WHEN clause. `assignments` None: every column from the source column of the same name
    (`UPDATE SET *` / `INSERT *`); else target column -> value (an update keeps the others, an
    insert leaves them null)."""

    kind: ClauseKind
    predicate: Expr | None = None
    assignments: Mapping[str, Expr] | None = field(default=None)

    @property
    def matched(self) -> bool:
        """True for WHEN MATCHED clauses (update, delete), False for WHEN NOT MATCHED (insert)."""
        return self.kind is not ClauseKind.INSERT


def column(value: Expr) -> Column:
    """A clause's expression as a Column."""
    return F.expr(value) if isinstance(value, str) else value


def parse_sql(text: str, what: str) -> Any:
    """`text` parsed as one Spark SQL expression (a `ConfigError` naming `what` if it is not)."""
    try:
        parsed = sqlglot.parse_one(text, dialect="spark")
    except sqlglot.errors.ParseError as err:
        raise ConfigError(f"{what} is not a Spark SQL expression: {text!r} ({err})") from None
    return parsed


@dataclass(frozen=True)
class KeyMatch:
    """What the ON condition equates: target column -> the source expression (Spark SQL)."""

    equalities: dict[str, str]


def check_on_condition(
    on: str,
    *,
    target_alias: str,
    source_alias: str,
    target_columns: Sequence[str],
    record_key_fields: Sequence[str],
    partition_fields: Sequence[str],
) -> KeyMatch:
    """The ON condition's equalities, after checking what Hudi requires of them: a conjunction of
    `t.col = <source expression>` (`<=>` too: record keys are never null), each `col` a record
    key or partition field of the target, every record key field among them."""
    if not isinstance(on, str):
        raise ConfigError("the ON condition of a merge is a Spark SQL string, e.g. 't.id = s.id'")
    parsed = parse_sql(on, "the ON condition")
    allowed = {c.lower(): c for c in (*record_key_fields, *partition_fields)}
    lowered_columns = {c.lower() for c in target_columns}
    equalities: dict[str, str] = {}
    for part in _conjuncts(parsed):
        if not isinstance(part, exp.EQ | exp.NullSafeEQ):
            raise UnsupportedOperationError(
                f"a merge matches rows by record key: its ON condition is equalities "
                f"'{target_alias}.<key> = <source expression>' joined by AND; "
                f"{part.sql(dialect='spark')!r} is not one"
            )
        sides = [part.this, part.expression]
        targets = [s for s in sides if _is_target_column(s, target_alias, source_alias)]
        if len(targets) != 1:
            raise UnsupportedOperationError(
                f"ON condition {part.sql(dialect='spark')!r}: one side must be a column of the "
                f"target ({target_alias}.<column>), the other an expression of the source"
            )
        target = targets[0]
        other = sides[1] if target is sides[0] else sides[0]
        name = target.name
        if any(
            _is_target_column(c, target_alias, source_alias) for c in other.find_all(exp.Column)
        ):
            raise UnsupportedOperationError(
                f"ON condition {part.sql(dialect='spark')!r} compares the target with itself"
            )
        if name.lower() not in lowered_columns:
            raise ConfigError(
                f"ON condition {part.sql(dialect='spark')!r}: the target table has no column "
                f"{name!r} (its columns: {_listed(target_columns)})"
            )
        if name.lower() not in allowed:
            keys = ", ".join(record_key_fields)
            raise UnsupportedOperationError(
                f"ON condition {part.sql(dialect='spark')!r}: {name!r} is neither the table's "
                f"record key ({keys}) nor a partition field; Hudi matches rows by record key, "
                f"so write the condition on {keys}"
            )
        equalities[allowed[name.lower()]] = other.sql(dialect="spark")
    missing = [k for k in record_key_fields if k not in equalities]
    if missing:
        raise UnsupportedOperationError(
            f"the ON condition must equate every record key field of the target with the source; "
            f"missing: {', '.join(missing)} (e.g. '{target_alias}.{missing[0]} = "
            f"{source_alias}.{missing[0]}')"
        )
    return KeyMatch(equalities)


def _listed(names: Sequence[str], at_most: int = 20) -> str:
    shown = ", ".join(names[:at_most])
    return shown if len(names) <= at_most else f"{shown}, ... ({len(names)} in all)"


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    return [node]


def _is_target_column(node: exp.Expression, target_alias: str, source_alias: str) -> bool:
    """A column qualified with the target's alias (unqualified ones are the source's unless the
    source alias is unknown: Spark would call them ambiguous)."""
    while isinstance(node, exp.Cast | exp.Paren):
        node = node.this
    if not isinstance(node, exp.Column):
        return False
    qualifier = node.table
    return bool(qualifier) and qualifier.lower() == target_alias.lower() != source_alias.lower()


def plain_source_column(
    value: Expr, source_alias: str, source_columns: Sequence[str]
) -> str | None:
    """The source column a SQL assignment value names as it is (`s.col` or `col`), else None."""
    if not isinstance(value, str):
        return None
    try:
        node = sqlglot.parse_one(value, dialect="spark")
    except sqlglot.errors.ParseError:
        return None
    while isinstance(node, exp.Cast | exp.Paren):
        node = node.this
    if not isinstance(node, exp.Column) or node.table.lower() not in ("", source_alias.lower()):
        return None
    by_lower = {c.lower(): c for c in source_columns}
    return by_lower.get(node.name.lower())


def partition_filters(
    predicate: Expr | None, partition_types: Mapping[str, str]
) -> list[tuple[str, str, Any]]:
    """Conjuncts of a SQL predicate that prune partitions as read filters: `part = 'v'` and
    `part IN ('v', ...)` on a partition field (`partition_types`: field -> "string" | "integer"),
    with literals of that type. The whole predicate still filters the rows read."""
    if not isinstance(predicate, str):
        return []
    try:
        parsed: Any = sqlglot.parse_one(predicate, dialect="spark")
    except sqlglot.errors.ParseError:
        return []
    by_lower = {name.lower(): name for name in partition_types}
    found: list[tuple[str, str, Any]] = []
    for part in _conjuncts(parsed):
        if isinstance(part, exp.EQ) and isinstance(part.this, exp.Column):
            name, values = part.this.name, [part.expression]
        elif (
            isinstance(part, exp.In)
            and isinstance(part.this, exp.Column)
            and not part.args.get("query")
        ):
            name, values = part.this.name, list(part.expressions)
        else:
            continue
        field = by_lower.get(name.lower())
        literals = [_typed_literal(v, partition_types[field]) for v in values] if field else []
        if field is None or not literals or any(v is None for v in literals):
            continue
        found.append((field, "=", literals[0]) if len(literals) == 1 else (field, "in", literals))
    return found


def _typed_literal(node: exp.Expression, kind: str) -> Any:
    if not isinstance(node, exp.Literal):
        return None
    if kind == "string" and node.is_string:
        return str(node.this)
    if kind == "integer" and not node.is_string and str(node.this).lstrip("-").isdigit():
        return int(str(node.this))
    return None
