"""One write instant from requested to completed (or aborted), and the marker reconciliation.

A write is visible only once its completed instant file exists. Before that, every file it made
has a marker; on success files without a matching write stat (failed task attempts) are deleted;
on failure all marked files and the instant's timeline files are deleted, so the table is exactly
as it was.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass, field

from pyhudi.codec import avro_schemas
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import parse_base_file, parse_marker
from pyhudi.config import table as tkeys
from pyhudi.config import write as wkeys
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Action, Instant, InstantTime
from pyhudi.table.context import TableContext
from pyhudi.table.heartbeat import Heartbeat
from pyhudi.table.rollback import logs_written_by, rollback_failed_writes

log = logging.getLogger(__name__)


def empty_requested_replace() -> bytes:
    """`<t>.replacecommit.requested` of insert_overwrite/delete_partition: every field null."""
    record = {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    return avro_schemas.encode_container("HoodieRequestedReplaceMetadata", record)


def workload_profile(operation: WriteOperationType) -> bytes:
    return encode_commit_metadata(CommitMetadata(operation_type=operation))


@dataclass
class WriteTransaction:
    ctx: TableContext
    action: Action
    operation: WriteOperationType
    instant: Instant | None = None
    rolled_back: list[InstantTime] = field(default_factory=list)
    heartbeat: Heartbeat | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def instant_time(self) -> InstantTime:
        assert self.instant is not None, "transaction not started"
        return self.instant.time

    def begin(self, instant_time: str | None = None) -> InstantTime:
        """Roll back failed writes (EAGER), then create `<t>.<action>.requested` and the inflight file."""
        if (
            wkeys.FAILED_WRITES_CLEANER_POLICY.get({**self.ctx.config.props, **self.options})
            == "EAGER"
        ):
            self.rolled_back = rollback_failed_writes(self.ctx)
        disable_metadata_table(self.ctx)
        time = InstantTime(instant_time) if instant_time else self.ctx.new_instant_time()
        content = empty_requested_replace() if self.action is Action.REPLACE_COMMIT else b""
        requested = self.ctx.active.create_requested(time, self.action, content)
        self.heartbeat = Heartbeat(self.ctx, time).start()
        inflight_content = (
            b""
            if self.operation is WriteOperationType.BULK_INSERT
            else workload_profile(self.operation)
        )
        self.instant = self.ctx.active.transition_to_inflight(requested, inflight_content)
        return time

    def commit(self, metadata: CommitMetadata) -> Instant:
        assert self.instant is not None
        self._reconcile_markers(metadata)
        completed = self.ctx.active.complete(self.instant, encode_commit_metadata(metadata))
        self.ctx.storage.delete_dir(self.ctx.marker_folder(self.instant.time))
        self._stop_heartbeat()
        return completed

    def _stop_heartbeat(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None

    def abort(self) -> None:
        """Undo a failed write right away: delete its marked files and its timeline files."""
        if self.instant is None:
            return
        try:
            for path in self._marked_files():
                self.ctx.storage.delete(path)
            for path in self._appended_logs():
                self.ctx.storage.delete(path)
            self.ctx.storage.delete_dir(self.ctx.marker_folder(self.instant.time))
            self.ctx.active.delete_pending_files(self.instant)
            self._stop_heartbeat()
        except Exception:  # leave it to the next writer's rollback
            log.exception(
                "could not undo failed write %s; the next write rolls it back", self.instant
            )

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


def disable_metadata_table(ctx: TableContext) -> None:
    """pyhudi writes no metadata table: drop an existing one so no reader trusts a stale index (§1.8)."""
    if not ctx.config.metadata_partitions and not ctx.storage.exists(
        posixpath.join(ctx.meta_path, "metadata")
    ):
        return
    log.warning("disabling the metadata table of %s (pyhudi does not maintain it)", ctx.base_path)
    ctx.storage.delete_dir(posixpath.join(ctx.meta_path, "metadata"))
    ctx.update_properties(
        {tkeys.METADATA_PARTITIONS.key: "", tkeys.METADATA_PARTITIONS_INFLIGHT.key: ""}
    )
