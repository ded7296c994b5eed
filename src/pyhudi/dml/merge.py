"""`HudiTable.merge(...)`: MERGE INTO as Hudi users write it, one commit of the table.

>>> (table.merge(updates, on="t.id = s.id", source_alias="s", target_alias="t")  # doctest: +SKIP
...     .when_matched_update(set={"price": "s.price", "ts": "s.ts"}, predicate="s.op = 'U'")
...     .when_matched_delete(predicate="s.op = 'D'")
...     .when_not_matched_insert_all()
...     .execute())

The clauses apply in the order given; each source row is taken by the first whose condition
holds (SQL's MERGE). The rows to write (updated rows whole, inserted rows, the target rows to
delete with a delete flag) are written as one upsert through the table's index and write
pipeline, so the updates, inserts and deletes become visible together. The target's scan reads
the columns the statement uses (a deleted row is written with its key, partition and ordering
values only) and, when ON equates the partition fields with the source, only the partitions the
source's rows name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from sqlglot import expressions as exp

from pyhudi.dml.checks import RowCounts, checked_counts, expressions_checked
from pyhudi.dml.clauses import Clause, ClauseKind, Expr, KeyMatch, check_on_condition
from pyhudi.dml.rows import MergeShape, merge_rows, untaken_identity, written
from pyhudi.dml.target import StatementTarget
from pyhudi.exceptions import ConfigError
from pyhudi.keygen.spark_sql import sql_identifier
from pyhudi.merge.config import MergeMode
from pyhudi.model.results import CommitResult
from pyhudi.spark.frames import spark_frame
from pyhudi.spark_env import checkpointed, release

#: At most this many partitions of the source restrict the target's scan (more: it reads all).
MAX_PRUNED_PARTITIONS = 1000


@dataclass(frozen=True)
class MergeResult:
    """What a MERGE, UPDATE or DELETE did: the rows it updated, inserted and deleted, and its
    commit (`commit.instant_time` is the instant that made them visible together)."""

    num_updated: int
    num_inserted: int
    num_deleted: int
    commit: CommitResult

    @property
    def instant_time(self) -> str:
        """The instant of the statement's commit."""
        return self.commit.instant_time


