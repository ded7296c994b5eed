"""The public surface: `write`, `read`, and `HudiTable` for inspection and table services."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pyhudi.codec.schema import with_meta_fields as add_meta
from pyhudi.config.read import READ_PATHS
from pyhudi.config.unknown import check_service_options
from pyhudi.exceptions import InstantNotFoundError
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import TableType
from pyhudi.model.file import FileGroup, FileSlice
from pyhudi.model.instant import Instant
from pyhudi.model.results import BootstrapResult, CommitResult
from pyhudi.reader.arrow_read import read_arrow as _read_arrow
from pyhudi.reader.read_paths import is_glob, split_load_path
from pyhudi.services import savepoint
from pyhudi.services.savepoint import RestoreResult, RollbackResult, SavepointInfo
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.table.upgrade import UpgradeResult

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import Column, DataFrame, SparkSession

    from pyhudi.dml.merge import MergeBuilder, MergeResult
    from pyhudi.services.namespaces import (
        ArchivalService,
        CleanService,
        ClusteringService,
        CompactionService,
    )
    from pyhudi.spark.streaming import HudiStreamingQuery


def write(
    df: DataFrame | pd.DataFrame | pa.Table,
    path: str,
    options: Mapping[str, str],
    *,
    mode: str = "append",
) -> CommitResult:
    """Write rows into the Hudi table at `path`, with Apache Hudi's option keys.

    `df` is a Spark DataFrame, or a pandas DataFrame / `pyarrow.Table` (or any Arrow C stream)
    converted through the active SparkSession with its Arrow types kept (timestamps with a zone
    become `timestamp`, without one `timestamp_ntz`; decimals keep precision and scale).
    Anything else is an `UnsupportedInputError`.

    >>> pyhudi.write(df, "/data/trips", {"hoodie.table.name": "trips",  # doctest: +SKIP
    ...     "hoodie.datasource.write.recordkey.field": "uuid",
    ...     "hoodie.datasource.write.partitionpath.field": "city",
    ...     "hoodie.datasource.write.precombine.field": "ts",
    ...     "hoodie.datasource.write.operation": "upsert"})
    """
    from pyhudi.client.write_client import write as _write
    from pyhudi.spark.frames import spark_frame
    from pyhudi.spark.routing import register

    frame = spark_frame(df)
    register(frame.sparkSession)
    result = _write(frame, path, options, mode=mode)
    _sync(frame.sparkSession, path, options)
    return result


def upgrade_table(
    path: str,
    to_version: int = 9,
    options: Mapping[str, str] | None = None,
    *,
    spark: SparkSession | None = None,
) -> UpgradeResult:
    """Upgrade the table at `path` from version 6 to 8 or 9 (or 8 to 9) as Apache Hudi 1.2's
    `CALL upgrade_table` does: failed writes rolled back, a merge-on-read table's log files
    compacted (with `spark`, else the active session), the timeline rewritten to layout 2,
    `hoodie.properties` upgraded; crash-safe. A write asking a higher
    `hoodie.write.table.version` does the same first. See docs/table-versions.md."""
    from pyhudi.client.upgrade import upgrade_table as _upgrade

    if spark is None and TableContext.open(path).config.is_merge_on_read:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    return _upgrade(spark, path, to_version, options)


def downgrade_table(
    path: str,
    to_version: int,
    options: Mapping[str, str] | None = None,
    *,
    spark: SparkSession | None = None,
) -> UpgradeResult:
    """Downgrade the table at `path` from version 9 to 8 or 6 (or 8 to 6) as Apache Hudi 1.2's
    `CALL downgrade_table` does (failed writes rolled back, a merge-on-read table compacted with
    `spark` or the active session, the timeline back to layout 1 for 6); crash-safe. See
    docs/table-versions.md."""
    from pyhudi.client.upgrade import downgrade_table as _downgrade

    if spark is None and TableContext.open(path).config.is_merge_on_read:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    return _downgrade(spark, path, to_version, options)


def _sync(spark: SparkSession | None, path: str, options: Mapping[str, str]) -> None:
    """Hudi's meta sync after a commit (`hoodie.datasource.meta.sync.enable`)."""
    from pyhudi.spark.sync import sync_enabled, sync_to_catalog

    if spark is not None and sync_enabled(options):
        sync_to_catalog(spark, path, options)


