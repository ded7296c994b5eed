"""What every table service shares: picking the Spark session's service pool, committing a
service instant with marker reconciliation, and undoing a failed or crashed execution."""

from __future__ import annotations

import contextlib
import logging
import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession

from pyhudi.codec.file_names import parse_marker
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Instant, State
from pyhudi.spark_env import scheduler_pool
from pyhudi.table.context import TableContext
from pyhudi.table.locks import table_lock
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.pipeline import task_spec
from pyhudi.writer.transaction import WriteTransaction

log = logging.getLogger(__name__)
SERVICE_POOL = "pyhudi-services"


@contextlib.contextmanager
def service_pool(spark: SparkSession) -> Iterator[None]:
    """Run the enclosed Spark jobs in the services' scheduler pool (FAIR mode shares the cores)."""
    with scheduler_pool(spark, SERVICE_POOL):
        yield


def commit_service(
    ctx: TableContext, inflight: Instant, operation: WriteOperationType, metadata: CommitMetadata
) -> Instant:
    """Complete a service instant: drop files of failed task attempts, write the completed file."""
    with table_lock(ctx.uri):
        transaction = WriteTransaction(ctx, inflight.action, operation, instant=inflight)
        return transaction.commit(metadata)


def marked_data_files(ctx: TableContext, instant_time: str) -> list[str]:
    folder = ctx.marker_folder(instant_time)
    paths = []
    for status in ctx.storage.walk_files(folder):
        parsed = parse_marker(status.name)
        if parsed is None or parsed[1] is IOType.APPEND:
            continue
        relative = posixpath.relpath(posixpath.dirname(status.path), folder)
        paths.append(
            ctx.path(parsed[0] if relative == "." else posixpath.join(relative, parsed[0]))
        )
    return paths


def reset_to_requested(ctx: TableContext, instant: Instant) -> Instant:
    """Undo a failed or killed execution: delete what it wrote, keep the plan (requested) for a retry."""
    for path in marked_data_files(ctx, instant.time):
        ctx.storage.delete(path)
    ctx.storage.delete_dir(ctx.marker_folder(instant.time))
    if instant.state is State.INFLIGHT:
        return ctx.active.revert_inflight_to_requested(instant)
    return instant


@dataclass(frozen=True)
class Execution:
    """A service instant moved to inflight, with the write settings its tasks use."""

    inflight: Instant
    cfg: WriteConfig
    schema: pa.Schema
    spec: WriteTaskSpec


def begin_execution(
    ctx: TableContext, pending: Instant, options: Mapping[str, str] | None
) -> Execution:
    """Undo any earlier attempt of `pending`, move it to inflight and resolve the task settings."""
    inflight = ctx.active.transition_to_inflight(reset_to_requested(ctx, pending))
    cfg = resolve_write_config(
        {**(options or {}), "hoodie.datasource.write.operation": "upsert"}, ctx.config
    )
    schema = table_arrow_schema(ctx) or pa.schema([])
    return Execution(inflight, cfg, schema, task_spec(ctx, cfg, schema, inflight.time))
