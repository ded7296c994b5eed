"""One Spark job over the rows a MERGE or UPDATE would write: the counts of its result, and the
checks that must pass before anything is written (each failure a clear error, the table as before).

* Two source rows may not take one target row, nor insert one key (SQL's MERGE rule; Hudi 0.15
  instead keeps the one with the greatest ordering value, or an arbitrary one, and inserts both
  of two new rows of a table without an ordering field).
* An update may not change a record key (Hudi 0.15's UPDATE rewrites the data column and leaves
  the stored key: the table then disagrees with itself).
* An update may change a row's partition only where the index moves records between partitions
  (a global index with `hoodie.*.index.update.partition.path=true`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from pyhudi.config import index as index_keys
from pyhudi.config.options import ConfigOption
from pyhudi.dml.rows import ACTION, MATCHED, OLD
from pyhudi.exceptions import ConfigError, InvalidRecordError, UnsupportedOperationError
from pyhudi.keygen.spark_sql import sql_name
from pyhudi.writer.config import WriteConfig


@contextmanager
def expressions_checked(what: str) -> Iterator[None]:
    """Spark's analysis errors of the statement's expressions (an unknown column, a type that
    does not fit) as a `ConfigError` naming the statement."""
    try:
        yield
    except AnalysisException as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
        raise ConfigError(f"{what}: an expression does not resolve: {first}") from err


@dataclass(frozen=True)
class RowCounts:
    """How many rows a statement updates, inserts and deletes."""

    updated: int = 0
    inserted: int = 0
    deleted: int = 0


def _moves_option(cfg: WriteConfig) -> ConfigOption[bool]:
    if cfg.index_type.reads_record_index:
        return index_keys.RECORD_INDEX_UPDATE_PARTITION_PATH
    return index_keys.GLOBAL_INDEX_UPDATE_PARTITION_PATH


def moves_partitions(cfg: WriteConfig) -> bool:
    """Whether an upsert moves a record whose partition changed (else it stays where it is)."""
    return cfg.is_global_index and bool(_moves_option(cfg).get(cfg.options))


def _changed(new: Column, old: Column) -> Column:
    return F.when(~new.eqNullSafe(old), F.lit(1)).otherwise(F.lit(0))


def checked_counts(
    rows: DataFrame,
    cfg: WriteConfig,
    *,
    updates: list[int],
    deletes: list[int],
    inserts: list[int],
) -> RowCounts:
    """Count what the rows do and check them (one job); raise before anything is written."""
    keys = cfg.keygen.record_key_fields
    parts = cfg.keygen.partition_field_names
    action = F.col(ACTION)
    matched = F.col(MATCHED)
    old = [F.col(f"{OLD}{i}") for i in range(len(keys) + len(parts))]
    new = [F.col(sql_name(name)) for name in (*keys, *parts)]
    is_update = action.isin(updates) if updates else F.lit(False)
    is_insert = action.isin(inserts) if inserts else F.lit(False)
    new_ident = [*new[: len(keys)], *(new[len(keys) :] if not cfg.is_global_index else [])]
    old_ident = old[: len(keys) + (0 if cfg.is_global_index else len(parts))]
    ident = F.when(matched, F.to_json(F.struct(F.lit("t"), *old_ident))).when(
        is_insert, F.to_json(F.struct(F.lit("i"), *new_ident))
    )
    key_change = F.greatest(F.lit(0), *[_changed(n, o) for n, o in zip(new, old)][: len(keys)])
    part_change = F.greatest(
        F.lit(0), F.lit(0), *[_changed(n, o) for n, o in zip(new, old)][len(keys) :]
    )
    per_row = rows.select(
        ident.alias("ident"),
        F.when(is_update, 1).otherwise(0).alias("u"),
        F.when(is_insert, 1).otherwise(0).alias("i"),
        (F.when(action.isin(deletes), 1).otherwise(0) if deletes else F.lit(0)).alias("d"),
        F.when(is_update, key_change).otherwise(0).alias("kc"),
        F.when(is_update, part_change).otherwise(0).alias("pc"),
    )
    grouped = per_row.groupBy("ident").agg(
        F.count(F.lit(1)).alias("n"),
        F.sum("u").alias("u"),
        F.sum("i").alias("i"),
        F.sum("d").alias("d"),
        F.max("kc").alias("kc"),
        F.max("pc").alias("pc"),
    )
    dup = F.when(F.col("ident").isNotNull() & (F.col("n") > 1), F.col("ident"))
    (total,) = grouped.agg(
        F.sum("u").alias("u"),
        F.sum("i").alias("i"),
        F.sum("d").alias("d"),
        F.max("kc").alias("kc"),
        F.max("pc").alias("pc"),
        F.max(dup).alias("dup"),
    ).collect()
    if total["dup"] is not None:
        raise InvalidRecordError(
            f"several source rows take one row ({_describe(total['dup'], keys, parts)}); a merge "
            "takes each target row, and inserts each key, at most once: de-duplicate the source"
        )
    if total["kc"]:
        raise UnsupportedOperationError(
            f"an update changes a record key field ({', '.join(keys)}); a record's key is its "
            "identity: delete the row and insert it with the new key"
        )
    if total["pc"] and not moves_partitions(cfg):
        raise UnsupportedOperationError(
            f"an update changes a partition field ({', '.join(parts)}) of a row; only a global "
            f"index with {_moves_option(cfg).key}=true moves rows between partitions"
        )
    return RowCounts(int(total["u"] or 0), int(total["i"] or 0), int(total["d"] or 0))


def _describe(ident_json: str, keys: tuple[str, ...], parts: tuple[str, ...]) -> str:
    values = list(json.loads(ident_json).values())
    kind, rest = values[0], values[1:]
    names = [*keys, *parts][: len(rest)]
    pairs = ", ".join(f"{n}={v!r}" for n, v in zip(names, rest))
    return f"target row {pairs}" if kind == "t" else f"insert of {pairs}"
