"""Reading the `record_index` metadata partition by key (Hudi's `HoodieBackedTableMetadata.
readRecordIndex` / `getRecordsByKeys`): no scan of the data table.

The partition's file groups (`record-index-NNNN-0`) sorted by file id; a key lives in file group
`file_group_index(key, n)`. One file group is read for a set of keys: in the base HFile only
the data blocks that may hold one of them (block index), their rows matched against the keys as
one Arrow array (`HFileReader.cell_columns`: no Python object per cell) and only the matched
values decoded, each distinct value once; then the log blocks that count for the data table's
timeline (`valid_instants`) the same way, newest last, DELETE blocks removing keys. Spark-free
and picklable: `RecordIndexFileGroups` goes into tasks as is.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
        wanted = _Wanted.of(keys)
        piece = self.slices[index]
        found: dict[str, RecordLocation] = {}
        decoded: dict[bytes, RecordLocation | None] = {}
        if piece.base_file is not None:
            path = self._path(piece.base_file)
            try:
                found.update(_read_base(self.storage.read_bytes(path), wanted, None, decoded))
            except CorruptFileError as err:
                raise CorruptFileError(f"record index: {path}: {err}") from err
        paths = [self._path(p) for p in piece.log_files]
        for block in queued_blocks(self.storage, paths, self.instants, HFILE_AND_DELETE):
            if block.block_type is LogBlockType.DELETE_BLOCK:
                for deleted in decode_delete_records(block.content):
                    found.pop(deleted.record_key or "", None)
                continue
            try:  # an HFILE block is an HFile: seek the keys as in the base file
                found.update(_read_base(bytes(block.content), wanted, block.schema_json, decoded))
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


@dataclass(frozen=True)
class _Wanted:
    """The keys looked up in one file group: sorted UTF-8 bytes, and as an Arrow value set."""

    probes: list[bytes]
    value_set: pa.Array

    @classmethod
    def of(cls, keys: Iterable[str]) -> _Wanted:
        probes = sorted({key.encode("utf-8", "surrogateescape") for key in keys})
        return cls(probes, pa.array(probes, pa.binary()))


def _read_base(
    data: bytes,
    wanted: _Wanted,
    block_schema: str | None = None,
    decoded: dict[bytes, RecordLocation | None] | None = None,
) -> dict[str, RecordLocation]:
    """The entries of `wanted` in one record-index HFile (a base file or an HFILE block).

    Only the data blocks that may hold a wanted key are read; their rows are matched as one Arrow
    array, and only the matched values are decoded, each distinct value once (`decoded`: the
    entries of one data file group at one instant share their bytes)."""
    reader = HFileReader(data)
    schema = reader.file_info.text("schema") or block_schema
    if not schema:
        raise CorruptFileError("metadata HFile has no Avro schema (FileInfo 'schema')")
    cache = {} if decoded is None else decoded
    found: dict[str, RecordLocation] = {}
    for index in reader.blocks_holding(wanted.probes):
        cells = reader.cell_columns(index)
        hits = pc.is_in(cells.rows(), value_set=wanted.value_set).to_numpy(zero_copy_only=False)
        for position in np.flatnonzero(hits).tolist():
            key = cells.row(position).decode("utf-8", "surrogateescape")
            if key in found:
                continue  # the first cell of a row wins, as `HFileReader.get`
            value = cells.value(position)
            if value not in cache:
                cache[value] = decode_value(key, value, schema).location
            location = cache[value]
            if location is not None:
                found[key] = location
    return found
