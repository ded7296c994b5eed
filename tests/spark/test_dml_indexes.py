"""MERGE, UPDATE and DELETE over every index and both table types, against a Python model: rows
in base files and rows only in log files (merge-on-read with the bucket index puts new keys in
logs), each statement followed by a plain upsert of the same keys, which must find every row the
statement wrote (a row written outside its index would be written twice). And a table written
with the bucket index refuses statements that do not say so, as `pyhudi.sql` takes them from the
session's `SET hoodie.*`."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

import pyhudi
from pyhudi.exceptions import ConfigError

SCHEMA = "id string, ts long, qty int, part string"

INDEXES = {
    "SIMPLE": {"hoodie.index.type": "SIMPLE"},
    "BLOOM": {"hoodie.index.type": "BLOOM"},
    "GLOBAL_SIMPLE": {"hoodie.index.type": "GLOBAL_SIMPLE"},
    "BUCKET": {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"},
    "RECORD_INDEX": {
        "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.record.index.enable": "true",
    },
}

Model = dict[str, tuple[int, int, str]]


def _part(key: str) -> str:
    return f"p{int(key[1:]) % 2}"


def _options(table_type: str, index: dict[str, str]) -> dict[str, str]:
    return {
        "hoodie.table.name": "dml_indexes",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        **index,
    }


def _write(
    spark, path: str, options: dict[str, str], operation: str, rows: Iterable[tuple]
) -> None:  # type: ignore[no-untyped-def]
    df = spark.createDataFrame(list(rows), SCHEMA)
    pyhudi.write(df, path, {**options, "hoodie.datasource.write.operation": operation})


def _rows(spark, path: str, model: Model) -> None:  # type: ignore[no-untyped-def]
    got = [tuple(r) for r in pyhudi.read(spark, path).select("id", "ts", "qty", "part").collect()]
    assert len(got) == len({r[0] for r in got}), f"a key is in the table twice: {sorted(got)}"
    assert sorted(got) == sorted((k, *v) for k, v in model.items())


def _upsert(spark, path, options, model: Model, keys: list[str], ts: int) -> None:  # type: ignore[no-untyped-def]
    rows = [(k, ts, 7, _part(k)) for k in keys]
    _write(spark, path, options, "upsert", rows)
    model.update({k: (ts, 7, _part(k)) for k in keys})


@pytest.mark.parametrize("index", sorted(INDEXES))
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_statements_keep_every_row_in_its_index(spark, tmp_path, table_type, index):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    options = _options(table_type, INDEXES[index])
    statement_options = dict(INDEXES[index])
    table = pyhudi.HudiTable
    model: Model = {f"k{i:02d}": (1, 0, _part(f"k{i:02d}")) for i in range(10)}
    _write(spark, path, options, "bulk_insert", [(k, *v) for k, v in model.items()])
    # New keys (in log files on merge-on-read with the bucket index) and updates of base rows.
    _upsert(spark, path, options, model, ["k10", "k11", "k12", "k13", "k00", "k01"], 2)
    _rows(spark, path, model)

    source = spark.createDataFrame(
        [
            ("k10", "U", 3, 5),
            ("k11", "D", 3, 0),
            ("k02", "U", 3, 5),
            ("k03", "D", 3, 0),
            ("k20", "I", 3, 1),
            ("k21", "I", 3, 1),
            ("k22", "I", 3, 1),
        ],
        "id string, op string, ts long, qty int",
    ).selectExpr("id", "op", "ts", "qty", "concat('p', cast(substr(id, 2) as int) % 2) as part")
    (
        table(path)
        .merge(
            source, on="t.id = s.id", source_alias="s", target_alias="t", options=statement_options
        )
        .when_matched_delete(predicate="s.op = 'D'")
        .when_matched_update(set={"qty": "s.qty", "ts": "s.ts"})
        .when_not_matched_insert_all(predicate="s.op = 'I'")
        .execute()
    )
    for key in ("k11", "k03"):
        del model[key]
    model["k10"] = (3, 5, "p0")
    model["k02"] = (3, 5, "p0")
    model.update({k: (3, 1, _part(k)) for k in ("k20", "k21", "k22")})
    _rows(spark, path, model)

    table(path).update(
        set={"qty": "qty + 100"},
        predicate="id IN ('k12', 'k20', 'k04')",
        options=statement_options,
    )
    for key in ("k12", "k20", "k04"):
        ts, qty, part = model[key]
        model[key] = (ts, qty + 100, part)
    _rows(spark, path, model)

    table(path).delete("id IN ('k13', 'k21', 'k05')", options=statement_options)
    for key in ("k13", "k21", "k05"):
        del model[key]
    _rows(spark, path, model)

    # A plain upsert of keys every statement touched finds each where the statement left it.
    _upsert(spark, path, options, model, ["k10", "k12", "k20", "k21", "k22", "k23", "k13"], 5)
    _rows(spark, path, model)


def test_bucket_table_refuses_statements_that_name_no_buckets(spark, tmp_path):  # type: ignore[no-untyped-def]
    path = str(tmp_path / "t")
    options = _options("MERGE_ON_READ", INDEXES["BUCKET"])
    model: Model = {"k00": (1, 0, "p0"), "k01": (1, 0, "p1")}
    _write(spark, path, options, "bulk_insert", [(k, *v) for k, v in model.items()])
    _upsert(spark, path, options, model, ["k02"], 2)  # k02 is in a log file only
    commits = pyhudi.HudiTable(path).commits()
    table = pyhudi.HudiTable(path)
    with pytest.raises(ConfigError, match=r"hoodie\.bucket\.index\.num\.buckets"):
        table.update(set={"qty": "qty + 1"}, predicate="id = 'k02'")
    with pytest.raises(ConfigError, match=r"hoodie\.index\.type=SIMPLE"):
        table.delete("id = 'k02'", options={"hoodie.index.type": "SIMPLE"})
    rows = spark.createDataFrame([("k03", 3, 0, "p1")], SCHEMA)
    with pytest.raises(ConfigError, match="written with the bucket index"):
        pyhudi.write(rows, path, {**options, "hoodie.index.type": "BLOOM"})
    assert pyhudi.HudiTable(path).commits() == commits
    _rows(spark, path, model)

    # Spark SQL takes the bucket settings from the session, as Hudi's SQL does.
    spark.sql("SET hoodie.index.type=BUCKET")
    spark.sql("SET hoodie.bucket.index.num.buckets=2")
    try:
        pyhudi.sql(spark, f"UPDATE hudi.`{path}` SET qty = qty + 1 WHERE id = 'k02'")
        model["k02"] = (2, 8, "p0")
        _rows(spark, path, model)
        pyhudi.sql(spark, f"DELETE FROM hudi.`{path}` WHERE id = 'k02'")
        del model["k02"]
        _rows(spark, path, model)
    finally:
        spark.conf.unset("hoodie.index.type")
        spark.conf.unset("hoodie.bucket.index.num.buckets")
