"""Seeded random sequences of write operations (bulk_insert, insert, upsert, delete) on copy-on-write
and merge-on-read tables, under every index type and both payloads, checked after every step
against a small model of Hudi's semantics through `pyhudi.read` (Spark), `pyhudi.read_arrow` and
hudi-rs; and the delete operation under event-time ordering as its own cases (issue 34)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.codec.log.delete_content import decode_delete_records
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.model.enums import LogBlockType
from pyhudi.table.context import TableContext

EVENT_TIME = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
SCHEMA = "id string, part string, ts long, val string"
KEYS = [f"k{i:02d}" for i in range(14)]
COLUMNS = ["id", "part", "ts", "val"]
STEPS = 3
#: (table type, index, payload class): every index on both table types, every index and every table
#: type under both payloads (the full product costs twice the time for little more coverage).
CASES = [
    ("COPY_ON_WRITE", "BLOOM", EVENT_TIME),
    ("COPY_ON_WRITE", "SIMPLE", None),
    ("COPY_ON_WRITE", "GLOBAL_SIMPLE", EVENT_TIME),
    ("COPY_ON_WRITE", "BUCKET", None),
    ("COPY_ON_WRITE", "RECORD_INDEX", EVENT_TIME),
    ("MERGE_ON_READ", "BLOOM", None),
    ("MERGE_ON_READ", "SIMPLE", EVENT_TIME),
    ("MERGE_ON_READ", "GLOBAL_SIMPLE", None),
    ("MERGE_ON_READ", "BUCKET", EVENT_TIME),
    ("MERGE_ON_READ", "RECORD_INDEX", None),
]


def _options(table_type: str, index: str, payload: str | None) -> dict[str, str]:
    options = {
        "hoodie.table.name": "sequences",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.index.type": index,
    }
    if payload:
        options["hoodie.datasource.write.payload.class"] = payload
    if index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = "2"
    if index == "RECORD_INDEX":
        options["hoodie.metadata.record.index.enable"] = "true"
    if table_type == "MERGE_ON_READ":  # compactions apply the logs' deletes along the way
        options["hoodie.compact.inline"] = "true"
        options["hoodie.compact.inline.max.delta.commits"] = "3"
    return options


def _partition(key: str) -> str:
    """A key's partition never changes (a global index's partition moves are not modelled)."""
    return f"p{int(key[1:]) % 2}"


@dataclass
class Model:
    """What Hudi's table holds: key -> (ordering value, value)."""

    event_time: bool
    rows: dict[str, tuple[int, str]] = field(default_factory=dict)

    def apply(self, operation: str, batch: list[tuple[str, int, str]]) -> None:
        for key, ts, val in batch:
            if operation == "delete":
                # The delete operation removes every named key whatever its ordering value
                # (Hudi's EmptyHoodieRecordPayload has the natural order, which always wins).
                self.rows.pop(key, None)
            elif operation == "upsert":
                stored = self.rows.get(key)
                if self.event_time and stored is not None and stored[0] > ts:
                    continue  # a stale update: DefaultHoodieRecordPayload keeps the stored record
                self.rows[key] = (ts, val)
            else:  # inserts of keys the table does not hold
                self.rows[key] = (ts, val)

    def expected(self) -> list[tuple]:
        return sorted((k, _partition(k), ts, val) for k, (ts, val) in self.rows.items())


def _steps(rng: random.Random, model_keys: set[str], step: int) -> tuple[str, list[tuple]]:
    """One random operation and its batch: unique keys (no pre-combining ties), ordering values
    that are often older than the stored ones, inserts of keys the table does not hold."""
    absent = [k for k in KEYS if k not in model_keys]
    operation = (
        "bulk_insert"
        if step == 0
        else rng.choice(["insert", "upsert", "upsert", "delete", "delete"])
    )
    if step > 0 and rng.random() < 0.15:
        operation = "bulk_insert"
    if operation in ("insert", "bulk_insert") and not absent:
        operation = "upsert"
    pool = absent if operation in ("insert", "bulk_insert") else KEYS
    keys = rng.sample(pool, min(len(pool), rng.randint(2, 5) if step else 6))
    return operation, [(k, rng.randint(0, 20), f"s{step}") for k in keys]


def _via_data_source(table_type: str, index: str, operation: str) -> bool:
    """The operations `df.write.format("hudi")` takes (the others need a Spark join or shuffle)."""
    if index == "BUCKET":
        return table_type == "MERGE_ON_READ" and operation in ("insert", "upsert", "delete")
    return operation in ("insert", "bulk_insert")


