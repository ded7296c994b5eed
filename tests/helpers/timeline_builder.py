"""Hand-built tables for service tests: fake data files plus real timeline files, no Spark.

Data files hold placeholder bytes; only their names matter to the file-system view. Timeline
files are what Hudi writes: JSON commit metadata, Avro compaction/clustering plans.

>>> tb = TimelineBuilder.create(tmp_path)                    # doctest: +SKIP
>>> t1 = tb.write(Base("p=1", "a-0"), Base("p=1", "b-0"))   # doctest: +SKIP
>>> t2 = tb.write(Base("p=1", "a-0"))  # a new slice of a-0  # doctest: +SKIP
"""

from __future__ import annotations

import os
import posixpath
import time as clock
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyhudi.codec.avro_schemas import encode_container
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import base_file_name, log_file_name, marker_name
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.file import join_partition
from pyhudi.model.instant import Action, Instant, InstantTime, State
from pyhudi.table.context import TableContext


def table_props(table_type: str = "COPY_ON_WRITE", *, partitioned: bool = True) -> dict[str, str]:
    props = {
        "hoodie.table.name": "t",
        "hoodie.database.name": "default",
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.recordkey.fields": "id",
        "hoodie.table.timeline.timezone": "UTC",
    }
    if partitioned:
        props["hoodie.table.partition.fields"] = "p"
    return props


@dataclass(frozen=True)
class Base:
    """A new base file of `file_id`, written by the instant being built."""

    partition: str
    file_id: str


@dataclass(frozen=True)
class Log:
    """The next log file of a slice (default: the file group's latest slice; a new group: this instant)."""

    partition: str
    file_id: str
    base_instant: str | None = None


@dataclass
class _Slice:
    base: str | None = None
    logs: list[str] = field(default_factory=list)


