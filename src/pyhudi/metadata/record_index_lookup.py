"""Reading the `record_index` metadata partition by key (Hudi's `HoodieBackedTableMetadata.
readRecordIndex` / `getRecordsByKeys`): no scan of the data table.

The partition's file groups (`record-index-NNNN-0`) sorted by file id; a key lives in file group
`file_group_index(key, n)`. One file group is read for a set of keys: the base HFile by seeking
each key (or one pass when most keys are asked for), then the log blocks that count for the data
table's timeline (`valid_instants`), newest last, DELETE blocks removing keys. Spark-free and
picklable: `RecordIndexFileGroups` goes into tasks as is.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.log.delete_content import decode_delete_records
from pyhudi.codec.metadata_keys import file_group_index
from pyhudi.codec.metadata_records import RecordLocation, decode_value
from pyhudi.exceptions import ConfigError, CorruptFileError
from pyhudi.file_group.log_scan import HFILE_AND_DELETE, InstantFilter, queued_blocks
from pyhudi.metadata.index_records import RECORD_INDEX_PARTITION
from pyhudi.metadata.reader import MetadataTable, has_metadata_table
from pyhudi.metadata.slices import MergeSlice, valid_instants
from pyhudi.model.enums import LogBlockType
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

#: Above this share of a base file's entries, one pass over it beats seeking each key.
_SCAN_SHARE = 0.05


def has_record_index(ctx: TableContext) -> bool:
    """The table's metadata table has a built `record_index` partition."""
    return RECORD_INDEX_PARTITION in ctx.config.metadata_partitions and has_metadata_table(ctx)


def require_record_index(ctx: TableContext, purpose: str = "the record index") -> None:
    """`ConfigError` naming the table when it has no record index to use."""
    if not has_record_index(ctx):
        raise ConfigError(
            f"{purpose} needs the metadata table's '{RECORD_INDEX_PARTITION}' partition, and "
            f"table {ctx.base_path} has none (hoodie.table.metadata.partitions: "
            f"{', '.join(ctx.config.metadata_partitions) or 'none'}); use another "
            f"hoodie.index.type, or build the record index with Apache Hudi"
        )


@dataclass(frozen=True)
class RecordIndexFileGroups:
    """The record index's file groups as of the latest instant, ready to be read in tasks."""

    storage: Storage
    metadata_base_path: str
    slices: tuple[MergeSlice, ...]
    instants: InstantFilter

    @classmethod
    def open(cls, ctx: TableContext, purpose: str = "the record index") -> RecordIndexFileGroups:
        """Raises `ConfigError` naming the table when it has no record index."""
        require_record_index(ctx, purpose)
        mdt = MetadataTable.open(ctx)
        slices = tuple(sorted(mdt.merge_slices(RECORD_INDEX_PARTITION), key=lambda s: s.file_id))
        if not slices:
            raise CorruptFileError(f"the record index of {ctx.base_path} has no file groups")
        instants = valid_instants(ctx.active, mdt.table.active, None)
        return cls(ctx.storage, mdt.table.base_path, slices, instants)

    @property
    def count(self) -> int:
        return len(self.slices)

    def index_of(self, key: str) -> int:
        return file_group_index(key, len(self.slices))

    def read(self, index: int, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """The live entries of `keys` in file group `index` (keys not there are absent)."""
        wanted = set(keys)
        piece = self.slices[index]
        found: dict[str, RecordLocation] = {}
        if piece.base_file is not None:
            path = self._path(piece.base_file)
            try:
                found.update(_read_base(self.storage.read_bytes(path), wanted))
            except CorruptFileError as err:
                raise CorruptFileError(f"record index: {path}: {err}") from err
        paths = [self._path(p) for p in piece.log_files]
        for block in queued_blocks(self.storage, paths, self.instants, HFILE_AND_DELETE):
            if block.block_type is LogBlockType.DELETE_BLOCK:
                for deleted in decode_delete_records(block.content):
                    found.pop(deleted.record_key or "", None)
                continue
            try:  # an HFILE block is an HFile: seek the keys as in the base file
                found.update(_read_base(bytes(block.content), wanted, block.schema_json))
            except CorruptFileError as err:
                raise CorruptFileError(
                    f"record index: a log block of {piece.file_id}: {err}"
                ) from err
        return found

    def lookup(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Every key's entry, each file group read once for its keys."""
        by_group: dict[int, list[str]] = {}
        for key in keys:
            by_group.setdefault(self.index_of(key), []).append(key)
        found: dict[str, RecordLocation] = {}
        for index, group_keys in sorted(by_group.items()):
            found.update(self.read(index, group_keys))
        return found

    def _path(self, relative: str) -> str:
        return posixpath.join(self.metadata_base_path, relative)


def _read_base(
    data: bytes, wanted: set[str], block_schema: str | None = None
) -> dict[str, RecordLocation]:
    reader = HFileReader(data)
    schema = reader.file_info.text("schema") or block_schema
    if not schema:
        raise CorruptFileError("metadata HFile has no Avro schema (FileInfo 'schema')")
    if len(wanted) > _SCAN_SHARE * max(reader.entry_count, 1):
        rows: Sequence[tuple[str, bytes | None]] = [
            (row.decode("utf-8", "surrogateescape"), value)
            for row, value in reader.items()
            if row.decode("utf-8", "surrogateescape") in wanted
        ]
    else:
        rows = [(key, reader.get(key)) for key in sorted(wanted)]
    found = {}
    for key, value in rows:
        if value is not None:
            location = decode_value(key, value, schema).location
            if location is not None:
                found[key] = location
    return found
