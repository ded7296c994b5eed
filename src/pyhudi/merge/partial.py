"""Partial updates (`PartialUpdateAvroPayload`, table version 6): how two versions of a record
merge field by field, in Arrow and in Spark, from one definition.

Rule (Hudi 0.15 `PartialUpdateAvroPayload` over `OverwriteNonDefaultsWithLatestAvroPayload`), for
an earlier version (stored, base, or the log's record so far) and a later one (incoming, log):
* the preferred version is the later one unless the earlier one's ordering value is greater
  (`ordering.earlier_stays`: ties go to the later one, a null ordering value is smallest; no
  ordering field: always the later one);
* each top-level data field takes the preferred version's value, or the other version's where
  that is null (a struct is one field: it is not merged inside); the meta fields (`_hoodie_*`)
  take the later version's value, or the earlier one's where that is null;
* `combine` (a version merged over a stored one: copy-on-write merge, log records over their base
  record in snapshots and compaction): a later delete (`_hoodie_is_deleted`, a delete operation,
  a log delete) deletes whatever the ordering values; a preferred earlier version that is a
  delete record stays deleted;
* `precombine` (two incoming records of one batch, two log records of one key): a preferred later
  delete record is kept as it is (not merged); otherwise the merged record is deleted when its
  `_hoodie_is_deleted` is true (a stale delete merged under a newer record is not).
The precombine of several versions folds them oldest first; it is not associative (a field
null in a newer version keeps the value of the version before it, even when a version between
them was older), so engines fold in order, never as a tree.

`FieldOps` adds to `OrderingOps` the row-wise choices the rule needs: `ARROW_FIELDS` for Arrow
arrays (log resolution, base overlay, copy-on-write merge, in-task combine, compaction) and
`spark_field_ops(functions)` for Spark Columns (batch de-duplication, the key-join merge-on-read
read), built from `pyspark.sql.functions` passed in, so this module imports no pyspark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Generic

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.schema import IS_DELETED_FIELD, META_FIELDS
from pyhudi.merge.ordering import ARROW, SPARK, OrderingOps, V, earlier_stays

if TYPE_CHECKING:
    from pyspark.sql import Column


@dataclass(frozen=True)
class FieldOps(Generic[V]):
    """An engine's ordering operations plus `coalesce(a, b)` and `where(condition, a, b)`
    (`condition` is never null)."""

    ordering: OrderingOps[V]
    coalesce: Callable[[V, V], V]
    where: Callable[[V, V, V], V]
    false: Callable[[V], V]  # a False vector shaped like its argument


ARROW_FIELDS: FieldOps[pa.Array] = FieldOps(
    ordering=ARROW,
    coalesce=lambda a, b: pc.coalesce(a, b),
    where=lambda c, a, b: pc.if_else(c, a, b),
    false=lambda like: pa.repeat(False, len(like)),
)


def spark_field_ops(functions: ModuleType) -> FieldOps[Column]:
    """The rule's operations on Spark Columns; `functions` is `pyspark.sql.functions`."""
    return FieldOps(
        ordering=SPARK,
        coalesce=functions.coalesce,
        where=lambda c, a, b: functions.when(c, a).otherwise(b),
        false=lambda like: functions.lit(False),
    )


def earlier_preferred(
    ops: FieldOps[V], earlier_ordering: Sequence[V], later_ordering: Sequence[V], like: V
) -> V:
    """Where the earlier version's values win (never null); `like` shapes the all-False result
    when there is no ordering field."""
    if not earlier_ordering:
        return ops.false(like)
    return earlier_stays(ops.ordering, earlier_ordering, later_ordering)


def merged_fields(
    ops: FieldOps[V],
    names: Sequence[str],
    earlier: Mapping[str, V],
    later: Mapping[str, V],
    prefer_earlier: V,
) -> dict[str, V]:
    """Each field of `names` merged: meta fields later-first, data fields preferred-first."""
    out: dict[str, V] = {}
    for name in names:
        old, new = earlier[name], later[name]
        if name in META_FIELDS:
            out[name] = ops.coalesce(new, old)
        else:
            out[name] = ops.where(prefer_earlier, ops.coalesce(old, new), ops.coalesce(new, old))
    return out


def combine(
    ops: FieldOps[V],
    names: Sequence[str],
    earlier: Mapping[str, V],
    later: Mapping[str, V],
    ordering: tuple[Sequence[V], Sequence[V]],
    deleted: tuple[V, V],
) -> tuple[dict[str, V], V]:
    """(merged fields, deleted) of a later version merged over a stored earlier one.
    `ordering`: (earlier, later) ordering values per field; `deleted`: (earlier, later) delete
    flags, never null."""
    earlier_deleted, later_deleted = deleted
    like = later[names[0]]
    prefer = earlier_preferred(ops, ordering[0], ordering[1], like)
    gone = ops.ordering.or_(later_deleted, ops.ordering.and_(prefer, earlier_deleted))
    return merged_fields(ops, names, earlier, later, prefer), gone


def precombine(
    ops: FieldOps[V],
    names: Sequence[str],
    earlier: Mapping[str, V],
    later: Mapping[str, V],
    ordering: tuple[Sequence[V], Sequence[V]],
    deleted: tuple[V, V],
) -> tuple[dict[str, V], V]:
    """(merged fields, deleted) of two versions of one batch or one log. `deleted`: (earlier,
    later) delete flags, never null. A version flagged deleted whose `_hoodie_is_deleted` is not
    true is an empty payload (a delete operation's record, an applied log delete): then the later
    version is taken as it is."""
    earlier_deleted, later_deleted = deleted
    o = ops.ordering
    like = later[names[0]]
    prefer = earlier_preferred(ops, ordering[0], ordering[1], like)
    empty = o.or_(
        o.and_(earlier_deleted, o.not_(_delete_record(ops, earlier, like))),
        o.and_(later_deleted, o.not_(_delete_record(ops, later, like))),
    )
    as_is = o.or_(empty, o.and_(o.not_(prefer), later_deleted))
    merged = merged_fields(ops, names, earlier, later, prefer)
    fields = {name: ops.where(as_is, later[name], merged[name]) for name in names}
    return fields, ops.where(as_is, later_deleted, _delete_record(ops, merged, like))


def _delete_record(ops: FieldOps[V], record: Mapping[str, V], like: V) -> V:
    """Where `_hoodie_is_deleted` is true (never null; no such field: all False)."""
    if IS_DELETED_FIELD not in record:
        return ops.false(like)
    return ops.ordering.or_false(record[IS_DELETED_FIELD])