@dataclass
class TimelineBuilder:
    ctx: TableContext
    #: (partition, fileId) -> base instant -> the slice's file names
    slices: dict[tuple[str, str], dict[str, _Slice]] = field(default_factory=dict)
    #: When set, instants take their times from here (e.g. fixed past times for the hours policy).
    times: Iterator[str] | None = None
    _tokens: int = 0

    @classmethod
    def create(
        cls, root: Path, table_type: str = "COPY_ON_WRITE", *, partitioned: bool = True
    ) -> TimelineBuilder:
        return cls(TableContext.create(str(root), table_props(table_type, partitioned=partitioned)))

    @property
    def is_mor(self) -> bool:
        return self.ctx.config.is_merge_on_read

    def _instant_time(self, time: str | None) -> InstantTime:
        if time is None and self.times is not None:
            time = next(self.times)
        return InstantTime(time) if time else self.ctx.new_instant_time()

    # ---- writes -------------------------------------------------------------------------------
    def write(
        self,
        *files: Base | Log,
        action: Action | None = None,
        operation: WriteOperationType = WriteOperationType.UPSERT,
        replaced: dict[str, list[str]] | None = None,
        time: str | None = None,
        complete: bool = True,
    ) -> InstantTime:
        """One write instant; `complete=False` leaves it inflight with markers (a failed write)."""
        action = action or (Action.DELTA_COMMIT if self.is_mor else Action.COMMIT)
        instant_time = self._instant_time(time)
        requested_content = b""
        if action is Action.REPLACE_COMMIT:
            requested_content = encode_container(
                "HoodieRequestedReplaceMetadata",
                {
                    "operationType": None,
                    "clusteringPlan": None,
                    "extraMetadata": None,
                    "version": None,
                },
            )
        requested = self.ctx.active.create_requested(instant_time, action, requested_content)
        inflight = self.ctx.active.transition_to_inflight(requested)
        stats: dict[str, list[WriteStat]] = {}
        for spec in files:
            stat = self._materialize(instant_time, spec, markers=not complete)
            stats.setdefault(spec.partition, []).append(stat)
        if complete:
            metadata = CommitMetadata(
                partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
                operation_type=operation,
                extra_metadata={"schema": ""},
                partition_to_replace_file_ids=(
                    {p: tuple(ids) for p, ids in replaced.items()} if replaced is not None else None
                ),
            )
            self.ctx.active.complete(inflight, encode_commit_metadata(metadata))
        return instant_time

    def _materialize(self, instant_time: str, spec: Base | Log, *, markers: bool) -> WriteStat:
        self.ctx.ensure_partition_metadata(spec.partition, instant_time)
        key = (spec.partition, spec.file_id)
        by_time = self.slices.setdefault(key, {})
        previous = max(by_time, default="null")
        token = self._token()
        if isinstance(spec, Base):
            name = base_file_name(spec.file_id, token, instant_time)
            by_time.setdefault(instant_time, _Slice()).base = name
            io_type = IOType.CREATE
        else:
            slice_time = spec.base_instant or (previous if by_time else instant_time)
            current = by_time.setdefault(slice_time, _Slice())
            name = log_file_name(spec.file_id, slice_time, len(current.logs) + 1, token)
            current.logs.append(name)
            io_type = IOType.APPEND
        relative = join_partition(spec.partition, name)
        self.file(relative).write_bytes(b"PAR1 placeholder " + name.encode())
        if markers:
            marker = (
                Path(self.ctx.marker_folder(instant_time))
                / spec.partition
                / marker_name(name, io_type)
            )
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_bytes(b"")
        return WriteStat(
            file_id=spec.file_id,
            path=relative,
            partition_path=spec.partition,
            prev_commit=previous,
            num_writes=1,
            num_inserts=1,
        )

    def _token(self) -> str:
        self._tokens += 1
        return f"0-1-{self._tokens}"

    # ---- services -----------------------------------------------------------------------------
    def compaction(
        self, *groups: tuple[str, str], execute: bool = True, time: str | None = None
    ) -> InstantTime:
        """Schedule (and by default run) a compaction of the latest slices of `groups`."""
        instant_time = self._instant_time(time)
        plan = {
            "operations": [self._compaction_operation(p, fid) for p, fid in groups],
            "extraMetadata": None,
            "version": 2,
            "strategy": None,
            "preserveHoodieMetadata": None,
        }
        requested = self.ctx.active.create_requested(
            instant_time, Action.COMPACTION, encode_container("HoodieCompactionPlan", plan)
        )
        for partition, file_id in groups:  # new logs go to the slice the compaction opens
            self.slices[(partition, file_id)].setdefault(instant_time, _Slice())
        if execute:
            inflight = self.ctx.active.transition_to_inflight(requested)
            stats = {}
            for partition, file_id in groups:
                stat = self._materialize(instant_time, Base(partition, file_id), markers=False)
                stats.setdefault(partition, []).append(stat)
            metadata = CommitMetadata(
                partition_to_write_stats={p: tuple(s) for p, s in stats.items()},
                operation_type=WriteOperationType.COMPACT,
                extra_metadata={"schema": ""},
                compacted=True,
            )
            self.ctx.active.complete(inflight, encode_commit_metadata(metadata))
        return instant_time

    def _compaction_operation(self, partition: str, file_id: str) -> dict:
        base_instant = max(self.slices[(partition, file_id)])
        current = self.slices[(partition, file_id)][base_instant]
        return {
            "baseInstantTime": base_instant,
            "deltaFilePaths": list(current.logs),
            "dataFilePath": current.base,
            "fileId": file_id,
            "partitionPath": partition,
            "metrics": {},
            "bootstrapFilePath": None,
        }

    def pending_clustering(self, *groups: tuple[str, str], time: str | None = None) -> InstantTime:
        """A scheduled (not executed) clustering of the latest slices of `groups`."""
        instant_time = self._instant_time(time)
        slices = []
        for partition, file_id in groups:
            current = self.slices[(partition, file_id)][max(self.slices[(partition, file_id)])]
            slices.append(
                {
                    "dataFilePath": self.ctx.path(join_partition(partition, current.base))
                    if current.base
                    else None,
                    "deltaFilePaths": list(current.logs),
                    "fileId": file_id,
                    "partitionPath": partition,
                    "bootstrapFilePath": None,
                    "version": 1,
                }
            )
        group = {
            "slices": slices,
            "metrics": {},
            "numOutputFileGroups": 1,
            "extraMetadata": None,
            "version": 1,
        }
        plan = {
            "inputGroups": [group],
            "strategy": None,
            "extraMetadata": {},
            "version": 1,
            "preserveHoodieMetadata": True,
        }
        requested = {
            "operationType": "CLUSTER",
            "clusteringPlan": plan,
            "extraMetadata": {},
            "version": 1,
        }
        self.ctx.active.create_requested(
            instant_time,
            Action.REPLACE_COMMIT,
            encode_container("HoodieRequestedReplaceMetadata", requested),
        )
        return instant_time

    def savepoint(self, instant_time: str, files: dict[str, list[str]]) -> None:
        """`<t>.savepoint.inflight` + `<t>.savepoint` naming `files` (names per partition)."""
        metadata = {
            "savepointedBy": "test",
            "savepointedAt": 0,
            "comments": "",
            "partitionMetadata": {
                p: {"partitionPath": p, "savepointDataFile": names} for p, names in files.items()
            },
            "version": 1,
        }
        meta = Path(self.ctx.meta_path)
        (meta / f"{instant_time}.savepoint.inflight").write_bytes(b"")
        content = encode_container("HoodieSavepointMetadata", metadata)
        (meta / f"{instant_time}.savepoint").write_bytes(content)
        self.ctx.active.reload()

    def heartbeat(self, instant_time: str, *, age_seconds: float = 0.0) -> Path:
        """`.hoodie/.heartbeat/<t>`, last refreshed `age_seconds` ago."""
        path = Path(self.ctx.meta_path) / ".heartbeat" / instant_time
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        moment = clock.time() - age_seconds
        os.utime(path, (moment, moment))
        return path

    # ---- inspection ---------------------------------------------------------------------------
    def file(self, relative: str) -> Path:
        path = Path(self.ctx.path(relative))
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def slice_files(self, partition: str, file_id: str, base_instant: str) -> list[str]:
        """Relative paths of one slice's files."""
        current = self.slices[(partition, file_id)][base_instant]
        names = ([current.base] if current.base else []) + current.logs
        return [join_partition(partition, n) for n in names]

    def data_files(self) -> set[str]:
        """Relative paths of every data file on disk."""
        root = Path(self.ctx.base_path)
        return {
            posixpath.relpath(str(p), str(root))
            for p in root.rglob("*")
            if p.is_file()
            and ".hoodie" not in p.relative_to(root).parts
            and not p.name.startswith(".hoodie_partition_metadata")
        }

    def instant(self, instant_time: str) -> Instant:
        found = self.ctx.active.timeline.find(instant_time)
        assert found is not None, instant_time
        return found


__all__ = ["Base", "Log", "State", "TimelineBuilder", "table_props"]
