"""The steps of `random_steps.py` applied by Apache Hudi (through the judge: its data source,
its Spark SQL, its CALL procedures) and by pyhudi (`pyhudi.write`, `HudiTable`, `pyhudi.sql`),
and the reads both engines make of a table (snapshot, read-optimized, incremental, CDC)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

import pyhudi
from pyhudi.spark.frames import arrow_frame
from tests.judge.client import Judge
from tests.judge.random_steps import (
    DeleteWhere,
    Merge,
    Row,
    Service,
    Setup,
    Step,
    Update,
    Write,
    partition_of,
)

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("part", pa.string()),
        ("ts", pa.int64()),
        ("val", pa.string()),
        ("num", pa.int64()),
        ("_hoodie_is_deleted", pa.bool_()),
    ]
)
SOURCE_DDL = (
    "id string, op string, part string, ts long, val string, num long, _hoodie_is_deleted boolean"
)
#: The columns compared: the record's key and partition path and its data (not the commit
#: time, sequence number or file name, which differ between two tables of the same rows).
COLUMNS = ("_hoodie_record_key", "_hoodie_partition_path", *SCHEMA.names)
#: Hudi's local write settings (the judge's server adds them to data source writes only).
HUDI_LOCAL = {"hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT"}
PAYLOAD_PACKAGE = "org.apache.hudi.common.model."
INLINE = {
    "compaction": {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "1"},
    "clustering": {
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "1",
    },
    "clean": {"hoodie.cleaner.commits.retained": "1"},
    "archive": {
        "hoodie.cleaner.commits.retained": "1",
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
    },
}
#: The MERGE's clauses. On a CDC table every source row without a match is inserted: Hudi 0.15
#: fails a MERGE INTO of a CDC table whose source has a row no clause takes and no target row
#: matches (HoodieMergeHandleWithChangeLog: "oldAvroSchema is null").
MERGE_CLAUSES = (
    "WHEN MATCHED AND s.op = 'U' THEN UPDATE SET *\n"
    "{partial}"
    "WHEN MATCHED AND s.op = 'D' THEN DELETE\n"
    "WHEN NOT MATCHED{insert} THEN INSERT *"
)
INSERT_CONDITION = " AND s.op = 'I'"
PARTIAL = "WHEN MATCHED AND s.op = 'P' THEN UPDATE SET val = s.val, ts = s.ts\n"


def table_options(setup: Setup) -> dict[str, str]:
    """The options every write of both engines carries (the table's and the index's)."""
    options = {
        "hoodie.table.name": "random_sequence",
        "hoodie.datasource.write.table.type": setup.table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "part",
        "hoodie.datasource.write.precombine.field": "ts",
        **index_options(setup),
    }
    if setup.version == 6:
        options["hoodie.datasource.write.payload.class"] = PAYLOAD_PACKAGE + setup.merge
    else:
        options["hoodie.write.table.version"] = str(setup.version)
        options["hoodie.write.record.merge.mode"] = setup.merge
    if setup.cdc is not None:
        options["hoodie.table.cdc.enabled"] = "true"
        options["hoodie.table.cdc.supplemental.logging.mode"] = setup.cdc
    return options


def index_options(setup: Setup) -> dict[str, str]:
    """The index and metadata table settings: statements and services get them too."""
    options = {
        "hoodie.index.type": setup.index,
        "hoodie.metadata.enable": str(setup.metadata).lower(),
    }
    if setup.index == "BUCKET":
        options["hoodie.bucket.index.num.buckets"] = str(setup.buckets)
    if setup.index == "RECORD_INDEX":
        options["hoodie.metadata.record.index.enable"] = "true"
    return options


def write_options(setup: Setup, step: Write) -> dict[str, str]:
    options = {**table_options(setup), "hoodie.datasource.write.operation": step.operation}
    for service in step.inline:
        options |= INLINE[service]
    if step.partitions:
        options["hoodie.datasource.write.partitions.to.delete"] = ",".join(step.partitions)
    return options


def service_options(setup: Setup, name: str) -> dict[str, str]:
    options = index_options(setup)
    if name in ("clean", "archive"):
        options |= INLINE[name]
    if name == "compaction":
        # Hudi's CALL schedules only after `max.delta.commits` delta commits (5 by default)
        options["hoodie.compact.inline.max.delta.commits"] = "1"
    return options


def rows_table(rows: tuple[Row, ...]) -> pa.Table:
    columns = list(zip(*rows)) if rows else [()] * 5
    ids, ts, vals, nums, deleted = columns
    return pa.table(
        [
            pa.array(ids, pa.string()),
            pa.array([partition_of(k) for k in ids], pa.string()),
            pa.array(ts, pa.int64()),
            pa.array(vals, pa.string()),
            pa.array(nums, pa.int64()),
            pa.array(deleted, pa.bool_()),
        ],
        schema=SCHEMA,
    )


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return f"'{value}'"
    return str(value)


def merge_statement(step: Merge, table: str, setup: Setup) -> str:
    values = ", ".join(
        "(" + ", ".join(_literal(v) for v in (key, op, partition_of(key), ts, val, num)) + ")"
        for op, key, ts, val, num in step.rows
    )
    source = (
        "(SELECT id, op, part, CAST(ts AS BIGINT) AS ts, val, CAST(num AS BIGINT) AS num, "
        f"false AS _hoodie_is_deleted FROM VALUES {values} AS v(id, op, part, ts, val, num)) s"
    )
    insert = INSERT_CONDITION if setup.cdc is None else ""
    clauses = MERGE_CLAUSES.format(partial="" if setup.mor else PARTIAL, insert=insert)
    return f"MERGE INTO {table} t USING {source} ON t.id = s.id\n{clauses}"


def update_statement(step: Update, table: str) -> str:
    return f"UPDATE {table} SET val = concat(val, '+{step.tag}'), num = num + 1 WHERE {step.where}"


def delete_statement(step: DeleteWhere, table: str) -> str:
    return f"DELETE FROM {table} WHERE {step.where}"


def _options_text(options: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items())


def procedure(step: Service, setup: Setup, target: str) -> str:
    """The CALL of Hudi's procedure for `step` on `target` (`table => name` or `path => ...`)."""
    options = _options_text(service_options(setup, step.name))
    if step.name == "compaction":
        return f"CALL run_compaction(op => 'scheduleAndExecute', {target}, options => '{options}')"
    if step.name == "clustering":
        return f"CALL run_clustering({target}, options => '{options}')"
    if step.name == "clean":
        return f"CALL run_clean({target}, retain_commits => 1, options => '{options}')"
    assert step.name == "archive"
    metadata = str(setup.metadata).lower()
    return (
        f"CALL archive_commits({target}, min_commits => 2, max_commits => 3, "
        f"retain_commits => 1, enable_metadata => {metadata})"
    )


