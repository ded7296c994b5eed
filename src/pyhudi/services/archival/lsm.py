"""The LSM timeline writer of table versions 8 and 9 (Hudi 1.2 `LSMTimelineWriter`): archived
instants become a parquet file of the history in `.hoodie/timeline/history/`, which a new
manifest makes visible; small files are compacted into the next layer and superseded manifests and
files are cleaned. The bytes are `pyhudi.codec.lsm_timeline`'s.

The order of writes, each step crash-safe as Hudi's is:
1. `write_instants`: the layer-0 file `<first>_<last>_0.parquet` of the instants. When a file of
   that name exists already, a crash left it: listed in the latest manifest it is committed and
   nothing is written again (the caller goes on deleting the active files); else it is deleted
   and written anew.
2. `update_manifest`: `manifest_<N+1>` (deleted first if a crash left one), then `_version_`
   (deleted, then created). Until `_version_` names `N+1` readers see snapshot `N`; with no
   readable `_version_` they take the highest manifest, as Hudi's readers do.
3. (the caller deletes the archived instants' active timeline files)
4. `compact_and_clean`: while a layer holds `hoodie.timeline.compaction.batch.size` files or more,
   the oldest of them (at most that many, at most `hoodie.timeline.compaction.target.file.max.bytes`
   together, at least two) are merged into one file of the next layer and a new manifest replaces
   them. Then, when more than `hoodie.timeline.manifest.retained.versions` (+ the number of layers
   compacted now) manifests exist, the older manifests are deleted, then every parquet file none
   of the retained manifests names.

Fault points (`pyhudi.table.faults`) between the steps: `archival.after_history_file`,
`archival.after_manifest`, `archival.after_version_deleted`, `archival.after_compacted_file`,
`archival.after_compaction`, `archival.after_manifests_cleaned`; the caller adds
`archival.after_pending_files_deleted` between the two halves of step 3.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from pyhudi.codec.lsm_timeline import (
    VERSION_FILE,
    LsmFileEntry,
    LsmInstant,
    decode_lsm_file,
    decode_manifest,
    encode_lsm_file,
    encode_manifest,
    encode_version,
    lsm_file_name,
    manifest_file_name,
    parse_lsm_file_name,
    parse_manifest_version,
)
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.instant import Action, Instant, State
from pyhudi.storage import FileStatus, Storage
from pyhudi.table.context import TableContext
from pyhudi.table.faults import fault_point
from pyhudi.timeline.archived import history_folder

log = logging.getLogger(__name__)
TimelineFile = tuple[Instant, FileStatus]
_PLAN_FROM_REQUESTED = (Action.COMPACTION, Action.LOG_COMPACTION)


@dataclass(frozen=True)
class ArchivedAction:
    """The timeline files of one instant (Hudi's `ActiveAction`): its completed file and the
    pending files still next to it."""

    completed: TimelineFile
    requested: TimelineFile | None = None
    inflight: TimelineFile | None = None

    @property
    def time(self) -> str:
        return self.completed[0].time

    @property
    def files(self) -> list[TimelineFile]:
        return [f for f in (self.requested, self.inflight, self.completed) if f is not None]

    @classmethod
    def of(cls, files: Sequence[TimelineFile]) -> ArchivedAction:
        by_state = {instant.state: (instant, status) for instant, status in files}
        return cls(
            by_state[State.COMPLETED],
            by_state.get(State.REQUESTED),
            by_state.get(State.INFLIGHT),
        )


class LsmHistory:
    """The history folder of one table: its snapshots and files."""

    def __init__(self, ctx: TableContext, config: ArchivalConfig) -> None:
        self.ctx = ctx
        self.storage: Storage = ctx.storage
        self.folder = history_folder(ctx)
        self.config = config

    def path(self, name: str) -> str:
        return posixpath.join(self.folder, name)

    # ---- snapshots -----------------------------------------------------------------------------
    def versions(self) -> list[int]:
        """The versions of every `manifest_<N>` in the folder."""
        found = (parse_manifest_version(s.name) for s in self.storage.list_dir(self.folder))
        return [v for v in found if v is not None]

    def latest_version(self) -> int:
        """`_version_` when readable, else the highest manifest; -1 with no snapshot yet."""
        version_path = self.path(VERSION_FILE)
        try:
            return int(self.storage.read_text(version_path).strip())
        except (OSError, ValueError) as err:
            if self.storage.exists(version_path):
                log.warning("unreadable %s (%s); listing the manifests", version_path, err)
        return max(self.versions(), default=-1)

    def manifest(self, version: int) -> list[LsmFileEntry]:
        if version < 0:
            return []
        path = self.path(manifest_file_name(version))
        try:
            data = self.storage.read_bytes(path)
        except FileNotFoundError as err:
            raise CorruptFileError(f"LSM timeline manifest {path} is missing") from err
        return decode_manifest(data, what=f"LSM timeline manifest {path}")

    def latest_manifest(self) -> list[LsmFileEntry]:
        return self.manifest(self.latest_version())

    def update_manifest(self, remove: Sequence[str], add: str) -> int:
        """Write `manifest_<N+1>` = the latest one without `remove`, plus `add`; then `_version_`."""
        version = self.latest_version()
        entries = [e for e in self.manifest(version) if e.file_name not in set(remove)]
        entries.append(self._entry(add))
        new_version = 1 if version < 0 else version + 1
        manifest_path = self.path(manifest_file_name(new_version))
        if self.storage.delete(manifest_path):  # left by a crash before `_version_` named it
            log.info("deleted %s left by a failed archival", manifest_path)
        self.storage.create_new(manifest_path, encode_manifest(entries))
        fault_point("archival.after_manifest")
        version_path = self.path(VERSION_FILE)
        self.storage.delete(version_path)
        fault_point("archival.after_version_deleted")
        self.storage.create_new(version_path, encode_version(new_version))
        return new_version

    def _entry(self, name: str) -> LsmFileEntry:
        status = self.storage.status(self.path(name))
        if status is None:
            raise CorruptFileError(f"LSM timeline file {self.path(name)} is missing")
        return LsmFileEntry(name, status.size_bytes)

    # ---- writes --------------------------------------------------------------------------------
    def write_instants(self, actions: Sequence[ArchivedAction]) -> str:
        """Step 1 and 2 of the module docstring; returns the path of the layer-0 file."""
        return self.write_rows([self._row(action) for action in actions])

    def write_rows(self, rows: Sequence[LsmInstant]) -> str:
        """`write_instants` of rows made already: the file is named by the first and the last."""
        name = lsm_file_name(rows[0].instant_time, rows[-1].instant_time, 0)
        path = self.path(name)
        if self.storage.exists(path):
            if any(e.file_name == name for e in self.latest_manifest()):
                log.info("%s is archived already (a crash after its manifest): not rewritten", path)
                return path
            self.storage.delete(path)  # written, never made visible: a crash left it
        self.storage.create_new(path, encode_lsm_file(rows))
        fault_point("archival.after_history_file")
        self.update_manifest((), name)
        return path

    def _row(self, action: ArchivedAction) -> LsmInstant:
        instant, status = action.completed
        metadata = self.storage.read_bytes(status.path)
        return LsmInstant(
            instant_time=instant.time,
            completion_time=instant.completion_time,
            action=instant.action.value,
            metadata=metadata or None,
            plan=self._plan(action),
        )

    def _plan(self, action: ArchivedAction) -> bytes | None:
        """The plan bytes Hudi 1.2 keeps (`MetadataConversionUtils.createLSMTimelineInstant`)."""
        pending = action.requested or action.inflight
        if pending is None:
            return None  # Hudi fails on an instant without pending files; pyhudi keeps no plan
        kind = pending[0].action
        if kind is Action.CLEAN:
            return self.storage.read_bytes(pending[1].path)
        if kind in _PLAN_FROM_REQUESTED:
            requested = Instant(action.time, kind, State.REQUESTED)  # type: ignore[arg-type]
            path = self.ctx.active.instant_path(requested)
            return self.storage.read_bytes(path) if self.storage.exists(path) else None
        if kind in (Action.REPLACE_COMMIT, Action.CLUSTERING):
            plan = None
            for pending_file in (action.requested, action.inflight):
                content = self.storage.read_bytes(pending_file[1].path) if pending_file else b""
                plan = content or plan  # the inflight's bytes win when not empty
            return plan
        return None

    # ---- compaction and cleaning ---------------------------------------------------------------
    def compact_and_clean(self) -> list[str]:
        """Step 4 of the module docstring; returns the names of the compacted files written."""
        manifest = self.latest_manifest()
        written: list[str] = []
        layer = 0
        compacted = self._compact_layer(manifest, layer)
        while compacted is not None:
            written.append(compacted)
            manifest.append(self._entry(compacted))
            layer += 1
            compacted = self._compact_layer(manifest, layer)
        self.clean(layer)
        return written

    def _compact_layer(self, manifest: list[LsmFileEntry], layer: int) -> str | None:
        files = sorted(
            (e for e in manifest if _layer(e.file_name) == layer), key=lambda e: e.file_name
        )
        batch = self.config.timeline_compaction_batch_size
        if len(files) < batch:
            return None
        candidates = self._candidates(files, batch)
        if len(candidates) < 2:
            return None  # one file is too large to compact with its neighbours
        name = compacted_file_name(candidates)
        path = self.path(name)
        if self.storage.delete(path):
            log.info("deleted %s left by a failed compaction", path)
        rows: list[LsmInstant] = []
        for source in candidates:
            data = self.storage.read_bytes(self.path(source))
            rows.extend(decode_lsm_file(data, what=f"LSM timeline file {self.path(source)}"))
        self.storage.create_new(path, encode_lsm_file(rows))
        fault_point("archival.after_compacted_file")
        self.update_manifest(candidates, name)
        fault_point("archival.after_compaction")
        log.info("compacted LSM timeline files %s into %s", candidates, name)
        return name

    def _candidates(self, files: Sequence[LsmFileEntry], batch: int) -> list[str]:
        """Consecutive files, at most `batch` of them, stopping once over the size target."""
        candidates: list[str] = []
        total = 0
        for entry in files:
            total += entry.file_len
            candidates.append(entry.file_name)
            if len(candidates) >= batch:
                break
            if total > self.config.timeline_compaction_max_file_bytes:
                if len(candidates) >= 2:
                    break
                candidates, total = [], 0
        return candidates

    def clean(self, compacted_layers: int) -> None:
        """Delete manifests beyond the retained versions, then the files none of those names."""
        keep_count = self.config.timeline_manifest_retained_versions + compacted_layers
        versions = sorted(self.versions(), reverse=True)
        if len(versions) <= keep_count:
            return
        kept = versions[:keep_count]
        names = {e.file_name for v in kept for e in self.manifest(v)}
        for status in self.storage.list_dir(self.folder):
            version = parse_manifest_version(status.name)
            if version is not None and version not in kept:
                self.storage.delete(status.path)
        fault_point("archival.after_manifests_cleaned")
        for status in self.storage.list_dir(self.folder):
            if status.name.endswith(".parquet") and status.name not in names:
                self.storage.delete(status.path)


def compacted_file_name(names: Sequence[str]) -> str:
    """The file `names` compact into: their min and max instants, one layer above the first."""
    parsed = []
    for name in names:
        fields = parse_lsm_file_name(name)
        if fields is None:
            raise CorruptFileError(f"not an LSM timeline file name: {name}")
        parsed.append(fields)
    return lsm_file_name(min(p[0] for p in parsed), max(p[1] for p in parsed), parsed[0][2] + 1)


def _layer(name: str) -> int:
    """The layer of a history file name (0 for a name Hudi's pattern does not match, as Hudi)."""
    parsed = parse_lsm_file_name(name)
    return parsed[2] if parsed else 0
