"""`pyhudi.sql(spark, statement)`: Hudi's Spark SQL statements run by pyhudi, the rest by Spark.

The statement is parsed with sqlglot (Spark dialect). MERGE INTO, UPDATE and DELETE FROM whose
target is a Hudi table run through `HudiTable.merge` / `.update` / `.delete`; `CALL` of one of
Hudi's procedures runs the procedure (`pyhudi.dml.procedures.PROCEDURES`); `SHOW PARTITIONS`
lists a Hudi table's partitions; `CREATE TABLE ... USING hudi` with columns or a query and `DROP
TABLE` of a Hudi table are `pyhudi.dml.ddl`'s. Anything else,
statements on other tables included, is `spark.sql(statement)` as given. A Hudi table is named
by path, ``hudi.`/data/trips` ``, or by a catalog table created over one (`CREATE TABLE ...
USING hudi LOCATION ...`). Only the DataFrame API is used: it runs from a Spark Connect client.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

import sqlglot
from pyspark.sql import DataFrame, SparkSession
from sqlglot import expressions as exp

from pyhudi.codec.schema import META_FIELDS
from pyhudi.config import read as read_keys
from pyhudi.dml import statements
from pyhudi.dml.ddl import alter_table, create_table, creates_hudi_table, drop_table, is_hudi_create
from pyhudi.dml.merge import MergeBuilder, MergeResult
from pyhudi.dml.names import PATH_DATABASE, hudi_table_path
from pyhudi.dml.procedures import call_procedure, session_settings
from pyhudi.dml.target import STATEMENT_KEYS
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.reader.dataframe import read as read_frame
from pyhudi.spark.datasource import register
from pyhudi.spark_compat import has_python_data_sources, needs_pyspark_4
from pyhudi.table.context import TableContext

#: The schema of what MERGE, UPDATE and DELETE return (the counts Delta Lake's SQL returns, and
#: the instant of the commit).
RESULT_SCHEMA = (
    "num_affected_rows long, num_updated_rows long, num_deleted_rows long, "
    "num_inserted_rows long, commit_time string"
)


_state = threading.local()


def in_statement() -> bool:
    """This thread is running a statement through `run_sql` (whose own `spark.sql` calls go to
    Spark, not back here)."""
    return bool(getattr(_state, "depth", 0))


def run_sql(spark: SparkSession, statement: str) -> DataFrame:
    """Run `statement` (see the module doc)."""
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        return _run(spark, statement)
    finally:
        _state.depth -= 1


def _run(spark: SparkSession, statement: str) -> DataFrame:
    shown = _SHOW_PARTITIONS.fullmatch(statement.strip().rstrip(";").strip())
    if shown is not None:
        answer = _show_partitions(spark, shown.group("table"), shown.group("spec"))
        if answer is not None:
            return answer
    try:
        parsed = sqlglot.parse_one(statement, dialect="spark")
    except sqlglot.errors.SqlglotError:
        return spark.sql(statement)  # Spark's own statements sqlglot does not know
    if isinstance(parsed, exp.Command) and str(parsed.this).upper() == "CALL":
        return _call(spark, statement, parsed)
    if (
        isinstance(parsed, exp.Create)
        and creates_hudi_table(parsed)
        and not has_python_data_sources()
    ):
        # A catalog table of the `hudi` format is read by Spark through the data source; refused
        # before anything is written.
        raise UnsupportedOperationError(needs_pyspark_4("CREATE TABLE ... USING hudi"))
    if isinstance(parsed, exp.Create) and is_hudi_create(parsed):
        register(spark)
        return create_table(spark, statement, parsed)
    if isinstance(parsed, exp.Alter):
        altered = alter_table(spark, parsed, session_options(spark))
        if altered is not None:
            return altered
    if isinstance(parsed, exp.Insert):
        listed = _insert_with_columns(spark, parsed)
        if listed is not None:
            return spark.sql(listed)
    if isinstance(parsed, exp.Drop):
        dropped = drop_table(spark, statement, parsed)
        if dropped is not None:
            return dropped
    if isinstance(parsed, exp.Merge | exp.Update | exp.Delete):
        path = hudi_table_path(spark, parsed.this)
        if path is not None:
            register(spark)
            return _result_frame(spark, _run_dml(spark, parsed, path))
    if isinstance(parsed, exp.Query):
        rewritten = _with_hudi_views(spark, parsed)
        if rewritten is not None:
            return spark.sql(rewritten)
    return spark.sql(statement)


def _insert_with_columns(spark: SparkSession, insert: exp.Insert) -> str | None:
    """A positional `INSERT INTO|OVERWRITE t VALUES|SELECT ...` of a Hudi catalog table with its
    data columns listed: the catalog table has Hudi's meta columns first, which Hudi's SQL leaves
    out of a positional insert. None when there is nothing to add."""
    target = insert.this
    if not isinstance(target, exp.Table) or insert.args.get("by_name"):
        return None
    if target.args.get("partition") is not None or hudi_table_path(spark, target) is None:
        return None
    name = ".".join(f"`{part.name}`" for part in target.parts)
    columns = [f.name for f in spark.table(name).schema if f.name not in META_FIELDS]
    listed = exp.Schema(this=target.copy(), expressions=[exp.to_identifier(c) for c in columns])
    insert.set("this", listed)
    return insert.sql(dialect="spark")


#: `SHOW PARTITIONS name [PARTITION (k = v, ...)]`.
_SHOW_PARTITIONS = re.compile(
    r"SHOW\s+PARTITIONS\s+(?P<table>.+?)(?:\s+PARTITION\s*\((?P<spec>.*)\))?",
    re.I | re.S,
)


def _show_partitions(spark: SparkSession, name: str, spec: str | None) -> DataFrame | None:
    """Hudi's `SHOW PARTITIONS` of a Hudi table: its partition paths (those matching the
    `PARTITION (field = value, ...)` spec); None when `name` is no Hudi table."""
    try:
        table = exp.to_table(name.strip(), dialect="spark")
    except sqlglot.errors.SqlglotError:
        return None
    path = hudi_table_path(spark, table)
    if path is None:
        return None
    ctx = TableContext.open(path)
    wanted = _partition_spec(spec, ctx.config.partition_fields) if spec else {}
    paths = [
        p
        for p in ctx.view().partition_paths()
        if p and _matches(p, ctx.config.partition_fields, wanted)
    ]
    return spark.createDataFrame([(p,) for p in sorted(paths)], "partition string")


def _partition_spec(spec: str, fields: tuple[str, ...]) -> dict[str, str]:
    wanted: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = pair.partition("=")
        key, value = key.strip().strip("`"), value.strip().strip("'\"")
        if not sep or key not in fields:
            raise ConfigError(
                f"PARTITION ({spec}): {key!r} is not a partition field (fields: {', '.join(fields)})"
            )
        wanted[key] = value
    return wanted


def _matches(path: str, fields: tuple[str, ...], wanted: dict[str, str]) -> bool:
    segments = path.split("/")
    for position, name in enumerate(fields):
        if name not in wanted or position >= len(segments):
            continue
        segment = segments[position]
        value = segment.split("=", 1)[1] if segment.startswith(f"{name}=") else segment
        if value != wanted[name]:
            return False
    return True


def _with_hudi_views(spark: SparkSession, query: exp.Query) -> str | None:
    """The query with each ``hudi.`path` `` table and each Hudi table read `TIMESTAMP AS OF` /
    `VERSION AS OF` an instant replaced by a temporary view of that read (Spark cannot query a
    Python data source by path, nor ask one for a version); None when it reads no such table."""
    replaced = False
    for table in list(query.find_all(exp.Table)):
        version = table.args.get("version")
        is_path = table.db.lower() == PATH_DATABASE and table.this.args.get("quoted")
        if not is_path and version is None:
            continue
        path = hudi_table_path(spark, table)
        if path is None:
            continue
        options = {}
        if version is not None:
            instant = version.expression
            if not isinstance(instant, exp.Literal):
                raise ConfigError(
                    f"{_sql(version)}: time travel takes an instant or a timestamp literal"
                )
            options[read_keys.AS_OF_INSTANT.key] = str(instant.this)
        view = _view_name(path, options)
        read_frame(spark, path, options).createOrReplaceTempView(view)
        alias = table.args.get("alias")
        if alias is None and not is_path:  # `t.col` still names the table's columns
            alias = exp.TableAlias(this=exp.to_identifier(table.name))
        table.replace(exp.Table(this=exp.to_identifier(view), alias=alias))
        replaced = True
    return query.sql(dialect="spark") if replaced else None


def _view_name(path: str, options: dict[str, str]) -> str:
    digest = hashlib.sha1(repr((path, sorted(options.items()))).encode()).hexdigest()[:16]
    return f"__pyhudi_{digest}"


def _alias(table: exp.Expression) -> str:
    return str(table.alias or table.name)


def session_options(spark: SparkSession) -> dict[str, str]:
    """The `hoodie.*` settings of the session (`SET hoodie.index.type=BUCKET`): Hudi's SQL writes
    take them as write options, as pyhudi's statements do; the keys a statement decides itself
    (a session's `hoodie.datasource.write.operation`, say) do not apply to it, as in Hudi."""
    decided = {name for option in STATEMENT_KEYS for name in (option.key, *option.aliases)}
    return {k: v for k, v in session_settings(spark).items() if k not in decided}


def _run_dml(spark: SparkSession, parsed: exp.Expression, path: str) -> MergeResult:
    alias = _alias(parsed.this)
    where = parsed.args.get("where")
    predicate = where.this.sql(dialect="spark") if where is not None else None
    options = session_options(spark)
    if isinstance(parsed, exp.Delete):
        return statements.delete(spark, path, predicate, options, alias=alias)
    if isinstance(parsed, exp.Update):
        assignments = {_target_name(eq.this): _sql(eq.expression) for eq in parsed.expressions}
        return statements.update(spark, path, assignments, predicate, options, alias=alias)
    assert isinstance(parsed, exp.Merge)
    return _merge(spark, parsed, path, alias, options)


def _merge(
    spark: SparkSession,
    merge: exp.Merge,
    path: str,
    target_alias: str,
    options: dict[str, str],
) -> MergeResult:
    using = merge.args["using"]
    source_alias = _alias(using)
    builder = MergeBuilder(
        path,
        _source_frame(spark, using),
        _sql(merge.args["on"]),
        source_alias=source_alias,
        target_alias=target_alias,
        options=options,
    )
    whens = merge.args.get("whens")
    for when in whens.expressions if whens is not None else []:
        _add_clause(builder, when)
    return builder.execute()


def _source_frame(spark: SparkSession, using: exp.Expression) -> DataFrame:
    if isinstance(using, exp.Table):
        path = hudi_table_path(spark, using) if using.db.lower() == PATH_DATABASE else None
        if path is not None:
            return read_frame(spark, path)
        return spark.table(".".join(f"`{p.name}`" for p in using.parts))
    if isinstance(using, exp.Subquery):
        return spark.sql(_sql(using.this))
    plain = using.copy()
    plain.set("alias", None)
    return spark.sql(f"SELECT * FROM {_sql(plain)}")


def _add_clause(builder: MergeBuilder, when: exp.When) -> None:
    condition = when.args.get("condition")
    predicate = _sql(condition) if condition is not None else None
    then = when.args["then"]
    if when.args.get("source"):
        raise UnsupportedOperationError(
            "WHEN NOT MATCHED BY SOURCE is not supported (nor by Apache Hudi): a merge changes "
            "the rows its source names"
        )
    if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
        builder.when_matched_delete(predicate)
    elif isinstance(then, exp.Update):
        if len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star):
            builder.when_matched_update_all(predicate)
        else:
            assignments = {_target_name(eq.this): _sql(eq.expression) for eq in then.expressions}
            builder.when_matched_update(assignments, predicate)
    elif isinstance(then, exp.Insert):
        if isinstance(then.this, exp.Star):
            builder.when_not_matched_insert_all(predicate)
        else:
            names = [_target_name(c) for c in then.this.expressions]
            values = [_sql(v) for v in then.expression.expressions]
            if len(names) != len(values):
                raise ConfigError(
                    f"INSERT names {len(names)} columns and gives {len(values)} values"
                )
            builder.when_not_matched_insert(dict(zip(names, values)), predicate)
    else:
        raise UnsupportedOperationError(f"unsupported MERGE clause: {_sql(when)}")


