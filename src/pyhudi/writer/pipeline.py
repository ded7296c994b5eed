"""`pyhudi.write`: one Hudi write of a Spark DataFrame, from options to a completed instant."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame

from pyhudi.codec.schema import arrow_to_avro_json, with_meta_fields
from pyhudi.config import table as tkeys
from pyhudi.config import write as wkeys
from pyhudi.exceptions import (
    ConfigError,
    HudiError,
    InvalidRecordError,
    TableExistsError,
    UnsupportedOperationError,
    WriteError,
)
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.locks import table_lock
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.base_file import WriteTaskSpec
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.keygen import KEY_ERROR_PREFIX
from pyhudi.writer.operations import OPERATIONS, Outcome, WriteJob
from pyhudi.writer.prepare import prepare_records
from pyhudi.writer.stats import to_write_stat
from pyhudi.writer.transaction import WriteTransaction

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommitResult:
    """What a write did: its instant, operation and counts (from the commit's write stats)."""

    instant_time: str
    operation: str
    action: str
    table_path: str
    num_writes: int = 0
    num_inserts: int = 0
    num_updates: int = 0
    num_deletes: int = 0
    files_written: int = 0
    partitions_written: tuple[str, ...] = ()
    replaced_file_groups: int = 0
    rolled_back: tuple[str, ...] = field(default_factory=tuple)
    services: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(
        cls,
        ctx: TableContext,
        action: Action,
        metadata: CommitMetadata,
        instant_time: str,
        rolled: Sequence[str],
    ) -> CommitResult:
        return cls(
            instant_time=instant_time,
            operation=metadata.operation_type.value,
            action=action.value,
            table_path=ctx.uri,
            num_writes=metadata.total("num_writes"),
            num_inserts=metadata.total("num_inserts"),
            num_updates=metadata.total("num_update_writes"),
            num_deletes=metadata.total("num_deletes"),
            files_written=len(metadata.write_stats()),
            partitions_written=tuple(sorted(metadata.partition_to_write_stats)),
            replaced_file_groups=len(metadata.replaced_file_ids()),
            rolled_back=tuple(rolled),
        )


def action_for(cfg: WriteConfig) -> Action:
    if cfg.operation.is_replace:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if cfg.is_merge_on_read else Action.COMMIT


SAVE_MODES = ("append", "overwrite", "ignore", "errorifexists", "error")


def write(
    df: DataFrame, path: str, options: Mapping[str, str], *, mode: str = "append"
) -> CommitResult:
    """Write `df` into the Hudi table at `path` with Apache Hudi's option keys.

    `mode` is Spark's save mode: `append` (default), `overwrite` (`insert_overwrite_table`), `ignore`
    (do nothing when the table exists) or `errorifexists`.
    """
    options = {str(k): str(v) for k, v in options.items()}
    mode = mode.lower()
    if mode not in SAVE_MODES:
        raise ConfigError(f"unknown save mode {mode!r}; use one of {', '.join(SAVE_MODES)}")
    if wkeys.OPERATION.get(options).lower() == "bootstrap":  # save modes are the bootstrap's own
        from pyhudi.bootstrap import run_bootstrap_write

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
        options["hoodie.datasource.write.operation"] = "insert_overwrite_table"

    if existing is not None:
        existing.config.check_writable(path)
    cfg = resolve_write_config(options, existing.config if existing else None)
    if cfg.operation in (WriteOperationType.COMPACT, WriteOperationType.LOG_COMPACT):
        return _compact(df.sparkSession, path, cfg, existing)

    table_schema = table_arrow_schema(existing) if existing else None
    records, data_schema = prepare_records(df, cfg, table_schema)
    created = existing is None
    with table_lock(Storage.for_uri(path)[0].uri(Storage.for_uri(path)[1])):
        return _write_locked(records, path, cfg, data_schema, existing, created)


def _write_locked(
    records: DataFrame,
    path: str,
    cfg: WriteConfig,
    data_schema: pa.Schema,
    existing: TableContext | None,
    created: bool,
) -> CommitResult:
    if existing is not None:
        existing.reload()  # services may have committed while this write waited for the lock
    ctx = existing or TableContext.create(
        path,
        {
            **cfg.table_properties(),
            tkeys.CREATE_SCHEMA.key: arrow_to_avro_json(data_schema, cfg.table_name),
        },
    )
    try:
        return _run(ctx, cfg, records, data_schema)
    except BaseException:
        if created and not ctx.reload().active.timeline:
            ctx.storage.delete_dir(
                ctx.meta_path
            )  # nothing was ever committed: leave no table behind
        raise


def _compact(spark, path: str, cfg: WriteConfig, existing: TableContext | None) -> CommitResult:  # type: ignore[no-untyped-def]
    """`hoodie.datasource.write.operation=compact`: run pending compactions (scheduling one if none)."""
    if not cfg.is_merge_on_read or existing is None:
        table_type = existing.config.table_type.value if existing else "not a table"
        raise UnsupportedOperationError(
            f"operation {cfg.operation.value.lower()} applies to MERGE_ON_READ tables only; {path} is {table_type}"
        )
    from pyhudi.services.compaction import pending_compactions, run_compaction

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
        reloaded,
        Action.COMMIT,
        existing.active.commit_metadata(compacted),
        last.instant_time,
        [],
    )
    return dataclasses.replace(result, services=tuple(str(o) for o in outcomes))


