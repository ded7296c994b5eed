"""Timeline archival planning (Hudi 0.14 `HoodieTimelineArchiver`, table version 6): which
instants leave the active timeline.

What is archived (`plan_archival`):
1. Commits (completed commit, deltacommit, replacecommit) only when there are more than
   `max` of them; then the oldest, down to `min` left. `min`/`max` are `hoodie.keep.min/max.commits`,
   raised when the cleaner keeps more (`keep_bounds`, Hudi's `ArchivalUtils`): with the
   cleaner's earliest commit to retain computed from its policy, `min` becomes at least the
   number of commits after it plus 2, and `max` moves up by as much.
2. Only a prefix of the commits timeline, stopping before the earliest of these bounds:
   * the first completed savepoint (savepointed commits and everything after stay);
   * the earliest pending instant: the last completed commit before it is kept too (Hudi:
     pending write instants only; pyhudi: pending instants of any action, clean and rollback
     included - a deliberate, conservative superset);
   * MOR with compaction trigger NUM_COMMITS or NUM_AND_TIME: enough deltacommits since the last
     compaction to trigger the next one (`CompactionUtils.getOldestInstantToRetainForCompaction`);
   * replacecommits (`ClusteringUtils.getOldestInstantToRetainForClustering`): with no completed
     clean ever, the first replacecommit; otherwise the first one at or after the latest clean's
     earliest instant to retain (its clean time when the plan has none); and the last completed
     commit before the first inflight replacecommit;
   * the latest completed clean's `earliestCommitToRetain` (its clean time when empty): commits
     the cleaner still needs stay (no bound when no clean exists). Not in Hudi 0.14; Hudi 1.x has
     it behind an option. pyhudi always applies it, so incremental cleaning never misses them;
   * a replacecommit whose replaced file groups still have files on storage (pyhudi's check on
     top of Hudi's clean-based rule: archiving it would make the replaced files visible again);
   * with a metadata table: its latest compaction (nothing at all before the first one);
   * on a metadata table: the data table's first commit (any state) and first pending instant.
3. Completed clean and rollback instants, per action: when more than `max`, the oldest down to
   `min` (Hudi 0.14; Hudi 1.x archives those older than the last archived commit instead).

Table versions 8 and 9 (`plan_lsm_archival`, Hudi 1.2 `TimelineArchiverV2`) differ in:
* compaction: the deltacommits counted are those completed after the latest completed commit or
  replacecommit was requested (or pending and requested after it), by completion time;
* clustering: pending instants are `clustering`, and the rule is the clean-based one only (no
  inflight-replacecommit rule);
* with a metadata table: commits are archived only up to (not including) the first one completed
  after the metadata table's latest compaction (nothing at all before the first compaction);
* clean and rollback instants are archived only with commits: the completed ones requested before
  the last commit archived now;
* the latest clean's `earliestCommitToRetain` is no bound: Hudi 1.2's archiver for these versions
  ignores it (`hoodie.archive.block.on.latest.clean.ectr` is read by its version 6 archiver
  only), so pyhudi does not apply it either.
The other bounds (savepoint, pending instants, uncleaned replaced file groups, the data table's
bound on a metadata table) are the same.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

from pyhudi.codec.archived_entry import (
    read_avro_metadata,
)
from pyhudi.codec.file_names import (
    parse_base_file,
    parse_log_file,
)
from pyhudi.config.archival import ArchivalConfig
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.context import TableContext
from pyhudi.table.metadata_table import (
    data_table_base_path,
    is_metadata_table,
    latest_compaction,
    open_metadata_table,
)
from pyhudi.timeline.active import ActiveTimeline
from pyhudi.timeline.instant_time import format_instant, parse_instant
from pyhudi.timeline.timeline import COMMIT_ACTIONS, Timeline

#: A bound below every instant time: nothing may be archived.
_ARCHIVE_NOTHING = ""

log = logging.getLogger(__name__)


def plan_archival(ctx: TableContext, config: ArchivalConfig) -> list[Instant]:
    """The instants to archive now (one per instant, in its highest state), sorted."""
    if ctx.config.version >= 8:
        return plan_lsm_archival(ctx, config)
    timeline = ctx.active.timeline
    min_keep, max_keep = keep_bounds(ctx, config)
    chosen = [
        *_commits_to_archive(ctx, config, min_keep, max_keep),
        *_cleans_and_rollbacks_to_archive(timeline, min_keep, max_keep),
    ]
    for bound in (_metadata_table_bound(ctx), _data_table_bound(ctx)):
        if bound is not None:
            chosen = [i for i in chosen if i.time < bound]
    return sorted(chosen, key=Instant.sort_key)


def keep_bounds(ctx: TableContext, config: ArchivalConfig) -> tuple[int, int]:
    """(min, max) commits to keep, raised to what the cleaner keeps (`ArchivalUtils`, 0.14)."""
    configured = (config.min_commits_to_keep, config.max_commits_to_keep)
    earliest = _cleaner_earliest_commit_to_retain(ctx, config)
    if earliest is None:
        return configured
    completed = ctx.active.timeline.commits()
    needed = sum(1 for i in completed if i.time > earliest.time) + 2
    if configured[0] >= needed:
        return configured
    raised = (needed, needed + configured[1] - configured[0])
    log.warning(
        "archival bounds raised to min=%d, max=%d: the cleaner (%s) retains commits from %s",
        *raised,
        config.cleaner_policy,
        earliest.time,
    )
    return raised


def _cleaner_earliest_commit_to_retain(ctx: TableContext, config: ArchivalConfig) -> Instant | None:
    """`CleanerUtils.getEarliestCommitToRetain` from the cleaner's policy (not a clean's metadata)."""
    commits = ctx.active.timeline.filter(lambda i: i.action in COMMIT_ACTIONS)
    completed = commits.completed().instants
    if config.cleaner_policy == "KEEP_LATEST_COMMITS":
        retained = config.cleaner_commits_retained
        if len(completed) <= retained:
            return None
        if retained <= 0:
            return None  # Hudi's nthInstant(count - 0) is out of range: no commit to retain
        nth = completed[len(completed) - retained]
        pending = commits.pending().first
        if pending is None or nth.time <= pending.time:
            return nth
        before = [i for i in completed if i.time < pending.time]
        return before[-1] if before else None
    if config.cleaner_policy == "KEEP_LATEST_BY_HOURS":
        utc = ctx.config.timeline_timezone_utc
        latest = completed[-1].time if completed else None
        now = datetime.now(timezone.utc) if utc else datetime.now().astimezone()
        moment = parse_instant(latest, utc=utc) if latest else now
        earliest_time = format_instant(moment - timedelta(hours=config.cleaner_hours_retained))
        return next((i for i in completed if i.time >= earliest_time), None)
    return None


def _commits_to_archive(
    ctx: TableContext, config: ArchivalConfig, min_keep: int, max_keep: int
) -> list[Instant]:
    commits = ctx.active.timeline.commits().instants
    if len(commits) <= max_keep:
        return []
    timeline = ctx.active.timeline
    bounds = [
        _first_savepoint(timeline),
        _retain_for_pending(timeline),
        _retain_for_compaction(ctx, config),
        _retain_for_clustering(ctx),
        latest_clean_retain_bound(ctx),
    ]
    present = [b for b in bounds if b is not None]
    bound = min(present) if present else None
    candidates = [i for i in commits if bound is None or i.time < bound]
    candidates = candidates[: len(commits) - min_keep]
    return _stop_at_uncleaned_replace(ctx, candidates)


def _first_savepoint(timeline: Timeline) -> str | None:
    savepoint = timeline.completed().with_actions(Action.SAVEPOINT).first
    return savepoint.time if savepoint else None


def _retain_for_pending(timeline: Timeline) -> str | None:
    """The last completed commit before the earliest pending instant, else that pending instant."""
    pending = timeline.pending().first
    if pending is None:
        return None
    before = timeline.commits().filter(lambda i: i.time < pending.time).last
    return (before or pending).time


def _retain_for_compaction(
    ctx: TableContext, config: ArchivalConfig, *, layout_2: bool = False
) -> str | None:
    """Keep the deltacommits the next NUM_COMMITS compaction trigger counts (MOR only). Layout 1:
    the deltacommits after the last compaction. Layout 2 (Hudi 1.2's
    `CompactionUtils.getEarliestInstantToRetainForCompaction`, NUM_COMMITS or NUM_AND_TIME): after
    the last compaction or replacecommit, counted by completion time."""
    if not ctx.config.is_merge_on_read or config.compaction_trigger_strategy not in (
        "NUM_COMMITS",
        "NUM_AND_TIME",
    ):
        return None
    timeline = ctx.active.timeline
    actions = (Action.COMMIT, Action.REPLACE_COMMIT) if layout_2 else (Action.COMMIT,)
    last = timeline.completed().with_actions(*actions).last
    deltas = timeline.with_actions(Action.DELTA_COMMIT).instants
    if last is not None:
        after = last.time
        if layout_2:
            window = [d for d in deltas if _modified_after(d, after)]
        else:
            window = [d for d in deltas if d.time > after]
        anchor = last
    elif deltas:
        window, anchor = list(deltas), deltas[0]
    else:
        return None
    max_deltas = config.compaction_max_delta_commits
    if len(window) < max_deltas:
        return anchor.time
    return window[len(window) - max_deltas].time


def _retain_for_clustering(ctx: TableContext) -> str | None:
    """Hudi's rule: replacecommits stay until a clean has passed them."""
    timeline = ctx.active.timeline
    replaces = timeline.with_actions(Action.REPLACE_COMMIT)
    if not replaces:
        return None
    retain = _first_not_cleaned(ctx, replaces)
    inflight = replaces.filter(lambda i: i.is_inflight).first
    if inflight is not None:
        before = timeline.commits().filter(lambda i: i.time < inflight.time).last
        if before is not None and (retain is None or retain.time > before.time):
            retain = before
    return retain.time if retain else None


