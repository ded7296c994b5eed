"""Planning a clean: which file slices no query needs any more (Hudi 0.14 `CleanPlanner`).

Spark-free: the plan comes from the timeline and one listing of the table.

Earliest instant to retain (`CleanerUtils.getEarliestCommitToRetain`), over completed commit,
deltacommit and replacecommit instants (a completed compaction is a commit):

* KEEP_LATEST_COMMITS: with more than N completed commits, the N-th latest one; but never later
  than the last completed commit before the earliest pending write instant (a pending write,
  compaction or clustering may still read what was current when it started);
* KEEP_LATEST_BY_HOURS: the oldest completed commit at or after `now - N hours`, in the table's
  timeline time zone;
* KEEP_LATEST_FILE_VERSIONS: none.
  Without one, the commits and hours policies clean nothing.

File slices of live file groups (`getFilesToCleanKeepingLatestCommits` / `...LatestVersions`):

* commits and hours: keep the latest slice, every slice whose base instant is at or after the
  earliest retained instant, and the newest slice before it (what a query as of that instant
  reads); delete the older ones, base file and log files together;
* file versions: keep the newest N slices of every file group (N - 1 more when a pending
  compaction already holds one), delete the older ones.

Replaced file groups (completed replacecommits: insert_overwrite, delete_partition, clustering)
lose every file once the replacecommit is older than the earliest retained instant; with file
versions, at once. A partition folder is deleted when it holds no live file group any more, no
data file of a pending write, and (commits, hours) no replacecommit at or after the earliest
retained instant replaced anything in it; pyhudi also requires that the plan deletes every data
file in it and that no commit, deltacommit or replacecommit is pending anywhere.

Never deleted: slices a pending compaction, log compaction or clustering plan reads (and the slice
a pending compaction opened), slices named by a savepoint, bootstrap source files (they live
outside the table; `isBootstrapBaseFile` is always false here). pyhudi adds one guard Hudi has
only for the commits policy: nothing whose base instant (or, for replaced groups, replacecommit)
is at or after the earliest pending write instant is deleted, under any policy.
Partitions are scanned in full every time (`hoodie.cleaner.incremental.mode` is not used).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.config.clean import CleanConfig, CleaningPolicy
from pyhudi.fs_view import FileSystemView
from pyhudi.fs_view.pending import read_requested_plan
from pyhudi.model.file import FileGroup, FileSlice
from pyhudi.model.instant import Action, Instant, InstantTime
from pyhudi.model.plans import CleanFileInfo, CleanPlan
from pyhudi.table.context import TableContext
from pyhudi.timeline.instant_time import format_instant
from pyhudi.timeline.timeline import Timeline

_REPLACE_ACTIONS = (Action.REPLACE_COMMIT, Action.CLUSTERING)
_WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


# ---- HoodieCleanerPlan records ------------------------------------------------------------------


# ---- earliest instant to retain -----------------------------------------------------------------


def earliest_instant_to_retain(
    timeline: Timeline, config: CleanConfig, *, now: datetime | None = None, utc: bool = True
) -> Instant | None:
    """Hudi's `getEarliestCommitToRetain` (None for KEEP_LATEST_FILE_VERSIONS)."""
    completed = timeline.commits().instants
    if config.policy is CleaningPolicy.KEEP_LATEST_BY_HOURS:
        cutoff = _hours_cutoff(now, config.hours_retained, utc)
        return next((i for i in completed if i.time >= cutoff), None)
    if config.policy is not CleaningPolicy.KEEP_LATEST_COMMITS:
        return None
    if len(completed) <= config.commits_retained:
        return None
    nth = completed[len(completed) - config.commits_retained]
    first_pending = timeline.write_timeline().pending().first
    if first_pending is None or nth.time <= first_pending.time:
        return nth
    before = [i for i in completed if i.time < first_pending.time]
    return before[-1] if before else None


def _hours_cutoff(now: datetime | None, hours: int, utc: bool) -> InstantTime:
    """`now - hours` as an instant time of the table's zone (a naive `now` is taken as in it)."""
    moment = now if now is not None else datetime.now(timezone.utc)
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc) if utc else moment.astimezone()
    return format_instant(moment - timedelta(hours=hours))


# ---- what must stay -------------------------------------------------------------------------------


