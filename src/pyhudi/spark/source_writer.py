"""The write side of the `hudi` Python data source: new file groups per task, one commit."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from pyhudi.codec.schema import IS_DELETED_FIELD, PARTITION_PATH, RECORD_KEY, arrow_to_avro_json
from pyhudi.codec.schema import arrow_to_avro_json as avro_json
from pyhudi.config import index as ikeys
from pyhudi.config import table as tkeys
from pyhudi.config import write as wkeys
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.bulk_insert import PartitionBuffer, split_by_partition
from pyhudi.file_group.control_columns import DELETE
from pyhudi.file_group.identity import task_identity
from pyhudi.file_group.log_append import LogSpec
from pyhudi.index.table_layout import index_options_for_table
from pyhudi.keygen.arrow import partition_paths, record_keys
from pyhudi.keygen.arrow_check import check_arrow_partition_values
from pyhudi.merge.config import MergeMode
from pyhudi.model.enums import WriteOperationType
from pyhudi.spark.bucket_writer import BucketPlan, claims_folder, write_buckets
from pyhudi.spark.errors import short_errors
from pyhudi.spark.source_operations import (
    check_data_source_operation,
    uses_bucket_writes,
)
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.writer.column_names import conformed_schema, sanitize_mask, sanitized_batch
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.job import Outcome
from pyhudi.writer.late_tasks import undo_late_rows
from pyhudi.writer.pipeline import action_for, commit_metadata, task_spec
from pyhudi.writer.prepare import check_ordering_values, required_fields
from pyhudi.writer.schema import arrow_data_schema, merged_schema, normalize_spark_type
from pyhudi.writer.transaction import WriteTransaction


class HudiCommitMessage(WriterCommitMessage):
    def __init__(self, stats: list[dict]) -> None:
        self.stats = stats


class HudiDataSourceWriter(DataSourceArrowWriter):
    def __init__(
        self, path: str, options: dict[str, str], schema: StructType, overwrite: bool
    ) -> None:
        self.bootstrapped = wkeys.OPERATION.get(options).lower() == "bootstrap"
        if self.bootstrapped:  # no rows to write: the whole bootstrap runs here, on local threads
            from pyhudi.bootstrap import bootstrap

            bootstrap(None, path, options, mode="overwrite" if overwrite else "errorifexists")
            return
        if overwrite:
            options = {**options, wkeys.OPERATION.key: "insert_overwrite_table"}
        existing = TableContext.open(path) if TableContext.exists(path) else None
        if existing is not None:
            existing.check_writable()
            options = index_options_for_table(existing, options)
        cfg = resolve_write_config(options, existing.config if existing else None)
        check_data_source_operation(cfg)
        schema = conformed_schema(schema, cfg.options)  # Avro-valid names before a table exists
        self.mask, self.created = sanitize_mask(cfg.options), existing is None
        incoming = arrow_data_schema(
            StructType(
                [f.__class__(f.name, normalize_spark_type(f.dataType), True) for f in schema]
            )
        )
        table_schema = table_arrow_schema(existing) if existing else None
        if cfg.operation is WriteOperationType.DELETE and table_schema is not None:
            incoming = table_schema  # a delete carries keys only; its rows keep the table's schema
        data_schema, _, _ = merged_schema(
            incoming,
            table_schema,
            key_fields=tuple(required_fields(cfg)),
            fill_missing=cfg.reconcile_schema,
        )
        ctx = existing or TableContext.create(
            path,
            {
                **cfg.table_properties(),
                tkeys.CREATE_SCHEMA.key: arrow_to_avro_json(data_schema, cfg.table_name),
            },
        )
        # Spark runs this in a planning Python worker that it may stop (idle) while the write
        # runs: the heartbeat (beaten there) must not name that worker as the write's owner.
        self.transaction = WriteTransaction(
            ctx,
            action_for(cfg, ctx),
            cfg.operation,
            options=dict(cfg.options),
            heartbeat_names_owner=False,
        )
        self.instant_time = self.transaction.begin()
        self.cfg, self.data_schema = cfg, data_schema
        self.spec = task_spec(
            ctx, cfg, data_schema, self.instant_time, inflight=self.transaction.instant
        )
        try:
            self.buckets = _bucket_plan(ctx, cfg, self.spec) if uses_bucket_writes(cfg) else None
        except BaseException:  # e.g. a bucket count the table does not have: nothing written
            self.transaction.abort()
            raise

    @short_errors
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        if self.bootstrapped:
            return HudiCommitMessage([])
        pid, token = task_identity()
        if self.buckets is not None:
            tables = [
                self._prepare(pa.Table.from_batches([b]), keep_deletes=True) for b in iterator
            ]
            table = pa.concat_tables(tables) if tables else None
            return self._message(
                write_buckets(self.spec, self.buckets, table, pid, token) if table else []
            )
        buffers: dict[str, PartitionBuffer] = {}
        for batch in iterator:
            table = self._prepare(pa.Table.from_batches([batch]))
            for partition, part in split_by_partition(table):
                buffer = buffers.get(partition)
                if buffer is None:
                    buffer = buffers[partition] = PartitionBuffer(self.spec, partition, pid, token)
                buffer.add(part)
        return self._message([row for buffer in buffers.values() for row in buffer.close()])

    def _message(self, rows: list[dict]) -> WriterCommitMessage:
        """The task's stats; when the write was aborted while this task ran (Spark does not wait
        for running tasks), the base and log files it wrote are removed and the task fails."""
        undo_late_rows(self.spec, rows)
        return HudiCommitMessage(rows)

    def _prepare(self, table: pa.Table, *, keep_deletes: bool = False) -> pa.Table:
        deleted = (
            pc.fill_null(table.column(IS_DELETED_FIELD), False)
            if IS_DELETED_FIELD in table.column_names
            else pa.repeat(False, table.num_rows)
        )
        if self.cfg.operation is WriteOperationType.DELETE:
            deleted = pa.repeat(True, table.num_rows)
        table = sanitized_batch(table, self.mask)
        if not keep_deletes:
            table = table.filter(pc.invert(deleted))
        keys, partitions = (
            record_keys(table, self.cfg.keygen),
            partition_paths(table, self.cfg.keygen),
        )
        check_arrow_partition_values(table, keys, self.cfg.keygen)  # before this task writes
        check_ordering_values(table, keys, self.cfg)
        data = (
            conform(table, self.data_schema)
            if self.cfg.reconcile_schema or self.cfg.operation is WriteOperationType.DELETE
            else _cast(table, self.data_schema)
        )
        data = data.append_column(RECORD_KEY, keys).append_column(PARTITION_PATH, partitions)
        return data.append_column(DELETE, deleted) if keep_deletes else data

    @short_errors
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.bootstrapped:
            return
        stats = [row for m in messages if m is not None for row in m.stats]  # type: ignore[attr-defined]
        ctx = self.transaction.ctx.reload()
        outcome = Outcome(stats, self._replaced(ctx, stats))
        self.transaction.commit(commit_metadata(self.cfg, outcome, self.data_schema))
        ctx.storage.delete_dir(claims_folder(self.spec))

    def _replaced(self, ctx: TableContext, stats: list[dict]) -> dict[str, list[str]]:
        if self.cfg.operation is WriteOperationType.INSERT_OVERWRITE_TABLE:
            partitions = ctx.view().partition_paths()
        elif self.cfg.operation is WriteOperationType.INSERT_OVERWRITE:
            partitions = sorted({row["partition_path"] for row in stats})
        else:
            return {}
        written = {row["file_id"] for row in stats}
        replaced: dict[str, list[str]] = {}
        for group in ctx.view().file_groups(partitions=partitions):
            if group.file_id not in written:
                replaced.setdefault(group.partition_path, []).append(group.file_id)
        return replaced

    @short_errors
    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.bootstrapped:
            return

        ctx = self.transaction.ctx.reload()
        self.transaction.abort()
        ctx.storage.delete_dir(claims_folder(self.spec))
        if self.created and not ctx.reload().active.timeline:
            ctx.storage.delete_dir(ctx.meta_path)  # nothing was ever committed: leave no table


def _bucket_plan(ctx: TableContext, cfg: WriteConfig, spec) -> BucketPlan:  # type: ignore[no-untyped-def]
    from pyhudi.index.bucket import check_bucket_count, existing_buckets
    from pyhudi.writer.mor import slice_states

    if cfg.keygen.uses_complex_record_key:
        raise UnsupportedOperationError(
            "bucket writes through df.write.format('hudi') take simple record keys; use pyhudi.write"
        )
    if cfg.merge_mode is MergeMode.PARTIAL_UPDATE:  # its tasks keep one whole record per key
        raise UnsupportedOperationError(
            "bucket writes through df.write.format('hudi') do not merge a batch's records of one "
            "key partially (PartialUpdateAvroPayload); use pyhudi.write"
        )
    block_format = wkeys.LOG_DATA_BLOCK_FORMAT.get(cfg.options)
    known = existing_buckets(ctx)
    check_bucket_count(known, ikeys.BUCKET_NUM.get(cfg.options))
    return BucketPlan(
        num_buckets=ikeys.BUCKET_NUM.get(cfg.options),
        file_ids={key: fid for key, (fid, _) in known.items()},
        states=slice_states(ctx),
        log_spec=LogSpec(
            avro_json(spec.file_schema, cfg.table_name, with_meta_fields=True),
            block_format,
            table_version=ctx.config.version,
        ),
        ordering_field=cfg.ordering_field,
    )


def _cast(table: pa.Table, schema: pa.Schema) -> pa.Table:
    return conform(table.select([n for n in schema.names if n in table.column_names]), schema)
