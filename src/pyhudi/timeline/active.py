"""The active timeline on storage: loading instants and moving them through their states (§2).

Layout version 1 (table version 6) never renames: each transition creates a new file next to the
earlier ones, atomically and only if absent. Layout 2 (table versions 8 and 9) does the same under
`.hoodie/timeline/`, and a completed file carries its completion time in its name
(`<time>_<completion time>.<action>`): a fresh instant time taken when the instant completes
(under the table lock, as every completion is), later than every time the timeline holds.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from pyhudi.codec.commit_metadata import decode_commit_metadata, decode_commit_schema
from pyhudi.codec.file_names import instant_file_name, parse_instant_file
from pyhudi.exceptions import CommitConflictError, UnsupportedVersionError
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.storage import Storage
from pyhudi.timeline.instant_time import new_instant_time
from pyhudi.timeline.timeline import Timeline

META_FOLDER = ".hoodie"
#: The timeline folder of layout 2, under `.hoodie` (`hoodie.timeline.path`).
LAYOUT_2_FOLDER = "timeline"


@dataclass
class ActiveTimeline:
    storage: Storage
    base_path: str
    layout_version: int = 1
    #: Completion times (layout 2) in UTC, else local time (`hoodie.table.timeline.timezone`).
    utc: bool = True
    timeline: Timeline = field(default_factory=Timeline)
    _metadata_cache: dict[tuple[str, str], CommitMetadata] = field(default_factory=dict, repr=False)
    _schema_cache: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)

    @property
    def meta_path(self) -> str:
        return posixpath.join(self.base_path, META_FOLDER)

    @property
    def timeline_path(self) -> str:
        if self.layout_version >= 2:
            return posixpath.join(self.meta_path, LAYOUT_2_FOLDER)
        return self.meta_path

    @classmethod
    def load(
        cls, storage: Storage, base_path: str, layout_version: int = 1, *, utc: bool = True
    ) -> ActiveTimeline:
        active = cls(storage, base_path, layout_version, utc)
        active.reload()
        return active

    def reload(self) -> ActiveTimeline:
        """Re-list the timeline folder; per (time, action) only the highest state counts."""
        best: dict[tuple[str, Action], Instant] = {}
        for status in self.storage.list_dir(self.timeline_path):
            if status.is_dir:
                continue
            instant = parse_instant_file(status.name)
            if instant is None:
                continue
            key = (instant.time, instant.action.completed_action)
            current = best.get(key)
            if current is None or instant.state.rank > current.state.rank:
                best[key] = instant
        self.timeline = Timeline.of(best.values())
        return self

    # ---- content -----------------------------------------------------------------------------
    def instant_path(self, instant: Instant) -> str:
        """The instant's file. On layout 2 a completed instant's name holds its completion time:
        the instant's own, else the one the loaded timeline knows for it."""
        completion = instant.completion_time or self._known_completion(instant)
        if self.layout_version >= 2 and instant.is_completed and completion:
            name = f"{instant.time}_{completion}.{instant.action.completed_action.value}"
            return posixpath.join(self.timeline_path, name)
        return posixpath.join(self.timeline_path, instant_file_name(instant))

    def _known_completion(self, instant: Instant) -> InstantTime | None:
        if self.layout_version < 2 or not instant.is_completed:
            return None
        action = instant.action.completed_action
        for known in self.timeline:
            if known.time == instant.time and known.is_completed and known.action is action:
                return known.completion_time
        return None

    def read_content(self, instant: Instant) -> bytes:
        return self.storage.read_bytes(self.instant_path(instant))

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Metadata of a completed write instant (cached; files are immutable)."""
        key = (instant.time, instant.action.value)
        cached = self._metadata_cache.get(key)
        if cached is None:
            what = f"commit metadata of {instant}"
            cached = decode_commit_metadata(self.read_content(instant), what=what)
            self._metadata_cache[key] = cached
        return cached

    def commit_schema(self, instant: Instant) -> str | None:
        """The writer schema of a completed write instant, its write stats not decoded (cached)."""
        key = (instant.time, instant.action.value)
        if key in self._metadata_cache:
            return self._metadata_cache[key].schema
        if key not in self._schema_cache:
            what = f"commit metadata of {instant}"
            self._schema_cache[key] = decode_commit_schema(self.read_content(instant), what=what)
        return self._schema_cache[key]

    # ---- transitions ------------------------------------------------------------------------
    def _require_writable(self) -> None:
        if self.layout_version not in (1, 2):
            raise UnsupportedVersionError(
                f"timeline layout {self.layout_version} is not one pyhudi writes (1 and 2)"
            )

    def _create(self, instant: Instant, content: bytes) -> Instant:
        self._require_writable()
        path = self.instant_path(instant)
        try:
            self.storage.create_new(path, content)
        except FileExistsError as err:
            raise CommitConflictError(f"timeline file already exists: {path}") from err
        self.timeline = Timeline.of(
            [
                i
                for i in self.timeline
                if i.time != instant.time
                or i.action.completed_action != instant.action.completed_action
            ]
            + [instant]
        )
        return instant

    def create_requested(self, time: str, action: Action, content: bytes = b"") -> Instant:
        return self._create(Instant(time, action, State.REQUESTED), content)  # type: ignore[arg-type]

    def transition_to_inflight(self, instant: Instant, content: bytes = b"") -> Instant:
        return self._create(Instant(instant.time, instant.action, State.INFLIGHT), content)

    def complete(self, instant: Instant, content: bytes = b"") -> Instant:
        completed = instant.with_state(State.COMPLETED)
        if self.layout_version >= 2:
            completed = Instant(
                completed.time, completed.action, completed.state, self.new_completion_time()
            )
        return self._create(completed, content)

    def new_completion_time(self) -> InstantTime:
        """A completion time later than every instant and completion time on the timeline."""
        known = [*self.timeline.times()]
        known += [i.completion_time for i in self.timeline if i.completion_time]
        return new_instant_time(known, utc=self.utc)

    def delete_pending_files(self, instant: Instant) -> None:
        """Remove the requested and inflight files of a pending instant (after its rollback)."""
        self._require_writable()
        for state in (State.INFLIGHT, State.REQUESTED):
            self.storage.delete(self.instant_path(Instant(instant.time, instant.action, state)))
        self.timeline = self.timeline.filter(
            lambda i: not (i.time == instant.time and i.action == instant.action)
        )

    def revert_inflight_to_requested(self, instant: Instant) -> Instant:
        """Drop the inflight file so a plan (compaction, clustering) can be executed again."""
        self._require_writable()
        self.storage.delete(
            self.instant_path(Instant(instant.time, instant.action, State.INFLIGHT))
        )
        reverted = Instant(instant.time, instant.action, State.REQUESTED)
        others = [
            i for i in self.timeline if not (i.time == instant.time and i.action == instant.action)
        ]
        self.timeline = Timeline.of([*others, reverted])
        return reverted