@dataclass
class _Scope:
    """Everything a partition's clean decision needs, loaded once per plan."""

    ctx: TableContext
    config: CleanConfig
    earliest: str | None
    view: FileSystemView
    groups: dict[str, list[FileGroup]]
    replaced: dict[tuple[str, str], str]
    compaction_bases: dict[tuple[str, str], str]
    clustering_bases: dict[tuple[str, str], str]
    savepointed: frozenset[str]
    pending_floor: str | None
    writes_pending: bool
    listed: dict[str, dict[str, str]]  # partition -> data file name -> file id

    @classmethod
    def load(cls, ctx: TableContext, config: CleanConfig, earliest: str | None) -> _Scope:
        view = ctx.view()
        groups: dict[str, list[FileGroup]] = {}
        for group in view.file_groups(include_replaced=True):
            groups.setdefault(group.partition_path, []).append(group)
        timeline = ctx.active.timeline
        pending = timeline.write_timeline().pending()
        first_pending = pending.first
        return cls(
            ctx=ctx,
            config=config,
            earliest=earliest,
            view=view,
            groups=groups,
            replaced=_replaced_file_groups(ctx),
            compaction_bases=_pending_compaction_bases(ctx),
            clustering_bases=_pending_clustering_bases(ctx),
            savepointed=_savepointed_files(ctx),
            pending_floor=first_pending.time if first_pending else None,
            writes_pending=bool(pending.with_actions(*_WRITE_ACTIONS)),
            listed={p: _data_files(p, fs) for p, fs in view.listing.files.items()},
        )

    # ---- per slice -----------------------------------------------------------------------------
    def is_protected(self, file_slice: FileSlice) -> bool:
        """Savepointed, read by a pending service, or at/after the earliest pending write."""
        if self.pending_floor is not None and file_slice.base_instant_time >= self.pending_floor:
            return True
        return (
            self.is_needed_by(self.compaction_bases, file_slice)
            or self.is_needed_by(self.clustering_bases, file_slice)
            or self.is_savepointed(file_slice)
        )

    @staticmethod
    def is_needed_by(bases: Mapping[tuple[str, str], str], file_slice: FileSlice) -> bool:
        """The slice is at or after the one a pending plan reads (Hudi: `>=` the op's base)."""
        base = bases.get((file_slice.partition_path, file_slice.file_id))
        return base is not None and file_slice.base_instant_time >= base

    def is_savepointed(self, file_slice: FileSlice) -> bool:
        names = [lf.file_name for lf in file_slice.log_files]
        if file_slice.base_file is not None:
            names.append(file_slice.base_file.file_name)
        return any(name in self.savepointed for name in names)

    def files_of(self, file_slice: FileSlice) -> list[CleanFileInfo]:
        """Base file then log files, as full URIs (Hudi's `getCleanFileInfoForSlice`)."""
        # (its log files include its CDC logs: the view counts them as the slice's, as Hudi's)
        relative = [lf.relative_path for lf in file_slice.log_files]
        if file_slice.base_file is not None:
            relative.insert(0, file_slice.base_file.relative_path)
        return [CleanFileInfo(self.ctx.storage.uri(self.ctx.path(r))) for r in relative]


def _pending_compaction_bases(ctx: TableContext) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> base instant of the slice a pending (log) compaction reads."""
    result: dict[tuple[str, str], str] = {}
    timeline = ctx.active.timeline
    for instant in timeline.pending().with_actions(Action.COMPACTION, Action.LOG_COMPACTION):
        for op in read_requested_plan(ctx.active, instant).get("operations") or []:
            result[(op.get("partitionPath") or "", op["fileId"])] = op.get("baseInstantTime") or ""
    return result


def _pending_clustering_bases(ctx: TableContext) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> base instant of the slice a pending clustering plan reads."""
    result: dict[tuple[str, str], str] = {}
    for instant in ctx.active.timeline.pending().with_actions(*_REPLACE_ACTIONS):
        requested = read_requested_plan(ctx.active, instant)
        if requested.get("operationType") != "CLUSTER":
            continue
        for group in (requested.get("clusteringPlan") or {}).get("inputGroups") or []:
            for info in group.get("slices") or []:
                key = (info.get("partitionPath") or "", info["fileId"])
                result[key] = min(result.get(key, "~"), _slice_base_instant(key[0], info))
    return result


def _slice_base_instant(partition: str, info: Mapping[str, Any]) -> str:
    """`HoodieSliceInfo` -> base instant of the slice ("" protects the whole file group)."""
    data_file = info.get("dataFilePath")
    if data_file:
        base = parse_base_file(partition, posixpath.basename(data_file))
        if base is not None:
            return base.instant_time
    for name in info.get("deltaFilePaths") or []:
        log = parse_log_file(partition, posixpath.basename(name))
        if log is not None:
            return log.base_instant_time
    return ""


