"""Bootstrap: turn an existing parquet/ORC table into a Hudi table (Hudi 0.14 semantics, §6).

* the target must have an empty timeline (a failed bootstrap is rolled back first);
* source partitions (leaf folders with data files) get METADATA_ONLY or FULL_RECORD by the selector;
* METADATA_ONLY partitions: one skeleton per source file at instant `00000000000001`, plus the HFile
  bootstrap index; the source files stay where they are and are never modified;
* FULL_RECORD partitions: read and bulk-inserted at instant `00000000000002`;
* the per-file work runs as Spark tasks, or on local threads where there is no Spark session.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pyhudi.bootstrap.checks import check_source
from pyhudi.bootstrap.full_record import full_record_function
from pyhudi.bootstrap.selector import select_modes
from pyhudi.bootstrap.skeleton import SKELETON_SCHEMA, skeleton_function
from pyhudi.bootstrap.source import Source, SourceJob, discover, partition_translator
from pyhudi.codec import bootstrap_index
from pyhudi.codec.schema import arrow_to_avro_json
from pyhudi.config import bootstrap as bootstrap_keys
from pyhudi.config import table as table_keys
from pyhudi.exceptions import CommitConflictError, ConfigError, TableExistsError, raised_in_task
from pyhudi.file_group.identity import local_task
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.file_group.stats import STATS_DDL, commit_metadata_of
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import BootstrapMode, WriteOperationType
from pyhudi.model.instant import FULL_BOOTSTRAP_INSTANT, METADATA_BOOTSTRAP_INSTANT, Action
from pyhudi.model.results import BootstrapResult, CommitResult
from pyhudi.spark_env import default_parallelism
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext
from pyhudi.table.rollback import rollback_failed_writes
from pyhudi.writer.config import WriteConfig, resolve_write_config
from pyhudi.writer.late_tasks import settled_batches
from pyhudi.writer.pipeline import task_spec
from pyhudi.writer.transaction import WriteTransaction


def bootstrap(
    spark: SparkSession | None,
    target: str,
    options: Mapping[str, str],
    *,
    mode: str = "errorifexists",
) -> BootstrapResult:
    """Bootstrap `hoodie.bootstrap.base.path` into a Hudi table at `target`.

    With a Spark session the per-file work runs as Spark tasks; without one (the `hudi` data source
    plans writes in a Python worker that has no session) it runs on a local thread pool.
    """
    started = time.monotonic()
    opts = {str(k): str(v) for k, v in options.items()}
    source_uri = bootstrap_keys.BASE_PATH.get(opts)
    if not source_uri:
        raise ConfigError(f"{bootstrap_keys.BASE_PATH.key} is required for the bootstrap operation")
    existing, ignored = _target(target, source_uri, mode)
    if ignored:
        return BootstrapResult(target, source_uri, ignored=True)
    source = discover(source_uri)
    modes = select_modes([p.relative_path for p in source.partitions], opts)
    translate = partition_translator(opts)
    cfg = resolve_write_config(
        {**opts, "hoodie.datasource.write.operation": "bulk_insert"},
        existing.config if existing else None,
    )
    _check_keys(source, cfg)
    metadata_parts = [
        p for p in source.partitions if modes[p.relative_path] is BootstrapMode.METADATA_ONLY
    ]
    check_source(source, metadata_parts, translate)
    target_storage, target_path = Storage.for_uri(target)
    target_existed = target_storage.exists(target_path)
    ctx = existing or _create(target, cfg, source)
    try:
        instants, skeletons, meta_rows, full_rows = _write_parts(
            spark, ctx, cfg, source, modes, translate
        )
    except BaseException:
        if existing is None:
            _remove_created_table(ctx, keep_folder=target_existed)
        raise
    return BootstrapResult(
        table_path=ctx.uri,
        source_path=source.uri,
        modes={p: m.value for p, m in modes.items()},
        skeleton_files=skeletons,
        metadata_only_rows=meta_rows,
        full_record_rows=full_rows,
        seconds=time.monotonic() - started,
        instants=tuple(instants),
        action=_action(cfg).value,
    )


def _write_parts(spark, ctx, cfg, source, modes, translate):  # type: ignore[no-untyped-def]
    """The METADATA_ONLY then the FULL_RECORD commit: (instants, skeletons, rows of each)."""
    metadata_parts = [
        p for p in source.partitions if modes[p.relative_path] is BootstrapMode.METADATA_ONLY
    ]
    full_parts = [
        p for p in source.partitions if modes[p.relative_path] is BootstrapMode.FULL_RECORD
    ]
    instants, skeletons, meta_rows, full_rows = [], 0, 0, 0
    if metadata_parts:
        jobs = _jobs(metadata_parts, translate, with_file_ids=True)
        meta_rows = _metadata_only(spark, ctx, cfg, source, jobs)
        skeletons = len(jobs)
        instants.append(METADATA_BOOTSTRAP_INSTANT)
    if full_parts:
        full_rows = _full_record(spark, ctx.reload(), cfg, source, _jobs(full_parts, translate))
        instants.append(FULL_BOOTSTRAP_INSTANT)
    return instants, skeletons, meta_rows, full_rows


def _remove_created_table(ctx: TableContext, *, keep_folder: bool) -> None:
    """A bootstrap that created the table and committed nothing leaves no table behind."""
    if ctx.reload().active.timeline.commits():
        return  # the METADATA_ONLY commit landed: the table stays, with what it holds
    ctx.storage.delete_dir(ctx.meta_path)
    if not keep_folder and not ctx.storage.list_dir(ctx.base_path):
        ctx.storage.delete_dir(ctx.base_path)


def _target(target: str, source_uri: str, mode: str) -> tuple[TableContext | None, bool]:
    """(the existing empty table or None when there is none yet, whether to ignore the bootstrap).

    Save modes as Hudi's: `ignore` skips an existing table with commits, `overwrite` deletes the
    existing table first (never when it and the source contain one another).
    """
    if not TableContext.exists(target):
        return None, False
    ctx = TableContext.open(target)
    ctx.config.check_writable(target, "bootstrap")
    if mode.lower() == "overwrite":
        _delete_table(ctx, source_uri)
        return None, False
    rollback_failed_writes(
        ctx, record=commit_rollback_to_metadata_table
    )  # a failed bootstrap leaves a pending 00000000000001/2 instant
    if ctx.reload().active.timeline.commits():
        if mode.lower() == "ignore":
            return None, True
        raise TableExistsError(
            f"{target} has commits; bootstrap needs an empty timeline. Roll back the bootstrap "
            "(restore) or delete the table first, or use a new path"
        )
    return ctx, False


def _delete_table(ctx: TableContext, source_uri: str) -> None:
    source_storage, source_path = Storage.for_uri(source_uri)
    table, source = ctx.uri.rstrip("/") + "/", source_storage.uri(source_path).rstrip("/") + "/"
    if table.startswith(source) or source.startswith(table):
        raise ConfigError(
            f"save mode overwrite would delete {ctx.uri}, which overlaps the bootstrap source "
            f"{source_uri}; bootstrap into a separate folder"
        )
    ctx.storage.delete_dir(ctx.base_path)


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
        table_keys.CREATE_SCHEMA.key: arrow_to_avro_json(source.data_schema, cfg.table_name),
        table_keys.BOOTSTRAP_BASE_PATH.key: source.uri,
        table_keys.BOOTSTRAP_INDEX_CLASS.key: bootstrap_index.INDEX_CLASS,
    }
    return TableContext.create(target, props)


def _action(cfg: WriteConfig) -> Action:
    return Action.DELTA_COMMIT if cfg.is_merge_on_read else Action.COMMIT


def _jobs(partitions, translate, *, with_file_ids: bool = False) -> list[SourceJob]:  # type: ignore[no-untyped-def]
    return [
        SourceJob(
            f.path,
            p.relative_path,
            translate(p.relative_path),
            p.hive_values,
            str(uuid.uuid4()) if with_file_ids else "",
            f.size_bytes,
            (f.mtime_ns or 0) // 1_000_000,
        )
        for p in partitions
        for f in p.files
    ]


def _metadata_only(
    spark: SparkSession | None, ctx: TableContext, cfg: WriteConfig, source: Source, jobs
) -> int:  # type: ignore[no-untyped-def]
    transaction = WriteTransaction(
        ctx, _action(cfg), WriteOperationType.BOOTSTRAP, options=dict(cfg.options)
    )
    transaction.begin(METADATA_BOOTSTRAP_INSTANT)
    assert transaction.instant is not None
    spec = WriteTaskSpec(
        ctx.storage,
        ctx.base_path,
        METADATA_BOOTSTRAP_INSTANT,
        SKELETON_SCHEMA,
        cfg.sizing,
        cfg.bloom,
        inflight_file=ctx.active.instant_path(transaction.instant),
    )
    try:
        function = skeleton_function(
            spec, source.storage, source.file_format, cfg.keygen, source.partition_columns, jobs
        )
        function = settled_batches(spec, function)  # a late task removes its files (`late_tasks`)
        rows = run_file_tasks(spark, function, _task_groups(spark, cfg, jobs))
        _write_index(ctx, source, jobs)
        transaction.commit(_metadata(rows, cfg, source.data_schema))
    except BaseException:
        transaction.abort()
        for folder in (bootstrap_index.PARTITIONS_FOLDER, bootstrap_index.FILEIDS_FOLDER):
            ctx.storage.delete(ctx.path(f"{folder}/{bootstrap_index.INDEX_FILE_NAME}"))
        raise
    return sum(int(r["num_writes"]) for r in rows)


def _task_groups(
    spark: SparkSession | None, cfg: WriteConfig, jobs: list[SourceJob]
) -> list[list[int]]:
    """`hoodie.bootstrap.parallelism` tasks, else one per core: a task costs ~0.1 s of JVM and
    Python worker CPU, so more tasks than cores is measurable overhead (bench/README.md)."""
    cores = default_parallelism(spark) if spark is not None else os.cpu_count() or 1
    return task_groups(jobs, bootstrap_keys.PARALLELISM.get(cfg.options) or cores)


def task_groups(jobs: list[SourceJob], tasks: int) -> list[list[int]]:
    """The job indices of each of at most `tasks` tasks: contiguous runs of the jobs (sorted by
    folder, so a FULL_RECORD task writes few partitions) holding about the same number of bytes."""
    slots = max(1, min(len(jobs), tasks))
    total = sum(max(job.size_bytes, 1) for job in jobs)
    groups: list[list[int]] = [[] for _ in range(slots)]
    done = 0
    for index, job in enumerate(jobs):  # a file goes to the slot its middle byte falls in
        middle = done + max(job.size_bytes, 1) / 2
        groups[min(int(middle * slots / total), slots - 1)].append(index)
        done += max(job.size_bytes, 1)
    return [g for g in groups if g]


def _write_index(ctx: TableContext, source: Source, jobs: list[SourceJob]) -> None:
    sources = [
        bootstrap_index.SourceFile(
            partition_path=job.partition_path,
            source_partition_path=job.source_folder,
            file_id=job.file_id,
            uri=source.storage.uri(job.source_path),
            size_bytes=job.size_bytes,
            modification_time_ms=job.modification_time_ms,
        )
        for job in jobs
    ]
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
    extra = {"schema": arrow_to_avro_json(schema, cfg.table_name)}
    return commit_metadata_of(rows, WriteOperationType.BOOTSTRAP, extra)


def _full_record(
    spark: SparkSession | None, ctx: TableContext, cfg: WriteConfig, source: Source, jobs
) -> int:  # type: ignore[no-untyped-def]
    schema = source.data_schema
    transaction = WriteTransaction(
        ctx, _action(cfg), WriteOperationType.BOOTSTRAP, options=dict(cfg.options)
    )
    transaction.begin(FULL_BOOTSTRAP_INSTANT)
    spec = task_spec(ctx, cfg, schema, FULL_BOOTSTRAP_INSTANT, inflight=transaction.instant)
    try:
        function = full_record_function(
            spec,
            source.storage,
            source.file_format,
            cfg.keygen,
            source.partition_columns,
            schema,
            jobs,
        )
        function = settled_batches(spec, function)  # a late task removes its files (`late_tasks`)
        rows = run_file_tasks(spark, function, _task_groups(spark, cfg, jobs))
        transaction.commit(_metadata(rows, cfg, schema))
    except BaseException:
        transaction.abort()
        raise
    return sum(int(r["num_writes"]) for r in rows)


def run_file_tasks(spark: SparkSession | None, function, groups: list[list[int]]) -> list[dict]:  # type: ignore[no-untyped-def]
    """Run `function` (a mapInArrow function over job indices) once per group of job indices."""
    if spark is not None:
        slots = spark.range(0, len(groups), 1, numPartitions=len(groups)).select(
            F.col("id").cast("int").alias("slot")
        )
        try:
            stats = slots.mapInArrow(_by_slot(function, groups), STATS_DDL).collect()
        except Exception as err:  # a task's HudiError arrives as Spark's exception: ours again
            raised = raised_in_task(err)
            if raised is None:
                raise
            raise raised from err
        return [r.asDict() for r in stats]

    def task(slot: int) -> list[dict]:
        with local_task(slot):
            return [
                row for out in function(iter([_indices(groups[slot])])) for row in out.to_pylist()
            ]

    with ThreadPoolExecutor(max_workers=min(len(groups), os.cpu_count() or 1)) as pool:
        return [row for rows in pool.map(task, range(len(groups))) for row in rows]


def _by_slot(function, groups: list[list[int]]):  # type: ignore[no-untyped-def]
    """`function` fed the job indices of the task's group instead of the group's number."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        slots = [slot for batch in batches for slot in batch.column(0).to_pylist()]
        yield from function(iter([_indices(groups[slot]) for slot in slots]))

    return run


def _indices(indices: list[int]) -> pa.RecordBatch:
    return pa.record_batch([pa.array(indices, pa.int32())], ["i"])


def run_bootstrap_write(
    df: DataFrame,
    path: str,
    options: Mapping[str, str],
    *,
    mode: str = "errorifexists",
) -> CommitResult:
    """`hoodie.datasource.write.operation=bootstrap` through `pyhudi.write` (the DataFrame is ignored)."""
    result = bootstrap(df.sparkSession, path, options, mode=mode)
    instant = result.instants[-1] if result.instants else ""
    return CommitResult(
        instant_time=instant,
        operation=WriteOperationType.BOOTSTRAP.value,
        action=result.action,
        table_path=result.table_path,
        num_writes=result.metadata_only_rows + result.full_record_rows,
        num_inserts=result.metadata_only_rows + result.full_record_rows,
        files_written=result.skeleton_files,
        services=(result.summary(),),
    )
