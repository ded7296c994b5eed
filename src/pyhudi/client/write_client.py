"""`pyhudi.write`, Hudi's write client: one entry point that routes an operation to its pipeline.

* `hoodie.datasource.write.operation=bootstrap` goes to the bootstrap (with its own save modes);
* `compact` / `log_compact` run the compaction service;
* every other operation goes through the write pipeline (`pyhudi.writer.pipeline`), and after its
  commit the table services run (`pyhudi.client.post_commit`), under the write-scope lock
  (`pyhudi.table.lock.write_scope_lock`: the in-process table lock for a single writer; none
  under OCC, where only the conflict check and commit hold the configured lock provider).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from pyhudi.bootstrap import run_bootstrap_write
from pyhudi.client.post_commit import run_inline_services
from pyhudi.client.upgrade import upgrade_for_write
from pyhudi.config import write as write_keys
from pyhudi.exceptions import ConfigError, TableExistsError, UnsupportedOperationError
from pyhudi.index.table_layout import index_options_for_table
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.model.results import CommitResult
from pyhudi.services.compaction.execute import pending_compactions, run_compaction
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.lock import write_scope_lock
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.partition_check import partition_errors_named
from pyhudi.writer.pipeline import checked_records, commit_prepared
from pyhudi.writer.prepare import prepare_records

SAVE_MODES = ("append", "overwrite", "ignore", "errorifexists", "error")


def write(
    df: DataFrame,
    path: str,
    options: Mapping[str, str],
    *,
    mode: str = "append",
    delete_flags: bool = False,
) -> CommitResult:
    """Write `df` into the Hudi table at `path` with Apache Hudi's option keys.

    `mode` is Spark's save mode: `append` (default), `overwrite` (`insert_overwrite_table`), `ignore`
    (do nothing when the table exists) or `errorifexists`. `delete_flags`: `df` carries each
    record's delete flag (`pyhudi.writer.prepare.prepare_records`; MERGE INTO's writes).
    """
    options = {str(k): str(v) for k, v in options.items()}
    mode = mode.lower()
    if mode not in SAVE_MODES:
        raise ConfigError(f"unknown save mode {mode!r}; use one of {', '.join(SAVE_MODES)}")
    if (
        write_keys.OPERATION.get(options).lower() == "bootstrap"
    ):  # save modes are the bootstrap's own
        return run_bootstrap_write(df, path, options, mode=mode)
    existing = TableContext.open(path) if TableContext.exists(path) else None
    if (
        existing is not None
        and mode in ("ignore", "errorifexists", "error")
        and existing.active.timeline.commits()
    ):
        if mode == "ignore":
            return CommitResult(
                "",
                "NONE",
                "",
                existing.uri,
                services=("table exists: save mode ignore, nothing written",),
            )
        raise TableExistsError(
            f"a Hudi table with commits already exists at {path} (save mode {mode})"
        )
    if mode == "overwrite" and existing is not None:
        options[write_keys.OPERATION.key] = "insert_overwrite_table"

    if existing is not None:
        existing.check_writable()
        if upgrade_for_write(df.sparkSession, existing, options) is not None:
            existing = TableContext.open(path)
        options = index_options_for_table(existing, options)
    cfg = resolve_write_config(options, existing.config if existing else None)
    if cfg.operation in (WriteOperationType.COMPACT, WriteOperationType.LOG_COMPACT):
        return compact(df.sparkSession, path, cfg, existing)

    table_schema = table_arrow_schema(existing) if existing else None
    records, data_schema = prepare_records(df, cfg, table_schema, delete_flags=delete_flags)
    # Checked before the table or the instant is created (with the counts an upsert needs), or
    # by the write job of a load (its instant rolled back on a bad value, then the record named).
    checked = checked_records(records, cfg, existing)
    with (
        write_scope_lock(Storage.for_uri(path)[0].uri(Storage.for_uri(path)[1]), cfg.options),
        partition_errors_named(records, cfg.keygen),
    ):
        ctx, result = commit_prepared(checked, path, cfg, data_schema, existing)
        return run_inline_services(records.sparkSession, ctx, cfg, result)


def compact(
    spark: SparkSession, path: str, cfg: WriteConfig, existing: TableContext | None
) -> CommitResult:
    """`hoodie.datasource.write.operation=compact`: run pending compactions (scheduling one if none)."""
    if not cfg.is_merge_on_read or existing is None:
        table_type = existing.config.table_type.value if existing else "not a table"
        raise UnsupportedOperationError(
            f"operation {cfg.operation.value.lower()} applies to MERGE_ON_READ tables only; {path} is {table_type}"
        )
    outcomes = run_compaction(
        spark, existing, cfg.options, schedule=not pending_compactions(existing), force=True
    )
    if not outcomes:
        raise UnsupportedOperationError(
            f"nothing to compact in {path}: no file slice has log files"
        )
    last = outcomes[-1]
    reloaded = existing.reload()
    compacted = existing.active.timeline.commits().find(last.instant_time)
    assert compacted is not None, f"compaction {last.instant_time} is not on the timeline"
    result = CommitResult.of(
        reloaded.uri,
        Action.COMMIT,
        existing.active.commit_metadata(compacted),
        last.instant_time,
        [],
    )
    return dataclasses.replace(result, services=tuple(str(o) for o in outcomes))
