"""One write instant from requested to completed (or aborted), and the marker reconciliation.

A write is visible only once its completed instant file exists. Before that, every file it made
has a marker; on success files without a matching write stat (failed task attempts) are deleted;
on failure all marked files and the instant's timeline files are deleted, so the table is exactly
as it was.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from time import sleep

from pyhudi.codec import avro_schemas
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import base_file_name, parse_base_file, parse_log_file, parse_marker
from pyhudi.codec.heartbeat import encode_owner
from pyhudi.config import concurrency
from pyhudi.config.concurrency import FailedWritesPolicy
from pyhudi.config.index import index_type
from pyhudi.exceptions import CommitConflictError, WriteConflictError
from pyhudi.file_group.index_results import FileIndexResult
from pyhudi.metadata.files_records import commit_files_records
from pyhudi.metadata.writer import (
    commit_rollback_to_metadata_table,
    commit_to_metadata_table,
    discard_metadata_commit,
    maintains_metadata_table,
    metadata_enabled,
    prepare_metadata_table,
    remove_orphan_deltacommits,
)
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.conflict import find_conflict, mutated_file_groups
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.table.guard import (
    await_live_writers,
    check_commit_allowed,
    refuse_live_writers,
    rollback_failed_writes_eager,
)
from pyhudi.table.heartbeat import Heartbeat
from pyhudi.table.layout import remove_partition_left_empty
from pyhudi.table.lock import is_multi_writer, table_transaction
from pyhudi.table.process_owner import this_process
from pyhudi.table.rollback import logs_written_by

log = logging.getLogger(__name__)
_INSTANT_TIME_ATTEMPTS = 5
_INSTANT_TIME_RETRY_S = 0.005


def empty_requested_replace(table_version: int = 6) -> bytes:
    """`<t>.replacecommit.requested` of insert_overwrite/delete_partition: every field null."""
    record = {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    if table_version >= 8:
        return avro_schemas.encode_container_1x("HoodieRequestedReplaceMetadata", record)
    return avro_schemas.encode_container("HoodieRequestedReplaceMetadata", record)


def workload_profile(operation: WriteOperationType, table_version: int = 6) -> bytes:
    return encode_commit_metadata(
        CommitMetadata(operation_type=operation), table_version=table_version
    )


@dataclass
class WriteTransaction:
    """One instant from requested to completed. `fault_prefix` names its fault points
    (`write`, or the service: `compaction`, `clustering`); `check_conflicts` is false for table
    services, which check their own conflicts (clustering) or have none (compaction, as Hudi)."""

    ctx: TableContext
    action: Action
    operation: WriteOperationType
    instant: Instant | None = None
    rolled_back: list[InstantTime] = field(default_factory=list)
    heartbeat: Heartbeat | None = None
    options: dict[str, str] = field(default_factory=dict)
    fault_prefix: str = "write"
    check_conflicts: bool = True
    completed_at_start: frozenset[str] = frozenset()
    pre_commit: Callable[[], None] | None = None
    #: False: the heartbeat names no owner (Hudi's empty file), for writes whose beating process
    #: may end before the write does (a Data Source write's planning worker, which Spark stops
    #: when idle): the next writer then waits for the heartbeat to expire.
    heartbeat_names_owner: bool = True

    @property
    def instant_time(self) -> InstantTime:
        assert self.instant is not None, "transaction not started"
        return self.instant.time

    @property
    def _settings(self) -> dict[str, str]:
        return {**self.ctx.config.props, **self.options}

    def begin(self, instant_time: str | None = None) -> InstantTime:
        """Roll back failed writes (EAGER), start the heartbeat, create `<t>.<action>.requested`,
        check for live writers, then create the inflight file.

        The rollbacks come first, as in Hudi's `startCommit`, so their instants are earlier than
        the write's: a rollback command block appended to a log file ahead of this write's blocks
        must not be later than the write, or a Hudi 0.14 log scan at the write's instant stops at
        it and misses the write. The heartbeat exists before the requested file and the live-writer
        check runs after it, so of two writers starting together at least one sees the other as
        live (single-writer mode).
        """
        prepare_metadata_table(self.ctx, self.options)
        self._roll_back_failed_writes()
        self.ctx.active.reload()
        self.completed_at_start = frozenset(self.ctx.active.timeline.commits().times())
        requested = self._create_requested(instant_time)
        self.instant = requested
        try:
            fault_point(f"{self.fault_prefix}.after_requested")
            self._handle_other_writers(requested.time)
            self._remove_orphan_metadata_commits()
            inflight_content = (
                b""
                if self.operation is WriteOperationType.BULK_INSERT
                else workload_profile(self.operation, self.ctx.config.version)
            )
            self.instant = self.ctx.active.transition_to_inflight(requested, inflight_content)
        except BaseException:
            self.abort()
            raise
        fault_point(f"{self.fault_prefix}.after_inflight")
        return requested.time

    def _create_requested(self, instant_time: str | None) -> Instant:
        """Heartbeat first, then the requested file; a new instant time when another process
        took the same one (instant times have millisecond resolution)."""
        interval_s = concurrency.heartbeat_interval_ms(self._settings) / 1000
        version = self.ctx.config.version
        content = empty_requested_replace(version) if self.action is Action.REPLACE_COMMIT else b""
        owner = encode_owner(this_process()) if self.heartbeat_names_owner else b""
        for _ in range(_INSTANT_TIME_ATTEMPTS):
            time = InstantTime(instant_time) if instant_time else self.ctx.new_instant_time()
            heartbeat = Heartbeat(self.ctx, time, interval_s, content=owner)
            if instant_time:  # fixed times (bootstrap): a crashed run's heartbeat is stale
                heartbeat.start()
            elif not heartbeat.start_new():
                self._wait_for_next_time()
                continue
            try:
                requested = self.ctx.active.create_requested(time, self.action, content)
            except CommitConflictError:
                heartbeat.stop()
                if instant_time:
                    raise
                self._wait_for_next_time()
                continue
            self.heartbeat = heartbeat
            return requested
        raise CommitConflictError(
            f"no free instant time on {self.ctx.uri} after {_INSTANT_TIME_ATTEMPTS} attempts"
        )

    def _wait_for_next_time(self) -> None:
        sleep(_INSTANT_TIME_RETRY_S)
        self.ctx.active.reload()

    def _roll_back_failed_writes(self) -> None:
        """Single writer, EAGER: roll back failed writes (waiting for a live one, then failing)
        before this write has an instant; the wait is outside the table lock. OCC: nothing here
        (failed writes are the cleaner's, LAZY)."""
        settings = self._settings
        if is_multi_writer(self.options):  # also checks the lock options before data is written
            return
        if concurrency.failed_writes_policy(settings) is FailedWritesPolicy.EAGER:
            await_live_writers(self.ctx, settings)
            with table_transaction(self.ctx, self.options):
                self.rolled_back = rollback_failed_writes_eager(
                    self.ctx, settings, record=commit_rollback_to_metadata_table
                )

    def _handle_other_writers(self, own: InstantTime) -> None:
        """Single writer: fail on a live writer (one that started beside this one). OCC: nothing
        here (conflicts are checked at commit)."""
        if not is_multi_writer(self.options):
            refuse_live_writers(self.ctx, self._settings, own=own)

    def commit(
        self,
        metadata: CommitMetadata,
        index_results: Mapping[tuple[str, str], FileIndexResult] | None = None,
    ) -> Instant:
        """Complete the instant under the table lock, after the commit guard and (OCC) the
        conflict check; a conflict raises `WriteConflictError` and nothing is committed.
        `index_results`: the write tasks' side results for the metadata table's indexes."""
        assert self.instant is not None
        self._reconcile_markers(metadata)
        with table_transaction(self.ctx, self.options):
            check_commit_allowed(self.ctx, self.instant)
            if self.pre_commit is not None:
                self.pre_commit()
            if self.check_conflicts and is_multi_writer(self.options):
                self._check_conflicts(metadata)
            self._commit_metadata_table(metadata, index_results)
            content = encode_commit_metadata(metadata, table_version=self.ctx.config.version)
            completed = self.ctx.active.complete(self.instant, content)
        fault_point(f"{self.fault_prefix}.after_commit")
        self.ctx.storage.delete_dir(self.ctx.marker_folder(self.instant.time))
        self.stop_heartbeat()
        return completed

    def _remove_orphan_metadata_commits(self) -> None:
        """Metadata-table deltacommits of data writes rolled back just now (crashed between the
        two commits) go before anything else can read them as valid."""
        if maintains_metadata_table(self.ctx, self.options):
            with table_transaction(self.ctx, self.options):
                remove_orphan_deltacommits(self.ctx)

    def _commit_metadata_table(
        self,
        metadata: CommitMetadata,
        index_results: Mapping[tuple[str, str], FileIndexResult] | None = None,
    ) -> None:
        """The metadata table's deltacommit at this instant, right before the data instant
        completes (under the table lock, after the conflict check), as Hudi orders them. The
        properties are re-read: another writer may have created or dropped it since we began."""
        if metadata_enabled(self.options):
            self.ctx.reload()
        if not maintains_metadata_table(self.ctx, self.options):
            return
        commit_to_metadata_table(
            self.ctx,
            self.instant_time,
            commit_files_records(metadata),
            metadata,
            self.options,
            results=index_results,
        )
        fault_point(f"{self.fault_prefix}.after_metadata_commit")

    def _check_conflicts(self, metadata: CommitMetadata) -> None:
        assert self.instant is not None
        settings = self._settings
        by_bucket = (
            index_type(settings).routes_by_bucket
            or concurrency.CONFLICT_RESOLUTION_STRATEGY.get(settings)
            == concurrency.BUCKET_CONFLICT_STRATEGY
        )
        conflict = find_conflict(
            self.ctx.active,
            self.instant,
            mutated_file_groups(metadata),
            self.completed_at_start,
            by_bucket=by_bucket,
        )
        if conflict is not None:
            raise WriteConflictError(
                f"write {self.instant.time} conflicts with a concurrent operation and was rolled "
                f"back: {conflict.describe()}; nothing of it was committed, retry the write"
            )

    def stop_heartbeat(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None

    def abort(self) -> bool:
        """Undo a failed write right away: delete its marked files and its timeline files. False
        when that failed (storage unreachable, ...): the instant stays pending for the next
        write's rollback."""
        if self.instant is None:
            return True
        try:
            marked = self._marked_files()
            for path in marked:
                self.ctx.storage.delete(path)
            for path in self._appended_logs():
                self.ctx.storage.delete(path)
            self.ctx.active.delete_pending_files(self.instant)
            # A task still running when the write failed (Spark aborts without waiting for them)
            # marked its file before the pending files went: this second pass finds it. A task
            # that checks later sees no inflight file and removes its own files (`undo_if_aborted`).
            seen = set(marked)
            late = [p for p in self._marked_files() if p not in seen]
            for path in late:
                self.ctx.storage.delete(path)
            remove_partitions_left_empty(self.ctx, self.instant.time, [*marked, *late])
            discard_metadata_commit(self.ctx, self.instant.time)
            self._delete_marker_folder()
            self.stop_heartbeat()
        except Exception:  # leave it to the next writer's rollback
            log.exception(
                "could not undo failed write %s; the next write rolls it back", self.instant
            )
            if self.heartbeat is not None:
                self.heartbeat.abandon()
                self.heartbeat = None
            return False
        return True

    def _delete_marker_folder(self) -> None:
        """The abort's last step. A task still running may create a marker in the folder while
        it is being deleted (the delete then fails): such a task finds the inflight file gone
        and removes its files and markers itself (`undo_if_aborted`), so a folder that will not
        go is no failed undo."""
        assert self.instant is not None
        folder = self.ctx.marker_folder(self.instant.time)
        for attempt in range(3):
            try:
                self.ctx.storage.delete_dir(folder)
                return
            except OSError as err:
                if attempt == 2:
                    log.info(
                        "markers of aborted write %s left to its late tasks: %s", self.instant, err
                    )
                else:
                    sleep(0.2)

    def _marked_files(self) -> list[str]:
        assert self.instant is not None
        folder = self.ctx.marker_folder(self.instant.time)
        paths = []
        for status in self.ctx.storage.walk_files(folder):
            parsed = parse_marker(status.name)
            if parsed is None or parsed[1] is IOType.APPEND:
                # APPEND markers name the slice's base file, not a file this write created.
                continue
            relative = posixpath.relpath(posixpath.dirname(status.path), folder)
            partition = "" if relative == "." else relative
            paths.append(
                self.ctx.path(posixpath.join(partition, parsed[0]) if partition else parsed[0])
            )
        return paths

    def _appended_logs(self) -> list[str]:
        """Log files this write created (APPEND markers name their slices)."""
        assert self.instant is not None
        folder = self.ctx.marker_folder(self.instant.time)
        paths = []
        for status in self.ctx.storage.walk_files(folder):
            parsed = parse_marker(status.name)
            base = parse_base_file("", parsed[0]) if parsed and parsed[1] is IOType.APPEND else None
            if base is None:
                continue
            relative = posixpath.relpath(posixpath.dirname(status.path), folder)
            partition = "" if relative == "." else relative
            for log in logs_written_by(
                self.ctx, partition, base.file_id, base.instant_time, self.instant.time
            ):
                paths.append(self.ctx.path(log.relative_path))
        return paths

    def _reconcile_markers(self, metadata: CommitMetadata) -> None:
        written = {self.ctx.path(s.path) for s in metadata.write_stats() if s.path}
        for path in self._marked_files():
            if path not in written and self.ctx.storage.delete(path):
                log.info("deleted %s left by a failed task attempt", path)


def remove_partitions_left_empty(ctx: TableContext, instant_time: str, deleted: list[str]) -> None:
    """The partition folders of `deleted` files that hold only their metafile now, unless a write
    other than `instant_time` is pending (it may be about to write into the same new partition)."""
    if any(i.time != instant_time for i in ctx.active.reload().timeline.pending()):
        return
    partitions = {posixpath.dirname(posixpath.relpath(p, ctx.base_path)) for p in deleted}
    for partition in sorted(partitions, reverse=True):
        remove_partition_left_empty(ctx.storage, ctx.base_path, partition)


def undo_if_aborted(ctx: TableContext, instant: Instant, written: list[str]) -> bool:
    """Run by a write task after its files are closed: when the instant's inflight file is gone
    (the write was aborted, or committed without this late attempt), delete the base and log
    files this task wrote, their markers, and what they leave empty. True when it undid them."""
    inflight = ctx.active.instant_path(Instant(instant.time, instant.action, State.INFLIGHT))
    if ctx.storage.exists(inflight):
        return False
    marker_folder = ctx.marker_folder(instant.time)
    mine = {n for p in written for n in _marked_names(posixpath.basename(p))}
    for path in written:
        ctx.storage.delete(path)
    for status in list(ctx.storage.walk_files(marker_folder)):
        parsed = parse_marker(status.name)
        if parsed is not None and parsed[0] in mine:
            ctx.storage.delete(status.path)
    if not list(ctx.storage.walk_files(marker_folder)):
        ctx.storage.delete_dir(marker_folder)
    remove_partitions_left_empty(ctx, instant.time, written)
    return True


def _marked_names(name: str) -> tuple[str, ...]:
    """The data file names a marker of a written file may carry: its own, and for a log file the
    base file name of its slice with the log's write token (how `log_append` marks an APPEND, as
    Hudi's append handle does)."""
    log = parse_log_file("", name)
    if log is None or log.write_token is None:
        return (name,)
    return name, base_file_name(log.file_id, log.write_token, log.base_instant_time)
