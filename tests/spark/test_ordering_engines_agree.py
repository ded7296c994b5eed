"""The ordering rule of `pyhudi.merge.ordering` gives the same answer in Arrow and in Spark on
every case: nulls on either side, equal values, one and two ordering fields, log deletes; and the
Arrow merge (`merge_with_base`) and the Spark merge (`merge_event_time`) keep the same rows."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest

from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY
from pyhudi.merge.config import MergeMode
from pyhudi.merge.ordering import (
    base_stays_arrow,
    base_stays_spark,
    earlier_stays_arrow,
    earlier_stays_spark,
)
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ, merge_with_base
from pyhudi.reader.mor_spark import merge_event_time

VALUES = {"long": [None, 1, 2], "string": [None, "a", "b"]}


def _key(values: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    """Hudi's order with nulls smallest: a sortable key per ordering tuple."""
    return tuple((v is not None, v) for v in values)


def oracle_earlier_stays(earlier: tuple[Any, ...], later: tuple[Any, ...]) -> bool:
    return _key(earlier) > _key(later)


def _cases(kind: str) -> list[tuple[Any, ...]]:
    """(e0, e1, l0, l1, deleted): every combination of the kind's values and the delete flag."""
    values = VALUES[kind]
    return [(*c, d) for c in itertools.product(values, repeat=4) for d in (False, True)]


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_arrow_and_spark_ordering_agree_on_every_case(spark, kind: str) -> None:  # type: ignore[no-untyped-def]
    cases = _cases(kind)
    ddl = f"i int, e0 {kind}, e1 {kind}, l0 {kind}, l1 {kind}, d boolean"
    frame = spark.createDataFrame([(i, *c) for i, c in enumerate(cases)], ddl)
    arrow_type = pa.int64() if kind == "long" else pa.string()
    col = {
        n: pa.array([c[i] for c in cases], arrow_type)
        for i, n in enumerate(["e0", "e1", "l0", "l1"])
    }
    deleted = pa.array([c[4] for c in cases], pa.bool_())
    arrow = {
        "one": earlier_stays_arrow([col["e0"]], [col["l0"]]),
        "two": earlier_stays_arrow([col["e0"], col["e1"]], [col["l0"], col["l1"]]),
        "base_one": base_stays_arrow([col["e0"]], [col["l0"]], deleted),
        "base_two": base_stays_arrow([col["e0"], col["e1"]], [col["l0"], col["l1"]], deleted),
    }
    e0, e1, l0, l1, d = (frame[n] for n in ["e0", "e1", "l0", "l1", "d"])
    spark_columns = {
        "one": earlier_stays_spark([e0], [l0]),
        "two": earlier_stays_spark([e0, e1], [l0, l1]),
        "base_one": base_stays_spark([e0], [l0], d),
        "base_two": base_stays_spark([e0, e1], [l0, l1], d),
    }
    rows = frame.select("i", *(c.alias(n) for n, c in spark_columns.items())).orderBy("i").collect()
    for name, values in arrow.items():
        assert values.null_count == 0, name
        from_spark = [r[name] for r in rows]
        assert None not in from_spark, name
        assert from_spark == values.to_pylist(), name
    # Both follow Hudi's rule: nulls smallest, ties to the later record, a log delete wins.
    for case, one, two, base_two in zip(
        cases, arrow["one"].to_pylist(), arrow["two"].to_pylist(), arrow["base_two"].to_pylist()
    ):
        e, lt, is_delete = case[0:2], case[2:4], case[4]
        assert one == oracle_earlier_stays(e[:1], lt[:1]), case
        assert two == oracle_earlier_stays(e, lt), case
        assert base_two == (oracle_earlier_stays(e, lt) and not is_delete), case


BASE_DDL = f"{RECORD_KEY} string, {PARTITION_PATH} string, a long, b long, v string"


@pytest.mark.parametrize("ordering", [["a"], ["a", "b"]])
def test_arrow_and_spark_merges_keep_the_same_rows(spark, ordering: list[str]) -> None:  # type: ignore[no-untyped-def]
    values = [None, 1, 2]
    pairs = [
        (*c, d) for c in itertools.product(values, repeat=4) for d in (False, True)
    ]  # base a, b; log a, b; log deleted
    base_rows = [(f"k{i}", "p", c[0], c[1], f"base{i}") for i, c in enumerate(pairs)]
    log_rows = [(f"k{i}", "p", c[2], c[3], f"log{i}", c[4], False) for i, c in enumerate(pairs)]
    log_rows.append(("new", "p", None, None, "log-new", False, False))  # an insert
    base_frame = spark.createDataFrame(base_rows, BASE_DDL)
    winners_frame = spark.createDataFrame(
        log_rows, f"{BASE_DDL}, {DELETED} boolean, {NATURAL} boolean"
    )
    by_spark = merge_event_time(base_frame, winners_frame, ordering).collect()

    schema = pa.schema([(RECORD_KEY, pa.string()), (PARTITION_PATH, pa.string())])
    schema = schema.append(pa.field("a", pa.int64())).append(pa.field("b", pa.int64()))
    schema = schema.append(pa.field("v", pa.string()))
    base = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in base_rows], schema)
    flags = [
        pa.field(DELETED, pa.bool_()),
        pa.field(NATURAL, pa.bool_()),
        pa.field(SEQ, pa.int64()),
    ]
    log_schema = pa.schema([*schema, *flags])
    winners = pa.Table.from_pylist(
        [dict(zip(log_schema.names, (*r, seq))) for seq, r in enumerate(log_rows)], log_schema
    )
    by_arrow = merge_with_base(base, winners, MergeMode.EVENT_TIME_ORDERING, ",".join(ordering))

    spark_rows = {r[RECORD_KEY]: r["v"] for r in by_spark}
    arrow_rows = dict(
        zip(by_arrow.column(RECORD_KEY).to_pylist(), by_arrow.column("v").to_pylist())
    )
    assert spark_rows == arrow_rows
    for i, c in enumerate(pairs):
        stays = oracle_earlier_stays(c[0 : len(ordering)], c[2 : 2 + len(ordering)]) and not c[4]
        expected = f"base{i}" if stays else (None if c[4] else f"log{i}")
        assert arrow_rows.get(f"k{i}") == expected, c
    assert arrow_rows["new"] == "log-new"
