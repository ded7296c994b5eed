"""The write pipeline: prepared records of one write operation, from a new instant to its commit.

Routing (bootstrap, compaction, save modes) and the post-commit services are the write client's
(`pyhudi.client.write_client`); this module begins the instant, runs the operation's Spark jobs and
commits (or rolls back) the instant."""

from __future__ import annotations

import logging
import os
import posixpath
from typing import NamedTuple

import pyarrow as pa
from pyspark.sql import DataFrame

from pyhudi.codec.schema import arrow_to_avro_json, with_meta_fields
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.exceptions import (
    HudiError,
    InvalidRecordError,
    TableExistsError,
    UnsupportedOperationError,
    WriteError,
    jvm_error_summary,
)
from pyhudi.file_group.cdc_log import cdc_spec_of
from pyhudi.file_group.index_results import index_results_of
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import commit_metadata_of, refused_partitions
from pyhudi.keygen.spark import KEY_ERROR_PREFIX, record_error_detail
from pyhudi.metadata.record_index_lookup import require_record_index
from pyhudi.metadata.writer import ensure_record_index, wanted_index_results
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant
from pyhudi.model.results import CommitResult
from pyhudi.spark_env import checkpointed, release
from pyhudi.storage import Storage
from pyhudi.storage.segments import GUARD_FAILURE
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.lock import is_multi_writer
from pyhudi.writer.bucket_load import counts_pack_buckets, loads_new_buckets
from pyhudi.writer.config import WriteConfig
from pyhudi.writer.job import Outcome, WriteJob
from pyhudi.writer.operations import OPERATIONS, counts_before_instant
from pyhudi.writer.partition_check import check_and_count, check_partition_values
from pyhudi.writer.transaction import WriteTransaction

log = logging.getLogger(__name__)


def action_for(cfg: WriteConfig, ctx: TableContext) -> Action:
    """The write's action. Hudi 1.2 commits the `bulk_insert` that starts a merge-on-read table
    at version 8 or 9 as a `commit` (its row writer's), not a `deltacommit`: a compaction point,
    which the next inline compaction counts its delta commits from."""
    if cfg.operation.is_replace:
        return Action.REPLACE_COMMIT
    if not cfg.is_merge_on_read:
        return Action.COMMIT
    if (
        cfg.operation is WriteOperationType.BULK_INSERT
        and cfg.table_version >= 8
        and write_keys.ROW_WRITER.get(cfg.options)
        and not ctx.active.timeline
    ):
        return Action.COMMIT
    return Action.DELTA_COMMIT


class Checked(NamedTuple):
    """Prepared records, as `checked_records` returns them."""

    records: DataFrame
    #: Records per partition path, when the checking job counted them.
    counts: dict[str, int] | None = None
    #: The write tasks check the partition paths (`WriteTaskSpec.check_partitions`).
    in_tasks: bool = False


def commit_prepared(
    checked: Checked,
    path: str,
    cfg: WriteConfig,
    data_schema: pa.Schema,
    existing: TableContext | None,
) -> tuple[TableContext, CommitResult]:
    """Write prepared records (as `checked_records` returned them) as one instant (the caller
    holds the table lock); a table this write created is removed again when nothing got
    committed."""
    created, new_folders = False, []
    if existing is not None:
        existing.reload()  # services may have committed while this write waited for the lock
    else:
        storage, base = Storage.for_uri(path)
        new_folders = _missing_folders(storage, base)
        existing, created = _create_table(path, cfg, data_schema)
    ctx = existing
    try:
        return ctx, _run(ctx, cfg, checked, data_schema)
    except BaseException:
        # Under OCC another writer may be starting on the table this write created: keep it.
        if created and not is_multi_writer(cfg.options) and not ctx.reload().active.timeline:
            ctx.storage.delete_dir(ctx.meta_path)  # nothing was ever committed: no table
            if new_folders and not ctx.storage.list_dir(ctx.base_path):
                ctx.storage.delete_dir(ctx.base_path)  # the folder this write made (rolled back)
                _remove_empty(new_folders[1:])
        raise


def _missing_folders(storage: Storage, base: str) -> list[str]:
    """`base` when it does not exist yet and, on local storage, the missing folders above it,
    deepest first (an object store has no parent folders to leave behind)."""
    missing: list[str] = []
    folder = base
    while not storage.exists(folder):
        missing.append(folder)
        if not storage.is_local:
            break
        folder = posixpath.dirname(folder)
    return missing


