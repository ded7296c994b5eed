"""Read planning (Spark-free): which files a query reads, as of which instant, with which schema.

| query type      | files                                                                   |
|-----------------|-------------------------------------------------------------------------|
| snapshot        | latest merged file slices as of `as.of.instant` (default: latest commit) |
| read_optimized  | latest base files only                                                   |
| incremental     | latest slices (as of the end instant) of the file groups written in the window (merge-on-read: only the files the window wrote); rows filtered by commit time |
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import pyarrow as pa

from pyhudi.codec.archived_entry import read_avro_metadata
from pyhudi.codec.schema import with_meta_fields
from pyhudi.config import read as rkeys
from pyhudi.config.unknown import check_read_options
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.fs_view import FileSystemView, PartitionListing
from pyhudi.metadata import read_view
from pyhudi.metadata.listing import is_kept_listing
from pyhudi.model.file import FileSlice
from pyhudi.model.instant import Action, Instant, InstantTime
from pyhudi.reader.data_skipping import skip_slices
from pyhudi.reader.hollow import first_hollow_commit
from pyhudi.reader.pruning import PartitionFilter, check_filter_columns, prune_partitions
from pyhudi.reader.read_paths import partition_in_scope, read_patterns, slice_in_scope
from pyhudi.table import schema_history
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema
from pyhudi.timeline import normalize_instant_time
from pyhudi.timeline.timeline import Timeline


@dataclass(frozen=True)
class ReadPlan:
    base_uri: str
    query_type: str
    data_schema: pa.Schema
    #: Slices read by Spark's parquet reader (no log files to merge).
    base_only: tuple[FileSlice, ...] = ()
    #: Slices whose log files must be merged (merge-on-read snapshot).
    with_logs: tuple[FileSlice, ...] = ()
    #: Slices whose base file is a METADATA_ONLY bootstrap skeleton (stitched to its source file).
    stitched: tuple[FileSlice, ...] = ()
    #: Completed instants visible to the query (log blocks outside are skipped).
    visible_instants: frozenset[str] = frozenset()
    #: The latest instant the query sees.
    as_of: InstantTime | None = None
    #: Incremental: only rows whose `_hoodie_commit_time` is one of these instants.
    commit_times: frozenset[str] | None = None
    drop_meta_fields: bool = False
    #: The first instant of the active timeline: older log blocks count as committed (archived).
    timeline_start: str | None = None
    filters: tuple[PartitionFilter, ...] = field(default_factory=tuple)

    @property
    def file_schema(self) -> pa.Schema:
        return with_meta_fields(self.data_schema)


def plan_read(
    ctx: TableContext,
    options: Mapping[str, str] | None = None,
    filters: Sequence[PartitionFilter] = (),
) -> ReadPlan:
    opts = dict(options or {})
    check_read_options(opts)  # misspelt keys, CDC queries, ...: never ignored silently
    patterns = read_patterns(ctx, opts)
    query_type = rkeys.QUERY_TYPE.get(opts)
    if patterns and query_type == "incremental":
        raise UnsupportedOperationError(
            f"{rkeys.READ_PATHS.key} (or a glob load path) with an incremental query: read the "
            "table's base path"
        )
    if query_type == "incremental" and rkeys.INCREMENTAL_FORMAT.get(opts) == "cdc":
        # Its rows are changes, not records: `pyhudi.reader.cdc.plan_cdc` plans it.
        raise UnsupportedOperationError("a CDC query has no record read plan: use plan_cdc")
    if query_type == "incremental":
        return _plan_incremental(ctx, opts, tuple(filters))
    as_of = _as_of(ctx, opts)
    if rkeys.AS_OF_INSTANT.is_set(opts) and as_of is not None:
        _check_as_of_not_cleaned(ctx, as_of)
    schema = table_arrow_schema(ctx, as_of) or pa.schema([])
    view = read_view(ctx, opts)  # the metadata table's files listing when enabled
    partitions = prune_partitions(ctx, view.partition_paths(), filters)
    if patterns:
        partitions = [p for p in partitions if partition_in_scope(p, patterns)]
    slices = _latest_slices(ctx, view, query_type, as_of, partitions)
    if patterns:
        slices = [s for s in slices if slice_in_scope(s, patterns)]
    slices = skip_slices(ctx, opts, slices, filters)  # hoodie.enable.data.skipping
    return _plan(ctx, query_type, schema, slices, as_of, None, tuple(filters))


#: Plans' file slices kept while their inputs are equal (see `_latest_slices`).
_CACHED_PLANS = 16
_slices: OrderedDict[Hashable, tuple[PartitionListing, tuple[FileSlice, ...]]] = OrderedDict()
_lock = threading.Lock()


def _latest_slices(
    ctx: TableContext,
    view: FileSystemView,
    query_type: str,
    as_of: InstantTime | None,
    partitions: Sequence[str],
) -> Sequence[FileSlice]:
    """The latest slices of `partitions` as of `as_of`: read-optimized (base files only) or merged.

    When the view's files come from a kept metadata-table listing (`is_kept_listing`: the metadata
    table is unchanged), the slices of an earlier plan with equal inputs are reused: the same
    listing object, and the same table, active timeline (every instant, state and completion time),
    query instant, partitions, query type and bootstrap sources, which is all the view's choice
    depends on (completed replace and pending compaction plans never change)."""
    listing = view.listing
    key: Hashable | None = None
    if is_kept_listing(listing):
        key = (
            ctx.base_path,
            id(listing),
            tuple(ctx.active.timeline),
            as_of,
            tuple(partitions),
            query_type,
            tuple(sorted(view.bootstrap_sources.items())),
        )
        with _lock:
            hit = _slices.get(key)
            if hit is not None and hit[0] is listing:
                _slices.move_to_end(key)
                return hit[1]
    if query_type == "read_optimized":
        slices: Sequence[FileSlice] = [
            FileSlice(b.partition_path, b.file_id, b.instant_time, b)
            for b in view.latest_base_files(as_of, partitions)
        ]
    else:
        slices = view.latest_merged_file_slices(as_of, partitions)
    if key is not None:
        with _lock:
            _slices[key] = (listing, tuple(slices))
            while len(_slices) > _CACHED_PLANS:
                _slices.popitem(last=False)
    return slices


def _plan(
    ctx: TableContext,
    query_type: str,
    schema: pa.Schema,
    slices: Sequence[FileSlice],
    as_of: InstantTime | None,
    commit_times: frozenset[str] | None,
    filters: tuple[PartitionFilter, ...],
) -> ReadPlan:
    check_filter_columns(with_meta_fields(schema), filters)
    schema_history.check_files_match_by_name(
        ctx.storage, ctx.base_path, schema.names, (s.base_instant_time for s in slices), as_of
    )
    visible = ctx.active.timeline.commits().up_to(as_of)
    base_only, with_logs, stitched = split_slices(slices)
    return ReadPlan(
        base_uri=ctx.uri,
        query_type=query_type,
        data_schema=schema,
        base_only=base_only,
        with_logs=with_logs,
        stitched=stitched,
        visible_instants=frozenset(visible.times()),
        as_of=as_of,
        commit_times=commit_times,
        drop_meta_fields=not ctx.config.populate_meta_fields,
        timeline_start=ctx.active.timeline.first.time if ctx.active.timeline.first else None,
        filters=filters,
    )


def split_slices(
    slices: Sequence[FileSlice],
) -> tuple[tuple[FileSlice, ...], tuple[FileSlice, ...], tuple[FileSlice, ...]]:
    """(plain base files, slices with logs to merge, bootstrap skeletons to stitch)."""
    stitched = tuple(
        s for s in slices if s.base_file is not None and s.base_file.bootstrap_source_path
    )
    rest = [s for s in slices if s not in stitched]
    base_only = tuple(s for s in rest if not s.has_log_files and s.base_file is not None)
    with_logs = tuple(s for s in rest if s.has_log_files)
    return base_only, with_logs, stitched


def _as_of(ctx: TableContext, opts: Mapping[str, str]) -> InstantTime | None:

    latest = ctx.active.timeline.commits().last
    value = rkeys.AS_OF_INSTANT.get(opts)
    if value is None:
        return latest.time if latest else None
    try:
        return normalize_instant_time(value)
    except ValueError as err:
        raise ConfigError(f"invalid {rkeys.AS_OF_INSTANT.key}: {err}") from err


def _check_as_of_not_cleaned(ctx: TableContext, as_of: InstantTime) -> None:
    """Time travel to before the latest clean's earliest retained commit is refused, as Hudi's
    `TimelineUtils.validateTimestampAsOf` does: the cleaner may have deleted files that query
    needs, so its rows would be silently incomplete."""
    clean = ctx.active.timeline.completed().with_actions(Action.CLEAN).last
    if clean is None:
        return
    data = read_avro_metadata(
        "HoodieCleanMetadata",
        ctx.storage.read_bytes(ctx.active.instant_path(clean)),
        what=str(clean),
    )
    earliest = str((data or {}).get("earliestCommitToRetain") or "")
    if earliest and as_of < earliest:
        raise ConfigError(
            f"{rkeys.AS_OF_INSTANT.key}={as_of} is before {earliest}, the earliest commit the "
            f"cleaner retained (clean {clean.time}): its files may be gone. Retain more commits "
            "with hoodie.cleaner.commits.retained (Hudi: 'Cleaner cleaned up the timestamp of "
            "interest')"
        )


def incremental_window(ctx: TableContext, opts: Mapping[str, str]) -> list[Instant]:
    """The completed commits of an incremental query: after the begin instant, up to the end
    instant (completion times at table version 8 and later)."""
    begin = rkeys.BEGIN_INSTANT.get(opts)
    if begin is None:
        raise ConfigError(
            f"incremental queries need {rkeys.BEGIN_INSTANT.key} (exclusive start instant; "
            "'0' for all)"
        )
    begin_time = "000" if begin in ("000", "0") else normalize_instant_time(begin)
    end = rkeys.END_INSTANT.get(opts)
    commits = _without_hollow(ctx, opts)
    end_time = (
        normalize_instant_time(end)
        if end
        else (_window_time(commits.last) if commits.last else None)
    )
    return [
        i
        for i in commits
        if begin_time < _window_time(i) and (end_time is None or _window_time(i) <= end_time)
    ]


def _without_hollow(ctx: TableContext, opts: Mapping[str, str]) -> Timeline:
    """The completed commits an incremental read may see (`pyhudi.reader.hollow`): at table
    version 6, a hollow commit fails the read (`FAIL`, Hudi's default) or hides every commit
    from it on (`BLOCK`)."""
    commits = ctx.active.timeline.commits()
    if ctx.config.version >= 8:
        return commits
    policy = rkeys.HOLLOW_COMMIT_POLICY.get(opts) or "FAIL"
    if policy == "USE_TRANSITION_TIME":
        raise UnsupportedOperationError(
            f"{rkeys.HOLLOW_COMMIT_POLICY.key}=USE_TRANSITION_TIME is not supported at table "
            "version 6 (pyhudi does not order commits by file modification time): use BLOCK"
        )
    hollow = first_hollow_commit(ctx)
    if hollow is None:
        return commits
    if policy == "FAIL":
        raise ConfigError(
            f"found hollow commit {hollow.time} ({hollow.action.value}, {hollow.state.value}): "
            "commits after it completed while it is pending, so a read past it would miss its "
            f"records once it completes (Hudi: 'Found hollow commit'). Set "
            f"{rkeys.HOLLOW_COMMIT_POLICY.key}=BLOCK to read the commits before it"
        )
    return commits.filter(lambda i: i.time < hollow.time)


def incremental_plan_base(ctx: TableContext) -> ReadPlan:
    """A plan without slices that carries the table's schema and timeline (for slice tasks)."""
    schema = table_arrow_schema(ctx) or pa.schema([])
    return _plan(ctx, "incremental", schema, [], None, None, ())


def _plan_incremental(
    ctx: TableContext, opts: Mapping[str, str], filters: tuple[PartitionFilter, ...]
) -> ReadPlan:
    window = incremental_window(ctx, opts)  # checks the begin instant first
    if not ctx.config.populate_meta_fields:
        # Rows carry no commit time to select them by: Hudi refuses too (its COW and MOR
        # incremental relations, 0.x and 1.x), rather than return the changed file groups whole.
        raise UnsupportedOperationError(
            "incremental queries are not supported when meta fields are disabled "
            "(the table has hoodie.populate.meta.fields=false)"
        )
    as_of = max((i.time for i in window), default=None)
    schema = table_arrow_schema(ctx, as_of) or table_arrow_schema(ctx) or pa.schema([])
    if not window:
        return _plan(ctx, "incremental", schema, [], as_of, frozenset(), filters)
    touched: set[tuple[str, str]] = set()
    written: set[tuple[str, str]] = set()
    for instant in window:
        for stat in ctx.active.commit_metadata(instant).write_stats():
            touched.add((stat.partition_path or "", stat.file_id))
            if stat.path:
                written.add((stat.partition_path or "", stat.path.rsplit("/", 1)[-1]))
    view = read_view(ctx, opts)
    partitions = prune_partitions(ctx, sorted({p for p, _ in touched}), filters)
    # The slices as of the window's last commit (Hudi 1.2.0 merges later log files, and its
    # copy-on-write relation reads later base files, dropping in-window changes of records updated
    # after the window: HUDI #18943; docs/reading.md).
    slices = [
        s
        for s in view.latest_merged_file_slices(as_of, partitions)
        if (s.partition_path, s.file_id) in touched
    ]
    if ctx.config.is_merge_on_read:
        slices = _written_in_window(slices, written)
    commit_times = frozenset(i.time for i in window)
    return _plan(ctx, "incremental", schema, slices, as_of, commit_times, filters)


def _written_in_window(slices: list[FileSlice], written: set[tuple[str, str]]) -> list[FileSlice]:
    """Each slice with only the files the window's commits wrote, as Hudi's merge-on-read
    incremental relation (0.15 and 1.2) builds its file view from those files alone: a log record
    of the window is merged with the window's other records, not with a base file or log file
    written before it (so an update with a lower ordering value than the stored row is returned)."""
    kept = []
    for file_slice in slices:
        part = file_slice.partition_path
        base = file_slice.base_file
        logs = tuple(lf for lf in file_slice.log_files if (part, lf.file_name) in written)
        if base is not None and (part, base.file_name) not in written:
            base = None
        if base is not None or logs:
            kept.append(replace(file_slice, base_file=base, log_files=logs))
    return kept


def _window_time(instant: Instant) -> str:
    # Table version 8 windows compare completion times; v6 instants have none.
    return instant.completion_time or instant.time
