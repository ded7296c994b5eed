"""`SliceTask`: the small, picklable description of one file-slice read that executors receive."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from pyhudi.storage import Storage


@dataclass(frozen=True)
class SliceTask:
    """A picklable description of one slice read."""

    storage: Storage
    base_path: str
    partition_path: str
    file_id: str
    base_file: str | None  # relative path
    log_files: tuple[str, ...]  # relative paths, ascending
    file_schema: pa.Schema
    visible_instants: frozenset[str]
    as_of: str | None
    commit_times: frozenset[str] | None = None
    merge_mode: str = "COMMIT_TIME_ORDERING"
    ordering_field: str | None = None
    skip_merge: bool = False
    bootstrap_source: str | None = None
    timeline_start: str | None = None
    #: Table version 8 and later: records merge by Hudi 1.x's merge modes, where a log delete
    #: carrying ordering values competes with log records and the base record by them (version 6:
    #: Hudi 0.15's payloads; `pyhudi.merge.record_merger` has both rules).
    ordered_deletes: bool = False

    def path(self, relative: str) -> str:
        return f"{self.base_path}/{relative}" if relative else self.base_path