# ---- Apache Hudi --------------------------------------------------------------------------------

#: A statement run with `conf` set in Hudi's session for its duration (how a Hudi user gives
#: Spark SQL statements their write settings: SET hoodie.*=...).
HUDI_SQL = """
previous = {k: spark.conf.get(k, None) for k in conf}
for k, v in conf.items():
    spark.conf.set(k, v)
try:
    result = [r.asDict(recursive=True) for r in spark.sql(statement).collect()]
finally:
    for k, v in previous.items():
        if v is None:
            spark.conf.unset(k)
        else:
            spark.conf.set(k, v)
"""
#: Hudi's reads of several tables in one request: rows (lists), or the error Hudi raised.
HUDI_READS = """
result = {}
for label, path, options, columns in reads:
    try:
        df = spark.read.format('hudi').options(**options).load(path)
        df = df.select(*columns) if columns else df
        result[label] = {'rows': [list(r) for r in df.collect()], 'columns': df.columns}
    except Exception as err:
        result[label] = {'error': (type(err).__name__ + ': ' + str(err))[:3000]}
"""


#: Avro's generated classes of Hudi's log blocks and metadata records, resolved in Hudi's JVM
#: from the thread that has the bundle's class loader. Avro caches a class lookup per generated
#: class's `MODEL$`, a failed one too; the judge loads the bundle through `spark.jars`, so the
#: first lookup from a thread without that loader (seen: a delete block of the record index read
#: in a pool thread) leaves `HoodieDeleteRecord` "not found" for the JVM's life, and every later
#: read of a delete block fails: "GenericData$Record cannot be cast to class HoodieDeleteRecord".
#: Failed lookups are dropped from the cache and the classes looked up again here.
HUDI_AVRO_CLASSES = """
jvm = spark._jvm
loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
Class = jvm.java.lang.Class
cache_field = Class.forName("org.apache.avro.specific.SpecificData").getDeclaredField("classCache")
cache_field.setAccessible(True)
dropped = []

def records(schema, seen):
    kind = schema.getType().getName()
    if kind == "record" and schema.getFullName() not in seen:
        seen.add(schema.getFullName())
        yield schema
        for field in schema.getFields():
            yield from records(field.schema(), seen)
    elif kind == "union":
        for member in schema.getTypes():
            yield from records(member, seen)
    elif kind == "array":
        yield from records(schema.getElementType(), seen)
    elif kind == "map":
        yield from records(schema.getValueType(), seen)

for name in names:
    try:
        cls = Class.forName("org.apache.hudi.avro.model." + name, True, loader)
    except Exception:
        continue
    model_field = cls.getDeclaredField("MODEL$")
    model_field.setAccessible(True)
    model = model_field.get(None)
    cache = cache_field.get(model)
    for key in list(cache.keySet()):
        if cache.get(key).getName().startswith("org.apache.avro.specific.SpecificData$"):
            cache.remove(key)
            dropped.append(key)
    for schema in records(cls.getField("SCHEMA$").get(None), set()):
        model.getClass(schema)
result = dropped
"""
AVRO_ROOTS = ["HoodieDeleteRecordList", "HoodieMetadataRecord", "HoodieCDCRecord"]