def _target_name(node: exp.Expression) -> str:
    """An assigned column: its name (a qualifier, the target's alias, is dropped)."""
    return node.name if isinstance(node, exp.Column) else _sql(node)


def _sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark")


def _call(spark: SparkSession, statement: str, parsed: exp.Command) -> DataFrame:
    text = str(parsed.expression.this if isinstance(parsed.expression, exp.Literal) else "")
    try:
        call = sqlglot.parse_one(f"SELECT {text}", dialect="spark").expressions[0]
    except (sqlglot.errors.SqlglotError, IndexError):
        return spark.sql(statement)
    if not isinstance(call, exp.Anonymous):  # a qualified name: another catalog's procedure
        return spark.sql(statement)
    named: dict[str, Any] = {}
    positional: list[Any] = []
    for arg in call.expressions:
        if isinstance(arg, exp.Kwarg):
            named[arg.this.name.lower()] = _literal(arg.expression)
        else:
            positional.append(_literal(arg))
    return call_procedure(spark, str(call.this), positional, named)


def _literal(node: exp.Expression) -> Any:
    if isinstance(node, exp.Paren):
        return _literal(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        return -_literal(node.this)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = str(node.this)
        return float(text) if any(c in text for c in ".eE") else int(text)
    raise ConfigError(f"procedure arguments are literals; got {_sql(node)!r}")


def _result_frame(spark: SparkSession, result: MergeResult) -> DataFrame:
    affected = result.num_updated + result.num_deleted + result.num_inserted
    row = (
        affected,
        result.num_updated,
        result.num_deleted,
        result.num_inserted,
        str(result.instant_time),  # a plain str: PySpark 3.5 cannot unpickle str subclasses
    )
    return spark.createDataFrame([row], RESULT_SCHEMA)
