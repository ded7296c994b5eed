"""The event-time ordering rule: when a later record (incoming, or a log record) replaces an
earlier one (stored, or the base record), in Arrow and in Spark, from one definition.

Rule (Hudi 0.15 `DefaultHoodieRecordPayload`, `EVENT_TIME_ORDERING`):
* the later record replaces the earlier one unless the earlier one's ordering value is greater:
  equal values go to the later record (`persisted.compareTo(incoming) <= 0` updates);
* a null ordering value is smaller than every value: a stored record with a null ordering value
  is always replaced (`persisted == null` updates), two nulls are equal;
* several ordering fields (`hoodie.table.ordering.fields=a,b`, table version 9) compare as a
  tuple, lexicographically, each field by the rule above;
* merged with its base record, a log delete (`_hoodie_is_deleted`, or a delete block) that won
  the log replaces the base record whatever the ordering values (`base_stays`), on table version
  6 (Hudi 0.15); on versions 8 and 9 only a natural-order delete does, and one carrying ordering
  values loses to a base record with greater ones (Hudi 1.2; the callers pass which deletes
  are forced).

What Apache Hudi does with null ordering values (checked in tests/judge/test_null_ordering_values.py):
Hudi 0.15 writes them into base files (bulk_insert, insert without combine) and upserts over them
(the incoming record wins); it refuses an upsert carrying one ("Ordering value is null for
record") and cannot read a log record holding one (the same error while scanning the log), so
"null is smallest" on the incoming side is pyhudi's choice, consistent with sorting log versions
nulls first. Hudi 1.2 writes them in upserts too but fails to read such tables (an Integer
default ordering value compared with a Long).

The rule is written once, generic over `OrderingOps` (the few boolean operations it needs), and
evaluated by two engines: `ARROW` (arrays; the log resolution, base overlay, copy-on-write merge
and compaction) and `SPARK` (Columns; the Spark merge-on-read join). Every result is non-null in
both engines: a null comparison becomes False through `or_false` before it is combined (Arrow
`fill_null`, Spark `<=> true`), so a Spark filter keeps exactly one of two rows.
tests/spark/test_ordering_engines_agree.py evaluates both on the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    from pyspark.sql import Column

V = TypeVar("V")


@dataclass(frozen=True)
class OrderingOps(Generic[V]):
    """Row-wise operations of one engine over its value vectors `V` (Arrow arrays, Spark Columns).
    `greater` and `equal` may yield null for null operands; the rule only combines their
    `or_false` results, so every boolean it combines is non-null."""

    greater: Callable[[V, V], V]
    equal: Callable[[V, V], V]
    is_null: Callable[[V], V]
    or_false: Callable[[V], V]  # null becomes False
    and_: Callable[[V, V], V]
    or_: Callable[[V, V], V]
    not_: Callable[[V], V]


ARROW: OrderingOps[pa.Array] = OrderingOps(
    greater=pc.greater,
    equal=pc.equal,
    is_null=pc.is_null,
    or_false=lambda values: pc.fill_null(values, False),
    and_=pc.and_,
    or_=pc.or_,
    not_=pc.invert,
)

#: Column operators only (no `pyspark.sql.functions`), so this module imports no pyspark and the
#: Arrow executors that use it stay free of it. `a <=> true` is False for a null `a`.
SPARK: OrderingOps[Column] = OrderingOps(
    greater=lambda a, b: a > b,
    equal=lambda a, b: a == b,
    is_null=lambda a: a.isNull(),
    or_false=lambda a: a.eqNullSafe(True),
    and_=lambda a, b: a & b,
    or_=lambda a, b: a | b,
    not_=lambda a: ~a,
)


def ordering_columns(ordering: str | None) -> list[str]:
    """The ordering fields of a task (`a,b`: several, compared as a tuple in that order)."""
    return [f.strip() for f in (ordering or "").split(",") if f.strip()]


def value_greater(ops: OrderingOps[V], mine: V, theirs: V) -> V:
    """`mine > theirs` with null smaller than every value (never null)."""
    return ops.and_(
        ops.not_(ops.is_null(mine)),
        ops.or_(ops.is_null(theirs), ops.or_false(ops.greater(mine, theirs))),
    )


def value_equal(ops: OrderingOps[V], mine: V, theirs: V) -> V:
    """`mine == theirs` with two nulls equal (never null)."""
    both_null = ops.and_(ops.is_null(mine), ops.is_null(theirs))
    return ops.or_(both_null, ops.or_false(ops.equal(mine, theirs)))


def tuple_greater(ops: OrderingOps[V], mine: Sequence[V], theirs: Sequence[V]) -> V:
    """Row-wise `tuple(mine) > tuple(theirs)`, lexicographic, each field by `value_greater`."""
    if not mine or len(mine) != len(theirs):
        raise ValueError(f"ordering tuples of {len(mine)} and {len(theirs)} fields")
    result = value_greater(ops, mine[-1], theirs[-1])
    for left, right in zip(reversed(mine[:-1]), reversed(theirs[:-1])):
        result = ops.or_(
            value_greater(ops, left, right),
            ops.and_(value_equal(ops, left, right), result),
        )
    return result


def earlier_stays(ops: OrderingOps[V], earlier: Sequence[V], later: Sequence[V]) -> V:
    """Where the earlier (stored, base) record stays and the later (incoming, log) one is
    dropped: the earlier ordering tuple is greater. Equal tuples: the later record replaces."""
    return tuple_greater(ops, earlier, later)


def base_stays(ops: OrderingOps[V], base: Sequence[V], log: Sequence[V], log_deleted: V) -> V:
    """Where a base record stays against the log record of its key that won the log: its
    ordering tuple is greater and the log record is not a delete (Hudi 0.15 merges a delete
    payload over the base record whatever its ordering value, in snapshots and compaction).
    `log_deleted` must be non-null."""
    return ops.and_(earlier_stays(ops, base, log), ops.not_(log_deleted))


def earlier_stays_arrow(earlier: Sequence[pa.Array], later: Sequence[pa.Array]) -> pa.Array:
    """`earlier_stays` over Arrow arrays (one per ordering field)."""
    return earlier_stays(ARROW, earlier, later)


def earlier_stays_spark(earlier: Sequence[Column], later: Sequence[Column]) -> Column:
    """`earlier_stays` as a Spark Column expression (one Column per ordering field)."""
    return earlier_stays(SPARK, earlier, later)


def base_stays_arrow(
    base: Sequence[pa.Array], log: Sequence[pa.Array], log_deleted: pa.Array
) -> pa.Array:
    """`base_stays` over Arrow arrays."""
    return base_stays(ARROW, base, log, log_deleted)


def base_stays_spark(base: Sequence[Column], log: Sequence[Column], log_deleted: Column) -> Column:
    """`base_stays` as a Spark Column expression."""
    return base_stays(SPARK, base, log, log_deleted)
