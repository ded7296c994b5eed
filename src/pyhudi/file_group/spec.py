"""`WriteTaskSpec`: the small picklable description a write task gets (where the table is, the
instant, the target Arrow schema, the sizing and bloom settings), with the table-layout steps every
task takes first: its marker, and the partition metafile."""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

import pyarrow as pa

from pyhudi.file_group.cdc_log import CdcSpec
from pyhudi.model.enums import IOType
from pyhudi.storage import Storage
from pyhudi.storage.segments import refused_partition_path
from pyhudi.table import layout
from pyhudi.writer.config import BloomConfig, SizingConfig


@dataclass(frozen=True)
class WriteTaskSpec:
    storage: Storage
    base_path: str
    instant_time: str
    #: The file schema: the five meta columns, then the data columns (all nullable).
    file_schema: pa.Schema
    sizing: SizingConfig
    bloom: BloomConfig
    populate_meta_fields: bool = True
    #: (partition, file id) -> source file of bootstrap skeletons (their rows are stitched on merge).
    bootstrap_sources: Mapping[tuple[str, str], str] = field(default_factory=dict)
    #: Return each base file's record-key changes (`pyhudi.file_group.index_results`): the table
    #: maintains a record index.
    collect_keys: bool = False
    #: Return each written file's column ranges: the table maintains `column_stats`.
    collect_column_ranges: bool = False
    #: The tasks check the partition paths (the Spark writes that do not scan their records
    #: before the instant, `writer.partition_check`): `refuses` a path that is no usable folder.
    check_partitions: bool = False
    #: The path of the instant's inflight file: a task that finds it gone once its files are
    #: closed (the write was aborted while the task ran) removes them (`writer.late_tasks`).
    #: Empty: not checked.
    inflight_file: str = ""
    #: The table writes change-data-capture logs: every merge into an existing base file writes
    #: one beside its new base file (`pyhudi.file_group.cdc_log`). None: CDC is off.
    cdc: CdcSpec | None = None

    def refuses(self, partition: str) -> bool:
        """Whether to write nothing in `partition` and return `stats.refused_row` for it."""
        return self.check_partitions and refused_partition_path(partition)

    def partition_dir(self, partition: str) -> str:
        return posixpath.join(self.base_path, partition) if partition else self.base_path

    def marker_dir(self) -> str:
        return layout.marker_folder(self.base_path, self.instant_time)

    def create_marker(self, partition: str, data_file_name: str, io_type: IOType) -> None:
        path = layout.marker_path(
            self.base_path, self.instant_time, partition, data_file_name, io_type
        )
        with contextlib.suppress(FileExistsError):  # a retried task attempt writing the same name
            self.storage.create_new(path, b"")

    def ensure_partition_metadata(self, partition: str) -> None:
        layout.ensure_partition_metadata(
            self.storage, self.partition_dir(partition), partition, self.instant_time
        )