def register(spark: SparkSession) -> None:
    """Make `spark.read.format("hudi")` / `df.write.format("hudi")` (and `USING hudi` tables) work
    in this SparkSession, yours or a Spark Connect one, with partition pruning. Idempotent.

    >>> pyhudi.register(spark)  # doctest: +SKIP
    """
    from pyhudi.spark.routing import register as _register

    _register(spark)


def read(
    spark: SparkSession,
    path: str,
    options: Mapping[str, str] | None = None,
    *,
    filters: Sequence[tuple[str, str, Any]] = (),
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """Read a Hudi table: snapshot (default), `read_optimized`, `incremental`, or `as.of.instant`.

    `filters` are `(column, op, value)` tuples; filters on partition columns prune partitions.
    `columns`: return only these columns, in this order (a METADATA_ONLY bootstrap table then
    scans its source files alone when no meta column is among them).
    """
    from pyhudi.reader.dataframe import read as _read
    from pyhudi.spark.routing import register

    register(spark)
    return _read(spark, path, options, filters=filters, columns=columns)


def read_arrow(
    path: str,
    options: Mapping[str, str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] = (),
) -> pa.Table:
    """Read a Hudi table into a `pyarrow.Table` without Spark: the same option keys, filters and
    rows as `pyhudi.read` (snapshot, `read_optimized`, `incremental`, `as.of.instant`).

    >>> pyhudi.read_arrow("/data/trips", filters=[("city", "=", "sf")]).to_pandas()  # doctest: +SKIP
    """
    if is_glob(path) or READ_PATHS.is_set(options or {}):
        path, options = split_load_path(path, options or {})
    return _read_arrow(TableContext.open(path), options, columns=columns, filters=filters)


def stream_write(
    streaming_df: DataFrame,
    path: str,
    options: Mapping[str, str],
    *,
    checkpoint_location: str,
    trigger: Mapping[str, Any] | None = None,
    query_name: str | None = None,
) -> HudiStreamingQuery:
    """Write a streaming DataFrame into a Hudi table, one commit per micro-batch, exactly once.

    >>> query = pyhudi.stream_write(stream, "/data/trips", options,  # doctest: +SKIP
    ...     checkpoint_location="/chk/trips", trigger={"availableNow": True})
    >>> query.awaitTermination()  # doctest: +SKIP
    """
    from pyhudi.spark.routing import register
    from pyhudi.spark.streaming import stream_write as _stream_write

    register(streaming_df.sparkSession)
    return _stream_write(
        streaming_df,
        path,
        options,
        checkpoint_location=checkpoint_location,
        trigger=trigger,
        query_name=query_name,
    )


def sql(spark: SparkSession, statement: str) -> DataFrame:
    """Run one SQL statement: MERGE INTO, UPDATE and DELETE FROM on a Hudi table (by path,
    hudi.`/data/trips`, or a catalog table over one) and Hudi's CALL procedures run in pyhudi;
    anything else is `spark.sql(statement)`.

    >>> pyhudi.sql(spark, "DELETE FROM hudi.`/data/trips` WHERE city = 'sf'")  # doctest: +SKIP
    """
    from pyhudi.dml.sql import run_sql

    return run_sql(spark, statement)


def _session(spark: SparkSession | None) -> SparkSession:
    from pyhudi.spark.frames import active_session

    return spark if spark is not None else active_session()


class HudiTable:
    """A Hudi table on storage: inspect its timeline, file groups and schema; run table services."""

    def __init__(self, path: str) -> None:
        """Open the table at `path` (a `TableNotFoundError` when there is none)."""
        self._ctx = TableContext.open(path)

    @classmethod
    def open(cls, path: str) -> HudiTable:
        """The same as `HudiTable(path)`."""
        return cls(path)

    @classmethod
    def bootstrap(
        cls,
        source: str,
        target: str,
        options: Mapping[str, str],
        *,
        spark: SparkSession | None = None,
        mode: str = "errorifexists",
    ) -> tuple[HudiTable | None, BootstrapResult]:
        """Bootstrap the parquet/ORC table at `source` into a Hudi table at `target`.

        `options` are Hudi's (`hoodie.bootstrap.*`, key generator, table type, ...). Without a Spark
        session the per-file work runs on local threads. Returns the table (None when save mode
        `ignore` left an existing table alone) and the summary of what went which way.
        """
        from pyhudi.bootstrap import bootstrap

        result = bootstrap(
            spark, target, {**options, "hoodie.bootstrap.base.path": source}, mode=mode
        )
        if not result.ignored:
            _sync(spark, target, options)
        return (None if result.ignored else cls(target)), result

    def refresh(self) -> HudiTable:
        """Load the timeline and `hoodie.properties` again (commits made since opening)."""
        self._ctx.reload()
        return self

    @property
    def path(self) -> str:
        """The table's base path (a URI for object stores)."""
        return self._ctx.uri

    @property
    def name(self) -> str:
        """`hoodie.table.name`."""
        return self._ctx.config.name

    @property
    def table_type(self) -> TableType:
        """`TableType.COPY_ON_WRITE` or `TableType.MERGE_ON_READ` (a `str` enum)."""
        return self._ctx.config.table_type

    @property
    def is_merge_on_read(self) -> bool:
        """True for a merge-on-read table."""
        return self._ctx.config.is_merge_on_read

    @property
    def properties(self) -> dict[str, str]:
        """`hoodie.properties`, as a copy."""
        return dict(self._ctx.config.props)

    @property
    def timeline(self) -> list[Instant]:
        """Every instant of the active timeline (pending ones included), oldest first."""
        return list(self._ctx.active.timeline)

    def commits(self) -> list[Instant]:
        """Completed commit, deltacommit and replacecommit instants, oldest first."""
        return list(self._ctx.active.timeline.commits())

    def commit_metadata(self, instant: Instant | str) -> CommitMetadata:
        """The metadata of a completed commit (an `InstantNotFoundError` when there is none)."""
        if isinstance(instant, str):
            found = self._ctx.active.timeline.commits().find(instant)
            if found is None:
                raise InstantNotFoundError(f"no completed commit {instant} in {self.path}")
            instant = found
        return self._ctx.active.commit_metadata(instant)

    @property
    def latest_instant_time(self) -> str | None:
        """The instant time of the latest completed commit, or None on an empty table."""
        last = self._ctx.active.timeline.commits().last
        return last.time if last else None

    def partitions(self) -> list[str]:
        """Partition paths holding files ("" for a table without partitions)."""
        return self._ctx.view().partition_paths()

    def file_groups(self, as_of: str | None = None) -> list[FileGroup]:
        """Every file group with its slices, as of an instant (default: the latest)."""
        return self._ctx.view().file_groups(as_of)

    def latest_file_slices(self, as_of: str | None = None) -> list[FileSlice]:
        """The latest file slice of each file group, as of an instant (default: the latest)."""
        return self._ctx.view().latest_merged_file_slices(as_of)

    def lookup(self, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Record key -> (partition path, file id) of the keys in the table (absent ones left out),
        read from the metadata table's record index by seeking each key's file group; a table
        without a record index is a `ConfigError`."""
        groups = RecordIndexFileGroups.open(self._ctx, "HudiTable.lookup")
        return {key: (loc.partition_path, loc.file_id) for key, loc in groups.lookup(keys).items()}

    def schema(self, *, with_meta_fields: bool = False) -> pa.Schema | None:
        """The table's Arrow schema (None before the first commit); `with_meta_fields` adds
        Hudi's five `_hoodie_*` columns in front."""
        schema = table_arrow_schema(self._ctx)
        if schema is None or not with_meta_fields:
            return schema
        return add_meta(schema)

    # ---- row-level changes (docs/dml.md) -----------------------------------------------------
    def merge(
        self,
        source: Any,
        on: str,
        *,
        source_alias: str = "source",
        target_alias: str = "target",
        options: Mapping[str, str] | None = None,
    ) -> MergeBuilder:
        """MERGE INTO this table: add `when_...` clauses, then `.execute()` (one commit).

        >>> table.merge(df, on="t.id = s.id", source_alias="s", target_alias="t")  # doctest: +SKIP
        ...     .when_matched_update_all().when_not_matched_insert_all().execute()
        """
        from pyhudi.dml.merge import MergeBuilder

        return MergeBuilder(
            self.path,
            source,
            on,
            source_alias=source_alias,
            target_alias=target_alias,
            options=options,
        )

    def update(
        self,
        set: Mapping[str, str | Column],
        predicate: str | Column | None = None,
        *,
        options: Mapping[str, str] | None = None,
        spark: SparkSession | None = None,
    ) -> MergeResult:
        """UPDATE: the rows where `predicate` holds (all rows when None) get the `set` values,
        Spark SQL expressions over the table's columns (one commit)."""
        from pyhudi.dml.statements import update

        return update(_session(spark), self.path, set, predicate, options)

    def delete(
        self,
        predicate: str | Column | None = None,
        *,
        options: Mapping[str, str] | None = None,
        spark: SparkSession | None = None,
    ) -> MergeResult:
        """DELETE FROM: the rows where `predicate` holds (all rows when None) are deleted (one
        commit)."""
        from pyhudi.dml.statements import delete

        return delete(_session(spark), self.path, predicate, options)

    # ---- table services ----------------------------------------------------------------------
    @property
    def compaction(self) -> CompactionService:
        """Compaction (merge-on-read): `.schedule()`, `.run(spark)`, `.pending()`."""
        from pyhudi.services.namespaces import CompactionService

        return CompactionService(self._ctx)

    @property
    def clustering(self) -> ClusteringService:
        """Clustering: `.schedule()`, `.run(spark)`, `.pending()`."""
        from pyhudi.services.namespaces import ClusteringService

        return ClusteringService(self._ctx)

    @property
    def clean(self) -> CleanService:
        """The cleaner: `.run(options)` (or `table.clean(options)`), `.schedule()`, `.pending()`;
        a run returns what the last clean deleted, or None."""
        from pyhudi.services.namespaces import CleanService

        return CleanService(self._ctx)

    @property
    def archive(self) -> ArchivalService:
        """Archival into the archived timeline (`.hoodie/archived`; versions 8 and 9: the LSM history
        under `.hoodie/timeline/history`) (`hoodie.keep.min.commits` / `max.commits`):
        `.run(options)` (or `table.archive(options)`), `.archived()`."""
        from pyhudi.services.namespaces import ArchivalService

        return ArchivalService(self._ctx)

    def archived_timeline(self) -> list[Instant]:
        """Instants moved to the archived timeline, oldest first."""
        return self.archive.archived()

    # ---- savepoints and restore (docs/savepoints.md) -------------------------------------------
    def create_savepoint(
        self,
        instant_time: str | None = None,
        *,
        user: str = "",
        comment: str = "",
        options: Mapping[str, str] | None = None,
    ) -> SavepointInfo:
        """Savepoint a completed commit (default: the latest): the cleaner keeps its files,
        archival keeps it, `restore_to_savepoint` can return to it. `options`: lock keys."""
        check_service_options(options)
        return savepoint.create_savepoint(
            self._ctx, instant_time, user=user, comment=comment, options=options
        )

    def savepoints(self) -> list[SavepointInfo]:
        """The table's savepoints, oldest first."""
        return savepoint.savepoints(self._ctx)

    def delete_savepoint(
        self, instant_time: str, *, options: Mapping[str, str] | None = None
    ) -> SavepointInfo:
        """Delete the savepoint of `instant_time`; returns what it was."""
        check_service_options(options)
        return savepoint.delete_savepoint(self._ctx, instant_time, options=options)

    def restore_to_savepoint(
        self, instant_time: str, *, options: Mapping[str, str] | None = None
    ) -> RestoreResult:
        """Roll the table back to its savepoint `instant_time` (every later write instant, the
        metadata table with it). Stop the table's writers first."""
        check_service_options(options)
        return savepoint.restore_to_savepoint(self._ctx, instant_time, options=options)

    def rollback_to_instant(
        self, instant_time: str, *, options: Mapping[str, str] | None = None
    ) -> RollbackResult:
        """Roll back the table's latest commit `instant_time` (Hudi's `rollback_to_instant`)."""
        check_service_options(options)
        return savepoint.rollback_to_instant(self._ctx, instant_time, options=options)

    def read(
        self,
        spark: SparkSession,
        options: Mapping[str, str] | None = None,
        *,
        filters: Sequence[tuple[str, str, Any]] = (),
        columns: Sequence[str] | None = None,
    ) -> DataFrame:
        """The table as a Spark DataFrame: `pyhudi.read(spark, table.path, ...)`."""
        return read(spark, self.path, options, filters=filters, columns=columns)

    def to_arrow(
        self,
        options: Mapping[str, str] | None = None,
        *,
        filters: Sequence[tuple[str, str, Any]] = (),
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """The table as a `pyarrow.Table`, read without Spark (see `pyhudi.read_arrow`); the
        timeline is the one this object loaded (`refresh()` to see later commits)."""
        return _read_arrow(self._ctx, options, columns=columns, filters=filters)

    def __repr__(self) -> str:
        return f"HudiTable({self.path!r}, {self.table_type.value}, {len(self.commits())} commits)"