class MergeBuilder:
    """A MERGE being put together: add clauses, then `execute()` it."""

    def __init__(
        self,
        path: str,
        source: Any,
        on: str,
        *,
        source_alias: str = "source",
        target_alias: str = "target",
        options: Mapping[str, str] | None = None,
    ) -> None:
        """`source`: a Spark DataFrame (or pandas / Arrow data, through the active session);
        `on`: a Spark SQL condition equating the target's record key fields with the source's."""
        if source_alias.lower() == target_alias.lower():
            raise ConfigError(f"the source and target aliases are both {source_alias!r}")
        self._path = path
        self._source = spark_frame(source, "HudiTable.merge")
        self._on = on
        self._source_alias = source_alias
        self._target_alias = target_alias
        self._options = dict(options or {})
        self._clauses: list[Clause] = []

    def when_matched_update(
        self, set: Mapping[str, Expr], predicate: Expr | None = None
    ) -> MergeBuilder:
        """Update matched rows: `set` maps target columns to values; the others keep theirs."""
        if not set:
            raise ConfigError("when_matched_update needs at least one column in set")
        return self._add(Clause(ClauseKind.UPDATE, predicate, dict(set)))

    def when_matched_update_all(self, predicate: Expr | None = None) -> MergeBuilder:
        """Update matched rows with every column from the source column of the same name."""
        return self._add(Clause(ClauseKind.UPDATE, predicate))

    def when_matched_delete(self, predicate: Expr | None = None) -> MergeBuilder:
        """Delete matched rows."""
        return self._add(Clause(ClauseKind.DELETE, predicate))

    def when_not_matched_insert(
        self, values: Mapping[str, Expr], predicate: Expr | None = None
    ) -> MergeBuilder:
        """Insert source rows that match nothing: `values` maps target columns to values (the
        others are null)."""
        if not values:
            raise ConfigError("when_not_matched_insert needs at least one column in values")
        return self._add(Clause(ClauseKind.INSERT, predicate, dict(values)))

    def when_not_matched_insert_all(self, predicate: Expr | None = None) -> MergeBuilder:
        """Insert source rows that match nothing, every column from the source."""
        return self._add(Clause(ClauseKind.INSERT, predicate))

    def _source_partitions(self, match: KeyMatch, partition_fields: tuple[str, ...]) -> str | None:
        """When ON equates every partition field with the source, a predicate naming the
        partitions the source's rows can match (one job over the source), so the target's scan
        reads only those; None when it cannot (nulls, other types, too many partitions)."""
        if not partition_fields or any(f not in match.equalities for f in partition_fields):
            return None
        values = [
            F.expr(match.equalities[f]).alias(f"p{i}") for i, f in enumerate(partition_fields)
        ]
        with expressions_checked("merge"):
            found = (
                self._source.alias(self._source_alias)
                .select(*values)
                .distinct()
                .limit(MAX_PRUNED_PARTITIONS + 1)
                .collect()
            )
        if not found or len(found) > MAX_PRUNED_PARTITIONS:
            return None
        conjuncts = []
        for i, field in enumerate(partition_fields):
            literals = {_literal(row[i]) for row in found}
            if None in literals:
                return None
            listed = ", ".join(sorted(str(v) for v in literals))
            conjuncts.append(f"{sql_identifier(field)} IN ({listed})")
        return " AND ".join(conjuncts)

    def _add(self, clause: Clause) -> MergeBuilder:
        self._clauses.append(clause)
        return self

    def execute(self) -> MergeResult:
        """Run the merge as one commit; a failure leaves the table as it was."""
        if not self._clauses:
            raise ConfigError("a merge needs at least one when_... clause")
        spark: SparkSession = self._source.sparkSession
        target = StatementTarget.open(spark, self._path, self._options, "a merge", overwrite=True)
        cfg = target.config("upsert")
        schema = target.schema(target.snapshot())
        match = check_on_condition(
            self._on,
            target_alias=self._target_alias,
            source_alias=self._source_alias,
            target_columns=schema.names,
            record_key_fields=cfg.keygen.record_key_fields,
            partition_fields=cfg.keygen.partition_field_names,
        )
        snapshot = target.snapshot(self._source_partitions(match, cfg.keygen.partition_field_names))
        shape = MergeShape(
            self._source_alias,
            self._target_alias,
            schema,
            cfg.keygen.record_key_fields,
            cfg.keygen.partition_field_names,
            cfg.precombine_field,
            drops_stale_updates=not (
                cfg.table_version >= 8 and cfg.merge_mode is MergeMode.COMMIT_TIME_ORDERING
            ),
            untaken_identity=(
                untaken_identity(
                    match.equalities,
                    (*cfg.keygen.record_key_fields, *cfg.keygen.partition_field_names),
                    self._source_alias,
                    self._source.columns,
                )
                if cfg.is_merge_on_read and not cfg.index_type.routes_by_bucket
                else ()
            ),
        )
        with expressions_checked("merge"):
            built = merge_rows(self._source, snapshot, self._on, self._clauses, shape)
            built.schema  # noqa: B018 (analysis now: a Connect client analyses lazily)
        rows = checkpointed(built)
        try:
            with expressions_checked("merge"):
                counts = checked_counts(rows, cfg, **_clause_ids(self._clauses))
            commit = target.write(written(rows, shape), "upsert", delete_flags=True)
        finally:
            release(rows)
        return _result(counts, commit)


def _literal(value: Any) -> str | None:
    """A partition value as a SQL literal the partition pruning reads (strings and integers)."""
    if isinstance(value, str):
        return str(exp.Literal.string(value).sql(dialect="spark"))
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _clause_ids(clauses: list[Clause]) -> dict[str, list[int]]:
    return {
        "updates": [i for i, c in enumerate(clauses) if c.kind is ClauseKind.UPDATE],
        "deletes": [i for i, c in enumerate(clauses) if c.kind is ClauseKind.DELETE],
        "inserts": [i for i, c in enumerate(clauses) if c.kind is ClauseKind.INSERT],
    }


def _result(counts: RowCounts, commit: CommitResult) -> MergeResult:
    return MergeResult(counts.updated, counts.inserted, counts.deleted, commit)