def _remove_empty(folders: list[str]) -> None:
    """Remove the folders (deepest first) while each is empty: the parents a failed write made.
    `rmdir` refuses a folder something else has put a file in meanwhile."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            return


def _create_table(path: str, cfg: WriteConfig, data_schema: pa.Schema) -> tuple[TableContext, bool]:
    """Create the table; (it, True), or (the table, False) when a concurrent writer created it."""
    props = {
        **cfg.table_properties(),
        table_keys.CREATE_SCHEMA.key: arrow_to_avro_json(data_schema, cfg.table_name),
    }
    try:
        return TableContext.create(path, props), True
    except TableExistsError:
        return TableContext.open(path), False


def _run(
    ctx: TableContext, cfg: WriteConfig, checked: Checked, data_schema: pa.Schema
) -> CommitResult:
    action = action_for(cfg, ctx)
    ensure_record_index(ctx, cfg.options)
    if cfg.index_type.reads_record_index:  # before anything changes on the table
        require_record_index(ctx, "hoodie.index.type=RECORD_INDEX")
    transaction = WriteTransaction(ctx, action, cfg.operation, options=dict(cfg.options))
    instant_time = transaction.begin()
    spec = task_spec(
        ctx,
        cfg,
        data_schema,
        instant_time,
        index_results=True,
        check_partitions=checked.in_tasks,
        inflight=transaction.instant,
    )
    records = checked.records
    try:
        job = WriteJob(
            records.sparkSession, ctx, cfg, spec, records, incoming_counts=checked.counts
        )
        outcome = OPERATIONS[cfg.operation](job)
        # A task refused a partition path (wrote nothing there): the write fails, named after.
        if refused_partitions(outcome.stats):
            raise InvalidRecordError(f"{KEY_ERROR_PREFIX} {GUARD_FAILURE}")
        metadata = commit_metadata(cfg, outcome, data_schema)
        fault_point("write.after_data_files")
        transaction.commit(metadata, index_results_of(outcome.stats))
    except BaseException as err:
        undone = transaction.abort()
        translated = translate_error(err, instant_time, undone=undone)
        if translated is err:
            raise
        raise translated from err
    return CommitResult.of(ctx.uri, action, metadata, instant_time, transaction.rolled_back)


def checked_records(
    records: DataFrame, cfg: WriteConfig, existing: TableContext | None = None
) -> Checked:
    """Check the partition values of prepared records (before any table or instant exists).
    An upsert that counts its records per partition first gets them checkpointed and counted by
    the checking job (`check_and_count`). A bucket load (`existing`: the table, if any, has no
    buckets yet) gets its counts from that job too when they pack its buckets into tasks
    (`counts_pack_buckets`); nothing is checkpointed. A `bulk_insert`, a bucket load without
    counts and a bucket upsert are checked by their write tasks instead (`in_tasks`; the caller
    wraps the write in `partition_errors_named`)."""
    if loads_new_buckets(cfg, existing):
        if not counts_pack_buckets(cfg, records.sparkSession):
            return Checked(records, in_tasks=True)
        return Checked(records, check_and_count(records, cfg.keygen))
    if cfg.operation is WriteOperationType.BULK_INSERT or _bucket_upsert(cfg):
        return Checked(records, in_tasks=True)
    if not counts_before_instant(cfg):
        check_partition_values(records, cfg.keygen)
        return Checked(records)
    records = checkpointed(records)
    try:
        return Checked(records, check_and_count(records, cfg.keygen))
    except BaseException:
        release(records)
        raise


def _bucket_upsert(cfg: WriteConfig) -> bool:
    """An upsert under the bucket index: its only job is the write job (whose tasks check the
    partition paths)."""
    return cfg.operation is WriteOperationType.UPSERT and cfg.index_type.routes_by_bucket


def task_spec(
    ctx: TableContext,
    cfg: WriteConfig,
    data_schema: pa.Schema,
    instant_time: str,
    *,
    index_results: bool = False,
    check_partitions: bool = False,
    inflight: Instant | None = None,
) -> WriteTaskSpec:
    """`index_results`: the tasks return what the metadata table's indexes need (the caller hands
    `index_results_of(stats)` to the commit). `check_partitions`: the tasks refuse partition paths
    that are no usable folder (`WriteTaskSpec.check_partitions`). `inflight`: the write's
    inflight instant, which tasks still running after an abort look for (`late_tasks`)."""
    keys, ranges = wanted_index_results(ctx, cfg.options) if index_results else (False, False)
    return WriteTaskSpec(
        storage=ctx.storage,
        base_path=ctx.base_path,
        instant_time=instant_time,
        file_schema=with_meta_fields(data_schema),
        sizing=cfg.sizing,
        bloom=cfg.bloom,
        populate_meta_fields=ctx.config.populate_meta_fields,
        bootstrap_sources=ctx.bootstrap_sources(),
        collect_keys=keys,
        collect_column_ranges=ranges,
        check_partitions=check_partitions,
        inflight_file=ctx.active.instant_path(inflight) if inflight else "",
        cdc=cdc_spec_of(
            ctx.config.props, arrow_to_avro_json(data_schema, cfg.table_name), ctx.config.version
        ),
    )


def commit_metadata(cfg: WriteConfig, outcome: Outcome, data_schema: pa.Schema) -> CommitMetadata:
    extra = {"schema": arrow_to_avro_json(data_schema, cfg.table_name), **cfg.extra_metadata}
    replaced = outcome.replaced if cfg.operation.is_replace else None
    return commit_metadata_of(outcome.stats, cfg.operation, extra, replaced=replaced)


def translate_error(err: BaseException, instant_time: str, *, undone: bool = True) -> BaseException:
    """The error a failed write raises; `undone`: whether its abort removed what it wrote."""
    if isinstance(err, HudiError | KeyboardInterrupt):
        return err
    text = str(err)
    detail = record_error_detail(text)
    if detail is not None:
        left = "rolled back" if undone else "left for the next write to roll back"
        return InvalidRecordError(f"{detail}; nothing was written (instant {instant_time} {left})")
    outcome = (
        "was rolled back"
        if undone
        else "could not be undone (the next write rolls it back; until then it is invisible)"
    )
    return WriteError(
        f"write {instant_time} failed and {outcome}: {jvm_error_summary(text) or repr(err)}"
    )


def check_operation_supported(cfg: WriteConfig) -> None:
    if cfg.operation not in OPERATIONS:
        raise UnsupportedOperationError(
            f"operation {cfg.operation.value} is not supported by pyhudi.write"
        )
