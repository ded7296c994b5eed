"""Reading a data table's metadata table (`.hoodie/metadata`): merged records per partition.

`MetadataTable.open(ctx)` opens the metadata table of the data table `ctx`; `as_of` (a data-table
instant) bounds what is merged (latest when None). The `files` partition answers
`all_partitions()` and `files_in(partition)`; `records(partition)` gives any partition's merged
`MetadataRecord`s by key (`column_stats`, `bloom_filters`, `record_index`, ... decoded, not yet
used by reads). Merging: base HFile records, then the counted log blocks in order, each record
combined over the previous one of its key (`merge_records`), delete-block keys removed.

```python
ctx = TableContext.open("/data/trips")
mdt = MetadataTable.open(ctx)
mdt.all_partitions()           # ['city=chennai', 'city=san_francisco', ...]
mdt.files_in("city=chennai")   # {'<file name>': size_bytes, ...}
```
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from pyhudi.codec.log.delete_content import decode_delete_records
from pyhudi.codec.log.reader import LocatedBlock
from pyhudi.codec.metadata_records import (
    ALL_PARTITIONS_KEY,
    NON_PARTITIONED_NAME,
    MetadataRecord,
    data_partition,
    iter_hfile_records,
    merge_records,
)
from pyhudi.config import table as keys
from pyhudi.exceptions import CorruptFileError, TableNotFoundError, UnsupportedOperationError
from pyhudi.file_group.log_scan import HFILE_AND_DELETE, InstantFilter, queued_blocks
from pyhudi.fs_view import FileSystemView
from pyhudi.metadata.slices import MergeSlice, merge_slices, valid_instants
from pyhudi.model.enums import LogBlockType
from pyhudi.table.context import TableContext
from pyhudi.timeline import META_FOLDER

#: The metadata table's folder under the data table's `.hoodie/`.
METADATA_TABLE_FOLDER = "metadata"
FILES_PARTITION = "files"


def metadata_table_path(ctx: TableContext) -> str:
    return posixpath.join(ctx.meta_path, METADATA_TABLE_FOLDER)


def has_metadata_table(ctx: TableContext) -> bool:
    """A metadata table exists (its own `.hoodie/` folder is there)."""
    return ctx.storage.exists(posixpath.join(metadata_table_path(ctx), META_FOLDER))


def metadata_partition_names(ctx: TableContext) -> list[str]:
    """Every metadata partition a table has: built and inflight ones (`hoodie.properties`) and the
    partition folders present under `.hoodie/metadata` (even when the properties do not name them)."""
    names = set(ctx.config.metadata_partitions)
    names |= set(_fields(ctx.config.get(keys.METADATA_PARTITIONS_INFLIGHT.key)))
    for status in ctx.storage.list_dir(metadata_table_path(ctx)):
        if status.is_dir and not status.name.startswith("."):
            names.add(status.name)
    return sorted(names)


def _fields(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@dataclass(frozen=True)
class MetadataPartitionSummary:
    """One metadata partition: its file groups, files, bytes and live (merged) records."""

    name: str
    file_groups: tuple[MergeSlice, ...]
    record_count: int

    @property
    def size_bytes(self) -> int:
        return sum(g.size_bytes for g in self.file_groups)

    @property
    def base_file_count(self) -> int:
        return sum(g.base_file is not None for g in self.file_groups)

    @property
    def log_file_count(self) -> int:
        return sum(len(g.log_files) for g in self.file_groups)


@dataclass
class MetadataTable:
    """The metadata table of one data table, read as of a data-table instant."""

    data: TableContext
    table: TableContext
    as_of: str | None = None
    _records: dict[str, dict[str, MetadataRecord]] = field(default_factory=dict, repr=False)
    _view: FileSystemView | None = field(default=None, repr=False)

    @classmethod
    def open(cls, data: TableContext, as_of: str | None = None) -> MetadataTable:
        if not has_metadata_table(data):
            raise TableNotFoundError(
                f"table {data.base_path} has no metadata table (.hoodie/metadata)"
            )
        return cls(data, TableContext.open_at(data.storage, metadata_table_path(data)), as_of)

    # ---- partitions of the metadata table ------------------------------------------------------
    def partitions(self) -> list[str]:
        """The metadata partitions: `hoodie.table.metadata.partitions`, else the folders present."""
        enabled = self.data.config.metadata_partitions
        if enabled:
            return sorted(enabled)
        return sorted(p for p in self.table.view().partition_paths() if p)

    def _files_records(self) -> dict[str, MetadataRecord]:
        if FILES_PARTITION not in self.partitions():
            raise UnsupportedOperationError(
                f"the metadata table of {self.data.base_path} has no '{FILES_PARTITION}' "
                f"partition (it has: {', '.join(self.partitions()) or 'none'}); list the files"
            )
        return self.records(FILES_PARTITION)

    def merge_slices(self, partition: str) -> list[MergeSlice]:
        return merge_slices(self._listed_view(), partition, self.as_of)

    def _listed_view(self) -> FileSystemView:
        if self._view is None:
            self._view = self.table.view()  # one listing of the metadata table per handle
        return self._view

    def file_stamps(self, partition: str) -> tuple[tuple[str, int, int | None], ...]:
        """(name, size, modification time) of every file in a metadata partition's folder: what
        tells a partition rewritten under the same names apart (a table deleted and created
        again at the same instant times, e.g. a save-mode-overwrite bootstrap)."""
        statuses = self._listed_view().listing.files.get(partition, ())
        return tuple(sorted((s.name, s.size_bytes, s.mtime_ns) for s in statuses))

    def records(self, partition: str) -> dict[str, MetadataRecord]:
        """Every live record of a metadata partition, merged, by key."""
        if partition not in self._records:
            merged: dict[str, MetadataRecord] = {}
            instants = valid_instants(self.data.active, self.table.active, self.as_of)
            for piece in self.merge_slices(partition):
                merged.update(self.merge_file_group(piece, instants))
            self._records[partition] = merged
        return self._records[partition]

    def records_with_prefix(
        self, partition: str, prefixes: Iterable[str]
    ) -> dict[str, MetadataRecord]:
        """The live records of a metadata partition whose keys start with one of `prefixes`,
        merged as `records` merges them (e.g. the `column_stats` of some columns: their keys
        start with the column's hash); only the HFile blocks that may hold them are decoded."""
        wanted = tuple(sorted(set(prefixes)))
        if partition in self._records:
            return {k: r for k, r in self._records[partition].items() if k.startswith(wanted)}
        merged: dict[str, MetadataRecord] = {}
        instants = valid_instants(self.data.active, self.table.active, self.as_of)
        for piece in self.merge_slices(partition):
            merged.update(self.merge_file_group(piece, instants, wanted))
        return merged

    def summaries(self) -> list[MetadataPartitionSummary]:
        return [
            MetadataPartitionSummary(p, tuple(self.merge_slices(p)), len(self.records(p)))
            for p in self.partitions()
        ]

    # ---- the `files` partition -----------------------------------------------------------------
    def all_partitions(self) -> list[str]:
        """Data partition paths ('' for a non-partitioned table), from `__all_partitions__`."""
        record = self._files_records().get(ALL_PARTITIONS_KEY)
        return sorted(data_partition(p) for p in (record.live_files if record else {}))

    def files_in(self, partition: str) -> dict[str, int]:
        """File name -> size in bytes of the data partition `partition` ('' = non-partitioned)."""
        key = partition or NON_PARTITIONED_NAME
        record = self._files_records().get(key)
        return dict(sorted(record.live_files.items())) if record else {}

    def all_files(self) -> dict[str, dict[str, int]]:
        """Every listed data partition -> its files and sizes."""
        records = self._files_records()  # once, not once per partition
        listed = records.get(ALL_PARTITIONS_KEY)
        result: dict[str, dict[str, int]] = {}
        for name in sorted(listed.live_files if listed else {}):
            record = records.get(name)
            result[data_partition(name)] = dict(sorted(record.live_files.items())) if record else {}
        return dict(sorted(result.items()))

    # ---- merging one file group ----------------------------------------------------------------
    def merge_file_group(
        self, piece: MergeSlice, instants: InstantFilter, prefixes: Sequence[str] | None = None
    ) -> dict[str, MetadataRecord]:
        """The live records of one file group: its base HFile, then the blocks `instants` accepts
        (with `prefixes`: only the records whose key starts with one of them)."""
        merged: dict[str, MetadataRecord] = {}
        if piece.base_file is not None:
            path = self.table.path(piece.base_file)
            with _naming(path):
                data = self.table.storage.read_bytes(path)
                merged.update((r.key, r) for r in iter_hfile_records(data, None, prefixes))
        paths = [self.table.path(p) for p in piece.log_files]
        with _naming(", ".join(paths)):
            blocks = queued_blocks(self.table.storage, paths, instants, HFILE_AND_DELETE)
        for block in blocks:
            with _naming(f"a log block of instant {block.instant_time} in {piece.file_id}"):
                _apply_block(merged, block, prefixes)
        return merged


def _apply_block(
    merged: dict[str, MetadataRecord], block: LocatedBlock, prefixes: Sequence[str] | None
) -> None:
    """Fold one HFILE or DELETE block into `merged` (newer over older, deleted keys removed)."""
    if block.block_type is LogBlockType.DELETE_BLOCK:
        for deleted in decode_delete_records(block.content):
            merged.pop(deleted.record_key or "", None)
        return
    for record in iter_hfile_records(block.content, block.schema_json, prefixes):
        previous = merged.get(record.key)
        merged[record.key] = record if previous is None else merge_records(previous, record)


@contextmanager
def _naming(where: str) -> Iterator[None]:
    """Corrupt metadata-table bytes are reported with the file (or block) they came from."""
    try:
        yield
    except CorruptFileError as err:
        raise CorruptFileError(f"metadata table: {where}: {err}") from err