def _write(spark, path: str, options: dict, operation: str, batch: list, source: bool) -> None:
    frame = spark.createDataFrame([(k, _partition(k), ts, v) for k, ts, v in batch], SCHEMA)
    options = {**options, "hoodie.datasource.write.operation": operation}
    if source:
        frame.write.format("hudi").options(**options).mode("append").save(path)
    else:
        pyhudi.write(frame, path, options)


def _assert_reads(spark, path: str, expected: list[tuple], context: str) -> None:
    spark_rows = sorted(tuple(r) for r in pyhudi.read(spark, path).select(*COLUMNS).collect())
    assert spark_rows == expected, f"pyhudi.read: {context}"
    arrow = pyhudi.read_arrow(path).select(COLUMNS).to_pylist()
    assert sorted(tuple(r.values()) for r in arrow) == expected, f"pyhudi.read_arrow: {context}"
    oracle = hudi_rs_table(path)
    theirs = oracle.select(COLUMNS).to_pylist() if oracle.num_columns else []
    assert sorted(tuple(r.values()) for r in theirs) == expected, f"hudi-rs: {context}"


@pytest.mark.parametrize(("table_type", "index", "payload"), CASES)
def test_random_operation_sequence_reads_as_the_model(
    spark, tmp_path, table_type: str, index: str, payload: str | None
) -> None:
    seed = CASES.index((table_type, index, payload))
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    options = _options(table_type, index, payload)
    model = Model(event_time=payload == EVENT_TIME)
    history = []
    for step in range(STEPS):
        operation, batch = _steps(rng, set(model.rows), step)
        source = step > 0 and _via_data_source(table_type, index, operation) and rng.random() < 0.5
        history.append((operation, "format(hudi)" if source else "pyhudi.write", batch))
        _write(spark, path, options, operation, batch, source)
        model.apply(operation, batch)
        _assert_reads(spark, path, model.expected(), f"seed {seed}, steps {history}")


# ---- the delete operation under event-time ordering (issue 34) -----------------------------------


@pytest.mark.parametrize(
    ("table_type", "index"),
    [
        ("COPY_ON_WRITE", "SIMPLE"),
        ("COPY_ON_WRITE", "RECORD_INDEX"),
        ("COPY_ON_WRITE", "BUCKET"),
    ],
)
def test_delete_with_event_time_ordering_removes_keys_with_older_ordering_values(
    spark, tmp_path, table_type: str, index: str
) -> None:
    """Hudi's delete operation deletes each named key, even when the delete row's ordering value
    is older than the stored record's (copy-on-write kept such keys before the fix)."""
    path = str(tmp_path / "t")
    options = _options(table_type, index, EVENT_TIME)
    options.pop("hoodie.compact.inline", None)
    _write(
        spark, path, options, "bulk_insert", [(k, 10, "s0") for k in ("k00", "k01", "k02")], False
    )
    _write(spark, path, options, "delete", [("k00", 5, "s1"), ("k02", 20, "s1")], False)

    _assert_reads(spark, path, [("k01", "p1", 10, "s0")], f"{table_type} {index}")
    table = pyhudi.HudiTable(path)
    assert table.commit_metadata(table.commits()[-1]).total("num_deletes") == 2


def test_merge_on_read_delete_blocks_carry_natural_order_and_compaction_applies_them(
    spark, tmp_path
) -> None:
    """The delete operation's log delete records carry ordering value 0 (natural order, as Hudi
    writes them), so a read and a compaction both drop the base records whatever their ordering."""
    path = str(tmp_path / "t")
    options = _options("MERGE_ON_READ", "SIMPLE", EVENT_TIME)
    options.pop("hoodie.compact.inline", None)
    _write(
        spark, path, options, "bulk_insert", [(k, 10, "s0") for k in ("k00", "k01", "k02")], False
    )
    _write(spark, path, options, "delete", [("k00", 5, "s1"), ("k02", 20, "s1")], False)

    ctx = TableContext.open(path)
    deletes = []
    for file_slice in ctx.view().latest_file_slices():
        for log in file_slice.log_files:
            with ctx.storage.open_input(ctx.path(log.relative_path)) as handle:
                for block in iter_blocks(handle):
                    if block.block_type is LogBlockType.DELETE_BLOCK:
                        deletes.extend(decode_delete_records(block.content))
    assert sorted((d.record_key, d.is_natural_order) for d in deletes) == [
        ("k00", True),
        ("k02", True),
    ]
    expected = [("k01", "p1", 10, "s0")]
    _assert_reads(spark, path, expected, "before compaction")
    pyhudi.HudiTable(path).compaction.run(spark, options)
    assert all(not s.log_files for s in TableContext.open(path).view().latest_file_slices())
    _assert_reads(spark, path, expected, "after compaction")
