"""Hudi's Spark SQL procedures (`CALL name(arg => value, ...)`), run by pyhudi's services.

Each procedure takes Hudi's parameter names (positional arguments bind in Hudi's order) and
returns a DataFrame with the columns of Hudi 0.15's result. `PROCEDURES` maps a procedure's name
to it: add an entry to add a procedure (`Procedure(parameters, run)`, `run(spark, args)`).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from pyhudi.config import clean as clean_keys
from pyhudi.config import sql as sqlkeys
from pyhudi.config.options import ConfigOption
from pyhudi.dml import inspect_procedures as inspect
from pyhudi.dml import table_procedures as tables
from pyhudi.dml.procedure_args import Args, limit, result_frame, table_context
from pyhudi.exceptions import ConfigError, InstantNotFoundError, UnsupportedOperationError
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.instant import Instant
from pyhudi.services.clustering.execute import (
    execute_clustering,
    pending_clusterings,
    schedule_clustering,
)
from pyhudi.services.namespaces import CleanService, CompactionService
from pyhudi.services.savepoint import (
    create_savepoint,
    delete_savepoint,
    restore_to_savepoint,
    rollback_to_instant,
    savepoints,
)
from pyhudi.table.context import TableContext

LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class Procedure:
    """A procedure: its parameters in Hudi's order, and what runs it."""

    parameters: tuple[str, ...]
    run: Callable[[SparkSession, Args], DataFrame]


def call_procedure(
    spark: SparkSession, name: str, positional: Sequence[Any], named: Mapping[str, Any]
) -> DataFrame:
    """Run the procedure `name` with its arguments bound to its parameters."""
    procedure = PROCEDURES.get(name.lower())
    if procedure is None:
        raise UnsupportedOperationError(
            f"procedure {name!r} is not one pyhudi runs (it runs {', '.join(sorted(PROCEDURES))})"
        )
    if len(positional) > len(procedure.parameters):
        raise ConfigError(f"{name} takes at most {len(procedure.parameters)} arguments")
    args = dict(zip(procedure.parameters, positional))
    for key, value in named.items():
        if key not in procedure.parameters:
            raise ConfigError(
                f"{name} has no parameter {key!r} (parameters: {', '.join(procedure.parameters)})"
            )
        if key in args:
            raise ConfigError(f"{name}: argument {key!r} given twice")
        args[key] = value
    return procedure.run(spark, args)