class HudiEngine:
    """Apache Hudi applying steps, through one judge."""

    def __init__(self, judge: Judge, setup: Setup) -> None:
        self.judge = judge
        self.setup = setup
        self._names: dict[str, str] = {}
        self.dropped = judge.run(HUDI_AVRO_CLASSES, names=AVRO_ROOTS)

    def _name(self, path: str) -> str:
        """The catalog table over `path` in Hudi's session (created on first use)."""
        if path not in self._names:
            name = f"random_{uuid.uuid4().hex[:10]}"
            self.judge.sql(f"CREATE TABLE {name} USING hudi LOCATION '{path}'")
            self._names[path] = name
        return self._names[path]

    def sql(self, statement: str) -> Any:
        conf = {**HUDI_LOCAL, **index_options(self.setup)}
        return self.judge.run(HUDI_SQL, statement=statement, conf=conf)

    def apply(self, path: str, step: Step) -> None:
        if isinstance(step, Write):
            self.judge.write(path, rows_table(step.rows), write_options(self.setup, step))
        elif isinstance(step, Merge):
            self.sql(merge_statement(step, self._name(path), self.setup))
        elif isinstance(step, Update):
            self.sql(update_statement(step, self._name(path)))
        elif isinstance(step, DeleteWhere):
            self.sql(delete_statement(step, self._name(path)))
        else:
            self.sql(procedure(step, self.setup, f"table => '{self._name(path)}'"))

    def reads(self, reads: list[tuple[str, str, dict[str, str], tuple[str, ...]]]) -> dict:
        """label -> {'rows': [...]} or {'error': text}, for (label, path, options, columns)."""
        return self.judge.run(HUDI_READS, reads=[list(r) for r in reads])  # type: ignore[no-any-return]


# ---- pyhudi -------------------------------------------------------------------------------------


