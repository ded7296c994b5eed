"""Bootstrap: turn an existing parquet/ORC table into a Hudi table (Hudi 0.14 semantics, §6).

* the target must have an empty timeline (a failed bootstrap is rolled back first);
* source partitions (leaf folders with data files) get METADATA_ONLY or FULL_RECORD by the selector;
* METADATA_ONLY partitions: one skeleton per source file at instant `00000000000001`, plus the HFile
  bootstrap index; the source files stay where they are and are never modified;
* FULL_RECORD partitions: read and bulk-inserted at instant `00000000000002`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pyhudi.bootstrap.selector import BootstrapMode, select_modes
from pyhudi.bootstrap.skeleton import SKELETON_SCHEMA, SkeletonJob, skeleton_function
from pyhudi.bootstrap.source import Source, discover
from pyhudi.codec import bootstrap_index
from pyhudi.codec.schema import arrow_to_avro_json
from pyhudi.config import bootstrap as bkeys
from pyhudi.config import table as tkeys
from pyhudi.exceptions import CommitConflictError, ConfigError, TableExistsError
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import FULL_BOOTSTRAP_INSTANT, METADATA_BOOTSTRAP_INSTANT, Action
from pyhudi.table.context import TableContext
from pyhudi.table.rollback import rollback_failed_writes
from pyhudi.writer.base_file import WriteTaskSpec
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.operations import OPERATIONS, WriteJob
from pyhudi.writer.pipeline import CommitResult, task_spec
from pyhudi.writer.prepare import prepare_records
from pyhudi.writer.schema import arrow_data_schema, normalize_spark_type
from pyhudi.writer.stats import STATS_DDL, to_write_stat
from pyhudi.writer.transaction import WriteTransaction


@dataclass(frozen=True)
class BootstrapResult:
    table_path: str
    source_path: str
    modes: Mapping[str, str] = field(default_factory=dict)
    skeleton_files: int = 0
    metadata_only_rows: int = 0
    full_record_rows: int = 0
    seconds: float = 0.0
    instants: tuple[str, ...] = ()
    ignored: bool = False

    def summary(self) -> str:
        if self.ignored:
            return f"{self.table_path} already exists: bootstrap ignored (save mode Ignore)"
        lines = [f"bootstrapped {self.source_path} into {self.table_path} in {self.seconds:.1f}s"]
        for mode in BootstrapMode:
            parts = sorted(p for p, m in self.modes.items() if m == mode.value)
            rows = (
                self.metadata_only_rows
                if mode is BootstrapMode.METADATA_ONLY
                else self.full_record_rows
            )
            lines.append(
                f"  {mode.value:13s} {len(parts):4d} partition(s), {rows} rows: {', '.join(p or '(root)' for p in parts) or '-'}"
            )
        lines.append(
            f"  skeleton files: {self.skeleton_files}; instants: {', '.join(self.instants) or '-'}"
        )
        return "\n".join(lines)


def bootstrap(
    spark: SparkSession, target: str, options: Mapping[str, str], *, mode: str = "errorifexists"
) -> BootstrapResult:
    """Bootstrap `hoodie.bootstrap.base.path` into a Hudi table at `target`."""
    started = time.monotonic()
    opts = {str(k): str(v) for k, v in options.items()}
    source_uri = bkeys.BASE_PATH.get(opts)
    if not source_uri:
        raise ConfigError(f"{bkeys.BASE_PATH.key} is required for the bootstrap operation")
    ctx = _target(target, mode)
    if ctx is None:
        return BootstrapResult(target, source_uri, ignored=True)
    source = _with_spark_types(spark, discover(source_uri))
    modes = select_modes([p.relative_path for p in source.partitions], opts)
    cfg = resolve_write_config(
        {**opts, "hoodie.datasource.write.operation": "bulk_insert"}, ctx.config if ctx else None
    )
    _check_keys(source, cfg)
    ctx = ctx or _create(target, cfg, source)
    metadata_parts = [
        p for p in source.partitions if modes[p.relative_path] is BootstrapMode.METADATA_ONLY
    ]
    full_parts = [
        p for p in source.partitions if modes[p.relative_path] is BootstrapMode.FULL_RECORD
    ]
    instants, skeletons, meta_rows, full_rows = [], 0, 0, 0
    if metadata_parts:
        skeletons, meta_rows = _metadata_only(spark, ctx, cfg, source, metadata_parts, opts)
        instants.append(METADATA_BOOTSTRAP_INSTANT)
    if full_parts:
        full_rows = _full_record(spark, ctx.reload(), cfg, source, full_parts)
        instants.append(FULL_BOOTSTRAP_INSTANT)
    return BootstrapResult(
        table_path=ctx.uri,
        source_path=source.uri,
        modes={p: m.value for p, m in modes.items()},
        skeleton_files=skeletons,
        metadata_only_rows=meta_rows,
        full_record_rows=full_rows,
        seconds=time.monotonic() - started,
        instants=tuple(instants),
    )


def _target(target: str, mode: str) -> TableContext | bool | None:  # type: ignore[return]
    """The existing (empty) table, False when there is none yet, None to ignore the bootstrap."""
    if not TableContext.exists(target):
        return False  # type: ignore[return-value]
    ctx = TableContext.open(target)
    ctx.config.check_writable(target)
    rollback_failed_writes(ctx)  # a failed bootstrap leaves a pending 00000000000001/2 instant
    if ctx.reload().active.timeline.commits():
        if mode.lower() == "ignore":
            return None
        raise TableExistsError(
            f"{target} has commits; bootstrap needs an empty timeline. Roll back the bootstrap "
            "(restore) or delete the table first, or use a new path"
        )
    return ctx


def _check_keys(source: Source, cfg: WriteConfig) -> None:
    names = set(source.data_schema.names)
    missing = [f for f in cfg.keygen.record_key_fields if f.split(".")[0] not in names]
    if missing:
        raise ConfigError(
            f"record key field(s) {missing} are not in the source (columns: {sorted(names)})"
        )


def _create(target: str, cfg: WriteConfig, source: Source) -> TableContext:
    props = {
        **cfg.table_properties(),
        tkeys.CREATE_SCHEMA.key: arrow_to_avro_json(source.data_schema, cfg.table_name),
        tkeys.BOOTSTRAP_BASE_PATH.key: source.uri,
        tkeys.BOOTSTRAP_INDEX_CLASS.key: bootstrap_index.INDEX_CLASS,
    }
    return TableContext.create(target, props)


def _action(cfg: WriteConfig) -> Action:
    return Action.DELTA_COMMIT if cfg.is_merge_on_read else Action.COMMIT


def _metadata_only(
    spark: SparkSession, ctx: TableContext, cfg: WriteConfig, source: Source, partitions, options
) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    jobs = [
        SkeletonJob(f.path, p.relative_path, p.hive_values, str(uuid.uuid4()))
        for p in partitions
        for f in p.files
    ]
    transaction = WriteTransaction(
        ctx, _action(cfg), WriteOperationType.BOOTSTRAP, options=dict(options)
    )
    transaction.begin(METADATA_BOOTSTRAP_INSTANT)
    spec = WriteTaskSpec(
        ctx.storage,
        ctx.base_path,
        METADATA_BOOTSTRAP_INSTANT,
        SKELETON_SCHEMA,
        cfg.sizing,
        cfg.bloom,
    )
    try:
        function = skeleton_function(
            spec, source.storage, source.file_format, cfg.keygen, source.partition_columns, jobs
        )
        slots = bkeys.PARALLELISM.get(options) or max(
            1, min(len(jobs), spark.sparkContext.defaultParallelism * 4)
        )
        indices = (
            spark.range(len(jobs)).select(F.col("id").cast("int").alias("i")).repartition(slots)
        )
        rows = [r.asDict() for r in indices.mapInArrow(function, STATS_DDL).collect()]
        _write_index(ctx, source, jobs)
        transaction.commit(_metadata(rows, cfg, source.data_schema))
    except BaseException:
        transaction.abort()
        for folder in (bootstrap_index.PARTITIONS_FOLDER, bootstrap_index.FILEIDS_FOLDER):
            ctx.storage.delete(ctx.path(f"{folder}/{bootstrap_index.INDEX_FILE_NAME}"))
        raise
    return len(jobs), sum(int(r["num_writes"]) for r in rows)


def _write_index(ctx: TableContext, source: Source, jobs: list[SkeletonJob]) -> None:
    sources = []
    for job in jobs:
        status = source.storage.status(job.source_path)
        folder = job.partition_path
        sources.append(
            bootstrap_index.SourceFile(
                partition_path=job.partition_path,
                source_partition_path=folder,
                file_id=job.file_id,
                uri=source.storage.uri(job.source_path),
                size_bytes=status.size_bytes if status else 0,
                modification_time_ms=(status.mtime_ns or 0) // 1_000_000 if status else 0,
            )
        )
    partitions, fileids = bootstrap_index.encode_index(sources, source.uri)
    for folder, data in (
        (bootstrap_index.PARTITIONS_FOLDER, partitions),
        (bootstrap_index.FILEIDS_FOLDER, fileids),
    ):
        path = ctx.path(f"{folder}/{bootstrap_index.INDEX_FILE_NAME}")
        try:
            ctx.storage.create_new(path, data)
        except FileExistsError as err:
            raise CommitConflictError(f"a bootstrap index already exists at {path}") from err


def _metadata(rows: list[dict], cfg: WriteConfig, schema: pa.Schema) -> CommitMetadata:
    by_partition: dict[str, list] = {}
    for row in rows:
        stat = to_write_stat(row)
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    return CommitMetadata(
        partition_to_write_stats={p: tuple(s) for p, s in by_partition.items()},
        operation_type=WriteOperationType.BOOTSTRAP,
        extra_metadata={"schema": arrow_to_avro_json(schema, cfg.table_name)},
    )


def _with_spark_types(spark: SparkSession, source: Source) -> Source:
    """The table schema as Spark reads the source (INT96 and ORC timestamps are instants, etc.).

    Arrow alone would call an INT96 column a naive timestamp; the Hudi table must say what a
    Spark reader of the source sees, so the schema comes from Spark and the files are cast to it.
    """
    first = source.file_uri(source.partitions[0].files[0])
    spark_schema = spark.read.format(source.file_format).load(first).schema
    normalized = T.StructType(
        [T.StructField(f.name, normalize_spark_type(f.dataType), True) for f in spark_schema]
    )
    return replace(source, file_schema=arrow_data_schema(normalized))


def _source_frame(spark: SparkSession, source: Source, partitions) -> DataFrame:  # type: ignore[no-untyped-def]
    frames = []
    for partition in partitions:
        uris = [source.storage.uri(f.path) for f in partition.files]
        frame = spark.read.format(source.file_format).load(uris)

        for column in source.partition_columns:
            frame = frame.withColumn(
                column, F.lit(partition.hive_values.get(column)).cast("string")
            )
        frames.append(frame)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _full_record(
    spark: SparkSession, ctx: TableContext, cfg: WriteConfig, source: Source, partitions
) -> int:  # type: ignore[no-untyped-def]
    records, schema = prepare_records(_source_frame(spark, source, partitions), cfg, None)
    transaction = WriteTransaction(
        ctx, _action(cfg), WriteOperationType.BOOTSTRAP, options=dict(cfg.options)
    )
    transaction.begin(FULL_BOOTSTRAP_INSTANT)
    try:
        outcome = OPERATIONS[WriteOperationType.BULK_INSERT](
            WriteJob(spark, ctx, cfg, task_spec(ctx, cfg, schema, FULL_BOOTSTRAP_INSTANT), records)
        )
        transaction.commit(_metadata(outcome.stats, cfg, schema))
    except BaseException:
        transaction.abort()
        raise
    return sum(int(r["num_writes"]) for r in outcome.stats)


def run_bootstrap_write(
    df: DataFrame,
    path: str,
    cfg: WriteConfig,
    existing: TableContext | None,
    *,
    mode: str = "errorifexists",
) -> CommitResult:
    """`hoodie.datasource.write.operation=bootstrap` through `pyhudi.write` (the DataFrame is ignored)."""
    result = bootstrap(df.sparkSession, path, cfg.options, mode=mode)
    instant = result.instants[-1] if result.instants else ""
    return CommitResult(
        instant_time=instant,
        operation=WriteOperationType.BOOTSTRAP.value,
        action=_action(cfg).value,
        table_path=result.table_path,
        num_writes=result.metadata_only_rows + result.full_record_rows,
        num_inserts=result.metadata_only_rows + result.full_record_rows,
        files_written=result.skeleton_files,
        services=(result.summary(),),
    )