def _options(args: Args) -> dict[str, str]:
    """Hudi's `options => 'k1=v1,k2=v2'`."""
    text = args.get("options") or ""
    pairs = [p for p in str(text).split(",") if p.strip()]
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(f"options are 'key=value' pairs separated by commas; got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def _op(args: Args, default: str) -> str:
    op = str(args.get("op") or default).lower()
    if op == "execute":
        return "run"
    if op not in ("schedule", "run", "scheduleandexecute"):
        raise ConfigError(
            f"op is 'schedule', 'run' or 'scheduleAndExecute'; got {args.get('op')!r}"
        )
    return op


# ---- run_compaction -------------------------------------------------------------------------

COMPACTION_SCHEMA = "timestamp string, operation_size int, state string"


def run_compaction(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL run_compaction(op => 'schedule'|'run'|'scheduleAndExecute', table|path => ...)`."""
    op = _op(args, "")
    service = CompactionService(table_context(spark, args))
    options = _options(args)
    # As Hudi's procedure, scheduling honours the trigger (hoodie.compact.inline.trigger.strategy,
    # by default 5 delta commits since the last compaction), unlike `HudiTable.compaction`
    if op == "schedule":
        scheduled = service.schedule(options, force=False)
        return _rows(spark, COMPACTION_SCHEMA, [_compaction_row(service, scheduled, "REQUESTED")])
    if op == "scheduleandexecute":
        scheduled = service.schedule(options, force=False)
        targets = [scheduled] if scheduled is not None else []
    elif args.get("timestamp") is not None:
        targets = [i for i in service.pending() if i.time == str(args["timestamp"])]
    else:
        targets = service.pending()
    rows = [_compaction_row(service, instant, "COMPLETED") for instant in targets]
    for instant in targets:
        service.run(spark, options, instant=instant.time)
    return _rows(spark, COMPACTION_SCHEMA, rows)


def _compaction_row(service: CompactionService, instant: Instant | None, state: str) -> Any:
    if instant is None:
        return None
    return (instant.time, len(service.plan(instant).operations), state)


# ---- run_clustering -------------------------------------------------------------------------

CLUSTERING_SCHEMA = (
    "timestamp string, input_group_size int, state string, involved_partitions string"
)


def run_clustering(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL run_clustering(table|path => ..., op => ..., options => ...)`; without `op`,
    schedule a plan and execute the pending ones (as Hudi 0.15)."""
    unsupported = [k for k in ("predicate", "order") if args.get(k) is not None]
    if unsupported:
        raise UnsupportedOperationError(
            f"run_clustering's {' and '.join(unsupported)} are not supported; set the plan "
            "strategy through options (hoodie.clustering.plan.strategy.*)"
        )
    ctx = table_context(spark, args)
    op = _op(args, "scheduleandexecute")
    options = _options(args)
    if op in ("schedule", "scheduleandexecute"):
        scheduled = schedule_clustering(ctx, options)
        if op == "schedule":
            row = _clustering_row(ctx, scheduled, "REQUESTED") if scheduled else None
            return _rows(spark, CLUSTERING_SCHEMA, [row])
    pending = pending_clusterings(ctx.reload())
    rows = [_clustering_row(ctx, instant, "COMPLETED") for instant in pending]
    for instant in pending:
        execute_clustering(spark, ctx, instant, options)
    return _rows(spark, CLUSTERING_SCHEMA, rows)


def _clustering_row(ctx: TableContext, instant: Instant, state: str) -> tuple[Any, ...]:
    plan = read_requested_plan(ctx.active, instant).get("clusteringPlan") or {}
    return (instant.time, len(plan.get("inputGroups") or []), state, "*")


# ---- run_clean ------------------------------------------------------------------------------

CLEAN_SCHEMA = (
    "start_clean_time string, time_taken_in_millis long, total_files_deleted int, "
    "earliest_commit_to_retain string, bootstrap_part_metadata string, version int"
)
#: `run_clean`'s parameters and the clean options they set.
_CLEAN_ARGS: dict[str, ConfigOption[Any]] = {
    "clean_policy": clean_keys.POLICY,
    "retain_commits": clean_keys.COMMITS_RETAINED,
    "hours_retained": clean_keys.HOURS_RETAINED,
    "file_versions_retained": clean_keys.FILE_VERSIONS_RETAINED,
    "trigger_strategy": clean_keys.TRIGGER_STRATEGY,
    "trigger_max_commits": clean_keys.MAX_COMMITS,
}


def run_clean(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL run_clean(table|path => ..., retain_commits => ..., clean_policy => ..., ...)`."""
    if args.get("schedule_in_line") is False:
        raise UnsupportedOperationError("run_clean with schedule_in_line => false is not supported")
    ctx = table_context(spark, args)
    options = _options(args)
    for name, option in _CLEAN_ARGS.items():
        if args.get(name) is not None:
            options[option.key] = str(args[name])
    began = dt.datetime.now(dt.timezone.utc)
    cleaned = CleanService(ctx).run(options)
    if cleaned is None:
        return _rows(spark, CLEAN_SCHEMA, [])
    took_ms = int((dt.datetime.now(dt.timezone.utc) - began).total_seconds() * 1000)
    row = (
        str(cleaned.instant_time),
        took_ms,
        cleaned.files_deleted,
        cleaned.earliest_commit_retained,
        None,
        2,  # HoodieCleanMetadata version
    )
    return _rows(spark, CLEAN_SCHEMA, [row])


# ---- show_commits ---------------------------------------------------------------------------

COMMITS_SCHEMA = (
    "commit_time string, state_transition_time string, action string, "
    "total_bytes_written long, total_files_added long, total_files_updated long, "
    "total_partitions_written long, total_records_written long, "
    "total_update_records_written long, total_errors long"
)


def show_commits(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL show_commits(table|path => ..., limit => 10)`: the latest completed commits."""
    ctx = table_context(spark, args)
    commits = list(ctx.active.timeline.commits())[::-1][: limit(args)]
    return _rows(spark, COMMITS_SCHEMA, [_commit_row(ctx, i) for i in commits])


def _commit_row(ctx: TableContext, instant: Instant) -> tuple[Any, ...]:
    metadata = ctx.active.commit_metadata(instant)
    stats = metadata.write_stats()
    status = ctx.storage.status(ctx.active.instant_path(instant))
    changed = ""
    if status is not None and status.mtime_ns is not None:
        moment = dt.datetime.fromtimestamp(status.mtime_ns / 1e9, dt.timezone.utc)
        changed = moment.strftime("%Y%m%d%H%M%S%f")[:17]
    added = sum(1 for s in stats if s.prev_commit in (None, "null"))
    return (
        instant.time,
        changed,
        instant.action.value,
        metadata.total("total_write_bytes"),
        added,
        len(stats) - added,
        len(metadata.partition_to_write_stats),
        metadata.total("num_writes"),
        metadata.total("num_update_writes"),
        metadata.total("total_write_errors"),
    )


# ---- savepoints, restore and rollback -------------------------------------------------------


def create_savepoint_procedure(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL create_savepoint(table|path => ..., commit_time => ..., user => ..., comments =>
    ...)`: savepoint the commit (default: the latest). `create_savepoint_result` is false when
    the savepoint is refused (already savepointed, older than the cleaner's retained commits), as
    Hudi; a commit that is absent or not completed is an error."""
    ctx = table_context(spark, args)
    commit_time = str(args.get("commit_time") or "") or None
    if commit_time is not None and ctx.active.timeline.commits().find(commit_time) is None:
        raise InstantNotFoundError(
            f"create_savepoint: no completed commit {commit_time} in {ctx.uri}"
        )
    try:
        create_savepoint(
            ctx,
            commit_time,
            user=str(args.get("user") or ""),
            comment=str(args.get("comments") or ""),
        )
    except UnsupportedOperationError as refused:
        LOG.warning("create_savepoint: %s", refused)
        return _result(spark, "create_savepoint_result", False)
    return _result(spark, "create_savepoint_result", True)


def show_savepoints(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL show_savepoints(table|path => ...)`: the completed savepoints, newest first."""
    done = savepoints(table_context(spark, args))
    return _rows(spark, "savepoint_time string", [(s.instant_time,) for s in reversed(done)])


def delete_savepoint_procedure(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL delete_savepoint(table|path => ..., instant_time => 't1,t2')`: delete the savepoints
    (default: the latest); an error when the table has none or one of them is not a savepoint."""
    ctx = table_context(spark, args)
    times = _savepoint_times(ctx, args, "delete_savepoint")
    for time in times:
        delete_savepoint(ctx, time)
    return _result(spark, "delete_savepoint_result", True)


def rollback_to_savepoint(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL rollback_to_savepoint(table|path => ..., instant_time => ...)`: restore the table to
    its savepoint (default: the latest); refusals are errors naming why."""
    ctx = table_context(spark, args)
    (time,) = _savepoint_times(ctx, args, "rollback_to_savepoint", several=False)
    restore_to_savepoint(ctx, time)
    _refresh(spark, args)
    return _result(spark, "rollback_savepoint_result", True)


def rollback_to_instant_procedure(spark: SparkSession, args: Args) -> DataFrame:
    """`CALL rollback_to_instant(table => ..., instant_time => ...)`: roll back the table's latest
    commit (both arguments required, as Hudi)."""
    missing = [k for k in ("table", "instant_time") if not args.get(k)]
    if missing:
        raise ConfigError(f"rollback_to_instant needs {' and '.join(missing)}")
    rollback_to_instant(table_context(spark, args), str(args["instant_time"]))
    _refresh(spark, args)
    return _result(spark, "rollback_result", True)


def _savepoint_times(
    ctx: TableContext, args: Args, name: str, *, several: bool = True
) -> list[str]:
    """The savepoint times `instant_time` names (comma-separated when `several`), or the latest
    savepoint's; an error when the table has no savepoint."""
    done = [s.instant_time for s in savepoints(ctx)]
    if not done:
        raise InstantNotFoundError(f"{name}: {ctx.uri} has no completed savepoint")
    text = str(args.get("instant_time") or "")
    if not text:
        return [done[-1]]
    return [t.strip() for t in text.split(",")] if several else [text]


def _refresh(spark: SparkSession, args: Args) -> None:
    """Drop Spark's cached files of a catalog table after its files changed."""
    if args.get("table"):
        try:
            spark.catalog.refreshTable(str(args["table"]))
        except AnalysisException:  # a path-style name is no catalog table
            LOG.debug("no catalog table %s to refresh", args["table"])


def _result(spark: SparkSession, column: str, value: bool) -> DataFrame:
    return spark.createDataFrame([(value,)], f"{column} boolean")


def session_settings(spark: SparkSession) -> dict[str, str]:
    """The session's `hoodie.*` settings, which Hudi's procedures add to their options."""
    return {
        str(r[0]): str(r[1])
        for r in spark.sql("SET").collect()
        if str(r[0]).startswith(sqlkeys.HOODIE_PREFIX)
    }


def _rows(spark: SparkSession, schema: str, rows: Sequence[Any]) -> DataFrame:
    return result_frame(spark, schema, (r for r in rows if r is not None))


#: Procedure name -> procedure (Hudi's names and parameters).
PROCEDURES: dict[str, Procedure] = {
    "run_compaction": Procedure(("op", "table", "path", "timestamp", "options"), run_compaction),
    "run_clustering": Procedure(
        ("table", "path", "predicate", "order", "show_involved_partition", "op", "options"),
        run_clustering,
    ),
    "run_clean": Procedure(
        ("table", "path", "schedule_in_line", *_CLEAN_ARGS, "options"),
        run_clean,
    ),
    "show_commits": Procedure(("table", "limit", "path"), show_commits),
    "create_savepoint": Procedure(
        ("table", "commit_time", "user", "comments", "path"), create_savepoint_procedure
    ),
    "show_savepoints": Procedure(("table", "path"), show_savepoints),
    "delete_savepoint": Procedure(("table", "instant_time", "path"), delete_savepoint_procedure),
    "rollback_to_savepoint": Procedure(("table", "instant_time", "path"), rollback_to_savepoint),
    "rollback_to_instant": Procedure(("table", "instant_time"), rollback_to_instant_procedure),
    "show_commit_files": Procedure(
        ("table", "limit", "instant_time", "path"), inspect.show_commit_files
    ),
    "show_fsview_latest": Procedure(
        (
            "table",
            "max_instant",
            "include_max",
            "include_in_flight",
            "exclude_compaction",
            "limit",
            "path_regex",
            "partition_path",
            "merge",
            "path",
        ),
        inspect.show_fsview_latest,
    ),
    "stats_wa": Procedure(("table", "limit", "path"), inspect.stats_wa),
    "run_bootstrap": Procedure(
        (
            "table",
            "table_type",
            "bootstrap_path",
            "base_path",
            "rowkey_field",
            "base_file_format",
            "partition_path_field",
            "bootstrap_index_class",
            "selector_class",
            "key_generator_class",
            "full_bootstrap_input_provider",
            "schema_provider_class",
            "payload_class",
            "parallelism",
            "enable_hive_sync",
            "props_file_path",
            "bootstrap_overwrite",
        ),
        lambda spark, args: tables.run_bootstrap(spark, args, session_settings(spark)),
    ),
    "hive_sync": Procedure(
        (
            "table",
            "metastore_uri",
            "username",
            "password",
            "use_jdbc",
            "mode",
            "partition_fields",
            "partition_extractor_class",
            "strategy",
        ),
        lambda spark, args: tables.hive_sync(spark, args, session_settings(spark)),
    ),
    "stats_file_sizes": Procedure(
        ("table", "partition_path", "limit", "path"), inspect.stats_file_sizes
    ),
}