def latest_clean_retain_bound(ctx: TableContext) -> str | None:
    """The latest completed clean's earliest commit to retain (its time when unset); None: no clean.

    Read from the clean's plan (`.clean.requested`, as Hudi's `ClusteringUtils` does), else from
    its metadata (`.clean`).
    """
    clean = ctx.active.timeline.completed().with_actions(Action.CLEAN).last
    if clean is None:
        return None
    for instant, record, field in (
        (
            Instant(clean.time, Action.CLEAN, State.REQUESTED),
            "HoodieCleanerPlan",
            "earliestInstantToRetain",
        ),
        (clean, "HoodieCleanMetadata", "earliestCommitToRetain"),
    ):
        value = _clean_field(ctx, instant, record, field)
        if value:
            return value
    return clean.time


def _clean_field(ctx: TableContext, instant: Instant, record: str, field: str) -> str | None:
    path = ctx.active.instant_path(instant)
    if not ctx.storage.exists(path):
        return None
    data = read_avro_metadata(record, ctx.storage.read_bytes(path), what=f"{instant}")
    value = (data or {}).get(field)
    if isinstance(value, dict):  # HoodieActionInstant
        value = value.get("timestamp")
    return str(value) if value else None


def _stop_at_uncleaned_replace(ctx: TableContext, candidates: list[Instant]) -> list[Instant]:
    """Cut before the first replacecommit whose replaced file groups still have files."""
    listings: dict[str, set[str]] = {}
    for index, instant in enumerate(candidates):
        if instant.action is not Action.REPLACE_COMMIT:
            continue
        for partition, file_id in sorted(ctx.active.commit_metadata(instant).replaced_file_ids()):
            if partition not in listings:
                listings[partition] = _file_ids_in(ctx, partition)
            if file_id in listings[partition]:
                log.info(
                    "not archiving %s: replaced file group %s still has files", instant, file_id
                )
                return candidates[:index]
    return candidates