def _replaced_file_groups(ctx: TableContext) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> the completed replacecommit that replaced the file group."""
    replaced: dict[tuple[str, str], str] = {}
    for instant in ctx.active.timeline.commits().with_actions(Action.REPLACE_COMMIT):
        for key in ctx.active.commit_metadata(instant).replaced_file_ids():
            replaced.setdefault(key, instant.time)
    return replaced


def _savepointed_files(ctx: TableContext) -> frozenset[str]:
    """File names listed by completed savepoints (`HoodieSavepointMetadata.savepointDataFile`)."""
    names: set[str] = set()
    for instant in ctx.active.timeline.completed().with_actions(Action.SAVEPOINT):
        metadata = decode_container(ctx.active.read_content(instant), what=f"savepoint {instant}")
        for partition in (metadata.get("partitionMetadata") or {}).values():
            names.update(posixpath.basename(n) for n in partition.get("savepointDataFile") or [])
    return frozenset(names)


def _data_files(partition: str, statuses: Iterable[Any]) -> dict[str, str]:
    """Data file name -> file id, for every base or log file listed in a partition."""
    found: dict[str, str] = {}
    for status in statuses:
        parsed = parse_log_file(partition, status.name) or parse_base_file(partition, status.name)
        if parsed is not None:
            found[status.name] = parsed.file_id
    return found


# ---- per partition --------------------------------------------------------------------------------


def _replaced_files(scope: _Scope, partition: str) -> list[CleanFileInfo]:
    """Files of replaced file groups old enough to go (all of them for file versions)."""
    found: list[CleanFileInfo] = []
    for group in scope.groups.get(partition, ()):
        replaced_at = scope.replaced.get((partition, group.file_id))
        if replaced_at is None or not _replace_is_old_enough(scope, replaced_at):
            continue
        for file_slice in group.slices:
            if not scope.is_protected(file_slice):
                found.extend(scope.files_of(file_slice))
    return found


def _replace_is_old_enough(scope: _Scope, replaced_at: str) -> bool:
    if scope.pending_floor is not None and replaced_at >= scope.pending_floor:
        return False
    return scope.earliest is None or replaced_at < scope.earliest


def _live_groups(scope: _Scope, partition: str) -> list[FileGroup]:
    return [
        g
        for g in scope.groups.get(partition, ())
        if (partition, g.file_id) not in scope.replaced and g.slices
    ]


def _slices_outside_commit_window(scope: _Scope, group: FileGroup) -> list[FileSlice]:
    """KEEP_LATEST_COMMITS / BY_HOURS: slices older than what any retained instant reads."""
    earliest = scope.earliest or ""
    latest = group.slices[0].base_instant_time
    newest_before = next(
        (s.base_instant_time for s in group.slices if s.base_instant_time < earliest), None
    )
    return [
        s
        for s in group.slices
        if s.base_instant_time not in (latest, newest_before)
        and s.base_instant_time < earliest
        and not scope.is_protected(s)
    ]


def _slices_beyond_versions(scope: _Scope, group: FileGroup) -> list[FileSlice]:
    """KEEP_LATEST_FILE_VERSIONS: slices after the newest N (a pending compaction holds one)."""
    keep = scope.config.file_versions_retained
    if (group.partition_path, group.file_id) in scope.compaction_bases:
        keep -= 1
    candidates = [s for s in group.slices if not scope.is_needed_by(scope.compaction_bases, s)]
    return [s for s in candidates[max(keep, 0) :] if not scope.is_protected(s)]


def _partition_clean(scope: _Scope, partition: str) -> tuple[list[CleanFileInfo], bool]:
    """(files to delete, whether the partition folder goes too)."""
    by_versions = scope.config.policy is CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
    select = _slices_beyond_versions if by_versions else _slices_outside_commit_window
    files = _replaced_files(scope, partition)
    live = _live_groups(scope, partition)
    for group in live:
        for file_slice in select(scope, group):
            files.extend(scope.files_of(file_slice))
    return files, not live and _partition_is_emptied(scope, partition, files)


def _partition_is_emptied(scope: _Scope, partition: str, files: list[CleanFileInfo]) -> bool:
    """Hudi's `hasPendingFiles` / `noSubsequentReplaceCommit`, plus: every data file goes."""
    if not partition or scope.writes_pending:
        return False
    listed = scope.listed.get(partition, {})
    replaced_at = [scope.replaced.get((partition, fid)) for fid in set(listed.values())]
    if None in replaced_at:
        return False  # a data file of a live (maybe still pending) file group
    earliest = scope.earliest
    if earliest is not None and any(at is not None and at >= earliest for at in replaced_at):
        return False  # getReplacedFileGroupsAfterOrOn: replaced groups still to be cleaned
    return set(listed) <= {f.file_name for f in files}


# ---- the plan -------------------------------------------------------------------------------------


def plan_clean(
    ctx: TableContext, config: CleanConfig, *, now: datetime | None = None
) -> CleanPlan | None:
    """What a clean started now would delete; None when there is nothing to delete.

    >>> plan = plan_clean(ctx, CleanConfig(commits_retained=2))  # doctest: +SKIP
    >>> plan.file_names()  # doctest: +SKIP
    {'p=1': ['f1-0_0-1-2_20240101000000000.parquet']}
    """
    timeline = ctx.active.timeline
    earliest = earliest_instant_to_retain(
        timeline, config, now=now, utc=ctx.config.timeline_timezone_utc
    )
    if config.policy.retains_commits and earliest is None:
        return None
    scope = _Scope.load(ctx, config, earliest.time if earliest else None)
    files: dict[str, tuple[CleanFileInfo, ...]] = {}
    doomed: list[str] = []
    for partition in scope.view.partition_paths():
        found, delete_partition = _partition_clean(scope, partition)
        if found or delete_partition:
            files[partition] = tuple(dict.fromkeys(found))
        if delete_partition:
            doomed.append(partition)
    if not any(files.values()):
        return None  # Hudi 0.14 schedules only a plan that deletes files
    last = timeline.commits().last
    return CleanPlan(
        earliest_instant_to_retain=earliest,
        last_completed_commit_time=last.time if last else "",
        policy=config.policy,
        files_per_partition=files,
        partitions_to_delete=tuple(doomed),
    )