class PyhudiEngine:
    """pyhudi applying steps."""

    def __init__(self, spark: SparkSession, setup: Setup) -> None:
        self.spark = spark
        self.setup = setup

    def apply(self, path: str, step: Step) -> None:
        if isinstance(step, Write):
            # One input partition, as Hudi's (it reads the rows from one parquet file): a
            # bulk_insert writes a file per input partition and table partition.
            frame = arrow_frame(self.spark, rows_table(step.rows)).coalesce(1)
            pyhudi.write(frame, path, write_options(self.setup, step))
            return
        statement = self._statement(step, path)
        if step.via == "sql" and statement is not None:
            self._sql(statement)
            return
        table = pyhudi.HudiTable(path)
        options = index_options(self.setup)
        if isinstance(step, Merge):
            self._merge(table, step, options)
        elif isinstance(step, Update):
            assignments = {"val": f"concat(val, '+{step.tag}')", "num": "num + 1"}
            table.update(assignments, step.where, options=options, spark=self.spark)
        elif isinstance(step, DeleteWhere):
            table.delete(step.where, options=options, spark=self.spark)
        else:
            self._service(table, step)

    def _sql(self, statement: str) -> None:
        """`pyhudi.sql` with the table's index options SET in the session for the statement, as
        Hudi's side is given them (a bucket index table needs them)."""
        conf = index_options(self.setup)
        previous = {k: self.spark.conf.get(k, None) for k in conf}
        for key, value in conf.items():
            self.spark.conf.set(key, value)
        try:
            pyhudi.sql(self.spark, statement).collect()
        finally:
            for key, value in previous.items():
                if value is None:
                    self.spark.conf.unset(key)
                else:
                    self.spark.conf.set(key, value)

    def _statement(self, step: Step, path: str) -> str | None:
        """The statement `pyhudi.sql` runs for `step` (None: pyhudi has no CALL for it)."""
        target = f"hudi.`{path}`"
        if isinstance(step, Merge):
            return merge_statement(step, target, self.setup)
        if isinstance(step, Update):
            return update_statement(step, target)
        if isinstance(step, DeleteWhere):
            return delete_statement(step, target)
        if isinstance(step, Service) and step.name != "archive":
            return procedure(step, self.setup, f"path => '{path}'")
        return None

    def _merge(self, table: pyhudi.HudiTable, step: Merge, options: dict[str, str]) -> None:
        rows = [(k, op, partition_of(k), ts, val, num, False) for op, k, ts, val, num in step.rows]
        source = self.spark.createDataFrame(rows, SOURCE_DDL)
        builder = table.merge(
            source, "t.id = s.id", source_alias="s", target_alias="t", options=options
        )
        builder = builder.when_matched_update_all(predicate="s.op = 'U'")
        if not self.setup.mor:
            builder = builder.when_matched_update(
                set={"val": "s.val", "ts": "s.ts"}, predicate="s.op = 'P'"
            )
        builder = builder.when_matched_delete(predicate="s.op = 'D'")
        condition = "s.op = 'I'" if self.setup.cdc is None else None
        builder.when_not_matched_insert_all(predicate=condition).execute()

    def _service(self, table: pyhudi.HudiTable, step: Service) -> None:
        options = service_options(self.setup, step.name)
        if step.name == "compaction":
            table.compaction.run(self.spark, options)
        elif step.name == "clustering":
            table.clustering.run(self.spark, options)
        elif step.name == "clean":
            table.clean.run(options)
        else:
            table.archive.run(options)

    def read(
        self, path: str, options: dict[str, str], columns: tuple[str, ...], arrow: bool
    ) -> dict:
        """{'rows': [...]} or {'error': text}, as `HudiEngine.reads` answers."""
        try:
            if arrow:
                table = pyhudi.read_arrow(path, options, columns=list(columns) or None)
                return {
                    "rows": [list(r.values()) for r in table.to_pylist()],
                    "columns": table.column_names,
                }
            df = pyhudi.read(self.spark, path, options)
            df = df.select(*columns) if columns else df
            return {"rows": [list(r) for r in df.collect()], "columns": df.columns}
        except Exception as err:
            return {"error": f"{type(err).__name__}: {err}"[:3000]}


def cdc_change(row: dict[str, Any], with_time: bool) -> tuple[Any, ...]:
    """A CDC query's row, comparable across engines: the images parsed, data columns only (Hudi
    prints images from CDC logs without meta columns, from data files with them)."""

    def image(text: str | None) -> tuple[tuple[str, Any], ...] | None:
        if text is None or text == "null":
            return None
        fields = json.loads(text).items()
        return tuple(sorted((k, v) for k, v in fields if k in SCHEMA.names))

    before, after = image(row["before"]), image(row["after"])
    key = dict(after or before or ()).get("id")
    return (
        (key, row["ts_ms"], row["op"], before, after)
        if with_time
        else (key, row["op"], before, after)
    )