def _file_ids_in(ctx: TableContext, partition: str) -> set[str]:
    file_ids = set()
    for status in ctx.storage.list_dir(ctx.partition_path(partition)):
        if status.is_dir:
            continue
        parsed = parse_base_file(partition, status.name) or parse_log_file(partition, status.name)
        if parsed is not None:
            file_ids.add(parsed.file_id)
    return file_ids


def _metadata_table_bound(ctx: TableContext) -> str | None:
    """With a metadata table, only instants before its latest compaction (Hudi 0.14)."""
    if "files" not in ctx.config.metadata_partitions:
        return None
    mdt = open_metadata_table(ctx)
    if mdt is None:
        return None
    compaction = latest_compaction(mdt)
    return compaction.time if compaction else _ARCHIVE_NOTHING


def _data_table_bound(ctx: TableContext) -> str | None:
    """On a metadata table: only instants before the data table's first commit (any state) and
    its first pending instant (Hudi 0.14 `TimelineUtils.getEarliestInstantForMetadataArchival`):
    a data rollback may still need the metadata table's deltacommit of any active data instant."""
    if not is_metadata_table(ctx):
        return None
    data = ActiveTimeline.load(
        ctx.storage, data_table_base_path(ctx), ctx.config.timeline_layout_version
    ).timeline
    firsts = [data.with_actions(*COMMIT_ACTIONS).first, data.pending().first]
    present = [i.time for i in firsts if i is not None]
    return min(present) if present else None