def _run(
    ctx: TableContext, cfg: WriteConfig, records: DataFrame, data_schema: pa.Schema
) -> CommitResult:
    action = action_for(cfg)
    transaction = WriteTransaction(ctx, action, cfg.operation, options=dict(cfg.options))
    instant_time = transaction.begin()
    spec = task_spec(ctx, cfg, data_schema, instant_time)
    try:
        outcome = OPERATIONS[cfg.operation](WriteJob(records.sparkSession, ctx, cfg, spec, records))
        metadata = commit_metadata(cfg, outcome, data_schema)
        transaction.commit(metadata)
    except BaseException as err:
        transaction.abort()
        translated = translate_error(err, instant_time)
        if translated is err:
            raise
        raise translated from err
    result = CommitResult.of(ctx, action, metadata, instant_time, transaction.rolled_back)
    return run_post_commit_services(records.sparkSession, ctx, cfg, result)


def task_spec(
    ctx: TableContext, cfg: WriteConfig, data_schema: pa.Schema, instant_time: str
) -> WriteTaskSpec:
    return WriteTaskSpec(
        storage=ctx.storage,
        base_path=ctx.base_path,
        instant_time=instant_time,
        file_schema=with_meta_fields(data_schema),
        sizing=cfg.sizing,
        bloom=cfg.bloom,
        populate_meta_fields=ctx.config.populate_meta_fields,
        bootstrap_sources=ctx.bootstrap_sources(),
    )


def commit_metadata(cfg: WriteConfig, outcome: Outcome, data_schema: pa.Schema) -> CommitMetadata:
    by_partition: dict[str, list] = {}
    for row in outcome.stats:
        stat = to_write_stat(row)
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    extra = {"schema": arrow_to_avro_json(data_schema, cfg.table_name), **cfg.extra_metadata}
    replaced = None
    if cfg.operation.is_replace:
        replaced = {p: tuple(ids) for p, ids in outcome.replaced.items()}
    return CommitMetadata(
        partition_to_write_stats={p: tuple(stats) for p, stats in by_partition.items()},
        operation_type=cfg.operation,
        extra_metadata=extra,
        partition_to_replace_file_ids=replaced,
    )


def translate_error(err: BaseException, instant_time: str) -> BaseException:
    if isinstance(err, HudiError | KeyboardInterrupt):
        return err
    text = str(err)
    if KEY_ERROR_PREFIX in text:
        detail = text.split(KEY_ERROR_PREFIX, 1)[1].split("\n", 1)[0].strip().rstrip(".")
        return InvalidRecordError(
            f"{detail}; nothing was written (instant {instant_time} rolled back)"
        )
    return WriteError(
        f"write {instant_time} failed and was rolled back: {text.splitlines()[0] if text else err!r}"
    )


def run_post_commit_services(
    spark, ctx: TableContext, cfg: WriteConfig, result: CommitResult
) -> CommitResult:  # type: ignore[no-untyped-def]
    """Table services after a commit (compaction, clustering, clean, archival), inline or async."""
    from pyhudi.services.inline import run_inline_services

    return run_inline_services(spark, ctx, cfg, result)


def check_operation_supported(cfg: WriteConfig) -> None:
    if cfg.operation not in OPERATIONS:
        raise UnsupportedOperationError(
            f"operation {cfg.operation.value} is not supported by pyhudi.write"
        )


__all__ = ["CommitResult", "write"]
