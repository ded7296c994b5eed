"""`HudiTable.merge`, `.update` and `.delete`: SQL MERGE semantics (clauses in order, first match
wins), Hudi's ordering rule, one commit per statement, and clear errors that leave the table as
it was. (tests/judge/test_merge_into.py compares the results with Apache Hudi's.)"""

from __future__ import annotations

import pytest

import pyhudi
from pyhudi.exceptions import (
    ConfigError,
    InvalidRecordError,
    SchemaMismatchError,
    UnsupportedOperationError,
)

SCHEMA = "id string, name string, price double, ts long, part string"
SOURCE = "id string, op string, name string, price double, ts long, part string"


def _table(spark, path: str, table_type: str, **extra: str) -> pyhudi.HudiTable:  # type: ignore[no-untyped-def]
    rows = [("a", "A", 1.0, 10, "p1"), ("b", "B", 2.0, 10, "p1"), ("c", "C", 3.0, 10, "p2")]
    rows.append(("e", "E", 5.0, 10, "p2"))
    options = {
        "hoodie.table.name": "merged",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        **extra,
    }
    pyhudi.write(spark.createDataFrame(rows, SCHEMA), path, options)
    return pyhudi.HudiTable(path)


def _rows(spark, table: pyhudi.HudiTable) -> list[tuple]:  # type: ignore[no-untyped-def]
    df = pyhudi.read(spark, table.path).select("id", "name", "price", "ts", "part")
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_merge_applies_clauses_in_order_as_one_commit(spark, tmp_path, table_type):  # type: ignore[no-untyped-def]
    table = _table(spark, str(tmp_path / "t"), table_type)
    before = table.commits()
    source = spark.createDataFrame(
        [
            ("a", "U", "x", 5.0, 20, "p1"),  # partial update: name keeps "A"
            ("b", "D", "x", 0.0, 1, "p1"),  # a delete applies whatever its ordering value
            ("c", "U", "x", 7.0, 5, "p2"),  # stale (5 < 10): the row stays as it is
            ("e", "D", "x", 9.0, 30, "p2"),  # DELETE comes first: deleted, not updated
            ("f", "I", "F", 6.0, 30, "p1"),  # inserted, unassigned name null
            ("g", "X", "G", 6.0, 30, "p1"),  # no clause takes it
        ],
        SOURCE,
    )
    result = (
        table.merge(source, on="t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_delete(predicate="s.op = 'D' AND t.price > 4")
        .when_matched_update(
            set={"price": "s.price + t.price", "ts": "s.ts"}, predicate="s.op = 'U'"
        )
        .when_matched_delete(predicate="s.op = 'D'")
        .when_not_matched_insert(
            values={"id": "s.id", "price": "s.price", "ts": "s.ts", "part": "s.part"},
            predicate="s.op = 'I'",
        )
        .execute()
    )
    assert _rows(spark, table) == [
        ("a", "A", 6.0, 20, "p1"),
        ("c", "C", 3.0, 10, "p2"),
        ("f", None, 6.0, 30, "p1"),
    ]
    assert (result.num_updated, result.num_inserted, result.num_deleted) == (1, 1, 2)
    after = table.refresh().commits()
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert after[-1].time == result.instant_time


def test_merge_errors_name_the_problem_and_leave_the_table_as_it_was(spark, tmp_path):  # type: ignore[no-untyped-def]
    table = _table(spark, str(tmp_path / "t"), "COPY_ON_WRITE")
    rows, commits = _rows(spark, table), table.commits()
    source = spark.createDataFrame([("a", "U", "x", 5.0, 20, "p1")], SOURCE)
    dupes = spark.createDataFrame(
        [("a", "U", "x", 5.0, 20, "p1"), ("a", "U", "y", 6.0, 30, "p1")], SOURCE
    )
    new_keys = spark.createDataFrame(
        [("z", "U", "x", 5.0, 20, "p1"), ("z", "U", "y", 6.0, 30, "p1")], SOURCE
    )
    null_key = spark.createDataFrame([(None, "I", "x", 5.0, 20, "p1")], SOURCE)

    def merge(src, on="t.id = s.id"):  # type: ignore[no-untyped-def]
        return table.merge(src, on=on, source_alias="s", target_alias="t")

    cases = [
        (
            UnsupportedOperationError,
            "missing: id",
            merge(source, "t.part = s.part").when_matched_update_all(),
        ),
        (
            UnsupportedOperationError,
            "not one",
            merge(source, "t.id = s.id AND t.price > 0").when_matched_delete(),
        ),
        (
            UnsupportedOperationError,
            r"'ts' is neither the table's record key \(id\) nor a partition field",
            merge(source, "t.id = s.id AND t.ts = s.ts").when_matched_delete(),
        ),
        (
            ConfigError,
            "the target table has no column 'uid'",
            merge(source, "t.uid = s.id").when_matched_delete(),
        ),
        (InvalidRecordError, "id='a'", merge(dupes).when_matched_update_all()),
        (InvalidRecordError, "insert of id='z'", merge(new_keys).when_not_matched_insert_all()),
        (
            UnsupportedOperationError,
            "record key",
            merge(source).when_matched_update(set={"id": "'q'"}),
        ),
        (
            UnsupportedOperationError,
            "partition field",
            merge(source).when_matched_update(set={"part": "'p2'"}),
        ),
        (
            SchemaMismatchError,
            "no column 'name'",
            merge(source.drop("name")).when_matched_update_all(),
        ),
        (ConfigError, "not a column", merge(source).when_matched_update(set={"nope": "1"})),
        (InvalidRecordError, "null", merge(null_key).when_not_matched_insert_all()),
    ]
    for error, text, builder in cases:
        with pytest.raises(error, match=text):
            builder.execute()
    with pytest.raises(ConfigError, match="does not resolve"):
        merge(source).when_matched_update(set={"price": "s.nope"}).execute()
    with pytest.raises(ConfigError, match="does not resolve"):
        table.delete("nope > 1")
    with pytest.raises(ConfigError, match="leave it out"):
        table.update(set={"price": "0"}, options={"hoodie.datasource.write.operation": "insert"})
    assert _rows(spark, table) == rows
    assert table.refresh().commits() == commits


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_update_and_delete_are_one_commit_each(spark, tmp_path, table_type):  # type: ignore[no-untyped-def]
    table = _table(spark, str(tmp_path / "t"), table_type)
    updated = table.update(set={"price": "price * 10", "ts": "ts - 1"}, predicate="part = 'p2'")
    deleted = table.delete("price < 2")
    assert (updated.num_updated, deleted.num_deleted) == (2, 1)
    assert _rows(spark, table) == [
        ("b", "B", 2.0, 10, "p1"),
        ("c", "C", 30.0, 9, "p2"),
        ("e", "E", 50.0, 9, "p2"),
    ]
    assert [c.time for c in table.refresh().commits()][-2:] == [
        updated.instant_time,
        deleted.instant_time,
    ]