def _cleans_and_rollbacks_to_archive(
    timeline: Timeline, min_keep: int, max_keep: int
) -> list[Instant]:
    chosen: list[Instant] = []
    for action in (Action.CLEAN, Action.ROLLBACK):
        done = timeline.completed().with_actions(action).instants
        if len(done) > max_keep:
            chosen.extend(done[: len(done) - min_keep])
    return chosen


# ---- table versions 8 and 9 (Hudi 1.2 TimelineArchiverV2) -------------------------------------


def plan_lsm_archival(ctx: TableContext, config: ArchivalConfig) -> list[Instant]:
    """The instants a version 8/9 archival moves to the LSM history (see the module docstring)."""
    timeline = ctx.active.timeline
    min_keep, max_keep = keep_bounds(ctx, config)
    commits = timeline.commits().instants
    if len(commits) <= max_keep:
        return []
    bounds = [
        _first_savepoint(timeline),
        _retain_for_pending(timeline),
        _retain_for_compaction(ctx, config, layout_2=True),
        _retain_for_clustering_v2(ctx),
        _metadata_table_bound_v2(ctx),
        _data_table_bound(ctx),
    ]
    present = [b for b in bounds if b is not None]
    bound = min(present) if present else None
    candidates = [i for i in commits if bound is None or i.time < bound]
    chosen = _stop_at_uncleaned_replace(ctx, candidates[: len(commits) - min_keep])
    if not chosen:
        return []
    last = chosen[-1].time
    cleans = timeline.completed().with_actions(Action.CLEAN, Action.ROLLBACK)
    chosen += [i for i in cleans if i.time < last]
    return sorted(chosen, key=Instant.sort_key)


def _modified_after(instant: Instant, time: str) -> bool:
    """Hudi 1.x `findInstantsModifiedAfterByCompletionTime`: completed after `time`, or pending
    and requested after it."""
    if instant.completion_time is None:
        return instant.is_pending and instant.time > time
    return instant.completion_time > time and instant.time != time


def _retain_for_clustering_v2(ctx: TableContext) -> str | None:
    """Hudi 1.2 `ClusteringUtils.getEarliestInstantToRetainForClustering`: replacecommits and
    clusterings (any state) stay from the first one at or after the latest clean's bound."""
    replaces = ctx.active.timeline.with_actions(Action.REPLACE_COMMIT, Action.CLUSTERING)
    if not replaces:
        return None
    retain = _first_not_cleaned(ctx, replaces)
    return retain.time if retain else None


def _first_not_cleaned(ctx: TableContext, replaces: Timeline) -> Instant | None:
    """The first of `replaces` at or after the latest clean's retain bound (the first if none)."""
    clean_bound = latest_clean_retain_bound(ctx)
    if clean_bound is None:
        return replaces.first
    return replaces.filter(lambda i: i.time >= clean_bound).first


def _metadata_table_bound_v2(ctx: TableContext) -> str | None:
    """With a metadata table: the first completed commit completed after its latest compaction;
    nothing may be archived before its first compaction (Hudi 1.2)."""
    if "files" not in ctx.config.metadata_partitions:
        return None
    mdt = open_metadata_table(ctx)
    if mdt is None:
        return None
    compaction = latest_compaction(mdt)
    if compaction is None:
        return _ARCHIVE_NOTHING
    after = [i for i in ctx.active.timeline.commits() if _modified_after(i, compaction.time)]
    return after[0].time if after else None
