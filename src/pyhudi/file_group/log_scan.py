"""Scanning a file slice's log files into Arrow, with Hudi's merged-log-record semantics (§5.13).

1. Log files in ascending order, blocks in file order.
2. A block whose instant is after the query instant ends the scan. Data and delete blocks of
   instants that are not completed (and not older than the active timeline) are skipped.
3. A ROLLBACK command block drops the queued blocks of its target instant (and queued corrupt ones).
4. With 0.14.0 `BLOCK_IDENTIFIER` headers, only the attempt with the most blocks of an instant counts.
5. The surviving blocks become one Arrow table, oldest first: `__pyhudi_seq` orders the records,
   `__pyhudi_delete` marks deletes (delete blocks and `_hoodie_is_deleted` records).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.arrow_compute import nested_type
from pyhudi.codec.log import avro_columnar
from pyhudi.codec.log.avro_content import avro_record_count, decode_avro_records
from pyhudi.codec.log.delete_content import decode_delete_records
from pyhudi.codec.log.parquet_content import decode_parquet_block
from pyhudi.codec.log.reader import LocatedBlock, iter_blocks
from pyhudi.codec.schema import IS_DELETED_FIELD, PARTITION_PATH, RECORD_KEY, avro_to_arrow
from pyhudi.exceptions import CorruptFileError, UnsupportedOperationError
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.log_append import COLUMNAR_MIN_RECORDS
from pyhudi.merge.record_merger import DELETED, NATURAL, SEQ
from pyhudi.model.enums import CommandBlockType, HeaderMetadataType, LogBlockType
from pyhudi.storage import Storage

#: CDC blocks are not data: they live in `.cdc` log files, which record readers skip (§3.5).
CDC_SUFFIX = ".cdc"
_DATA = (LogBlockType.AVRO_DATA_BLOCK, LogBlockType.PARQUET_DATA_BLOCK)
DATA_AND_DELETE = frozenset((*_DATA, LogBlockType.DELETE_BLOCK))
#: What the metadata table's log files hold.
HFILE_AND_DELETE = frozenset((LogBlockType.HFILE_DATA_BLOCK, LogBlockType.DELETE_BLOCK))


@dataclass(frozen=True)
class InstantFilter:
    """Which block instants a scan accepts."""

    visible: frozenset[str]  # completed instants at or before the query instant
    as_of: str | None  # a block after this instant ends the scan
    timeline_start: str | None = None  # blocks older than the active timeline count as committed
    start_exclusive: str | None = None  # incremental windows
    end_inclusive: str | None = None

    def is_committed(self, instant: str) -> bool:
        return instant in self.visible or (
            self.timeline_start is not None and instant < self.timeline_start
        )

    def in_range(self, instant: str) -> bool:
        if self.start_exclusive is not None and instant <= self.start_exclusive:
            return False
        return self.end_inclusive is None or instant <= self.end_inclusive


def queued_blocks(
    storage: Storage,
    log_paths: Iterable[str],
    instants: InstantFilter,
    kinds: frozenset[LogBlockType] = DATA_AND_DELETE,
    *,
    read_content: bool = True,
) -> list[LocatedBlock]:
    """The blocks of `kinds` (data and delete blocks by default) that count, oldest first
    (`read_content=False`: headers only, the blocks' content cannot be read afterwards)."""
    queue: list[LocatedBlock] = []
    for path in log_paths:
        if path.endswith(CDC_SUFFIX):
            continue  # a file slice's CDC log (Hudi keeps it in the slice; readers skip it)
        with storage.open_input(path) as handle:
            for block in iter_blocks(handle, read_content=read_content):
                if block.is_corrupt:
                    queue.append(block)
                    continue
                instant = block.instant_time or ""
                if instants.as_of is not None and instant > instants.as_of:
                    if block.block_type is LogBlockType.COMMAND_BLOCK:
                        # A rollback's instant is later than that of the write that rolled back
                        # the failed one before it started: it does not end the scan (hudi-rs).
                        continue
                    return _final(queue)
                if block.block_type is LogBlockType.COMMAND_BLOCK:
                    if block.command_type is CommandBlockType.ROLLBACK_BLOCK:
                        target = block.target_instant_time
                        queue = [b for b in queue if not b.is_corrupt and b.instant_time != target]
                    continue
                if block.block_type not in kinds:
                    continue  # HFILE blocks belong to the metadata table
                if instants.is_committed(instant) and instants.in_range(instant):
                    check_full_records(block, path)
                    queue.append(block)
    return _final(queue)


def check_full_records(block: LocatedBlock, path: str) -> None:
    """Partial-update blocks (`IS_PARTIAL=true`, table versions 8 and 9) hold only some columns per
    record; merging them as whole records would null the others, so they are refused."""
    if block.header.get(HeaderMetadataType.IS_PARTIAL, "").strip().lower() == "true":
        raise UnsupportedOperationError(
            f"log file {path} has a partial-update block (instant {block.instant_time}, header "
            "IS_PARTIAL=true); pyhudi does not read partial updates"
        )


def _final(queue: list[LocatedBlock]) -> list[LocatedBlock]:
    blocks = [b for b in queue if not b.is_corrupt]
    return _drop_duplicate_attempts(blocks)


def _drop_duplicate_attempts(blocks: list[LocatedBlock]) -> list[LocatedBlock]:
    attempts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for block in blocks:
        ident = block.header.get(HeaderMetadataType.BLOCK_IDENTIFIER)
        if ident:
            attempts[block.instant_time or ""][ident.split(",")[0]] += 1
    if not any(len(a) > 1 for a in attempts.values()):
        return blocks
    best = {instant: max(counts, key=counts.__getitem__) for instant, counts in attempts.items()}
    kept = []
    for block in blocks:
        ident = block.header.get(HeaderMetadataType.BLOCK_IDENTIFIER)
        if ident and best.get(block.instant_time or "") != ident.split(",")[0]:
            continue
        kept.append(block)
    return kept


def log_records(
    blocks: list[LocatedBlock], file_schema: pa.Schema, ordering_field: str | None
) -> pa.Table:
    """All records of `blocks` as one table in `file_schema`, plus seq/delete/natural columns."""
    tables = []
    offset = 0
    for block in blocks:
        table = _block_table(block, file_schema, ordering_field)
        n = table.num_rows
        seq = pa.array(np.arange(offset, offset + n, dtype=np.int64))
        tables.append(table.append_column(SEQ, seq))
        offset += n
    if not tables:
        return _empty(file_schema)
    return pa.concat_tables(tables)


def log_record_keys(
    blocks: list[LocatedBlock], file_schema: pa.Schema, ordering_field: str | None
) -> pa.ChunkedArray:
    """The record key of every record of `blocks` (data and delete records, duplicates kept).

    Under commit-time ordering a base row is replaced or deleted exactly when its key is among
    these, so a merge-on-read read finds the base rows to drop without decoding whole records:
    columnar Avro blocks are decoded up to the record key field only.
    """
    chunks = [_block_keys(block, file_schema, ordering_field) for block in blocks]
    return pa.chunked_array(chunks, pa.string())


def _block_keys(
    block: LocatedBlock, file_schema: pa.Schema, ordering_field: str | None
) -> pa.Array:
    content, schema_json = block.content, block.schema_json or ""
    specs = avro_columnar.column_specs(schema_json) if schema_json else None
    if (
        block.block_type is LogBlockType.AVRO_DATA_BLOCK
        and content
        and specs
        and any(spec.name == RECORD_KEY for spec in specs)
        and avro_record_count(content) >= COLUMNAR_MIN_RECORDS
    ):
        with contextlib.suppress(CorruptFileError):  # the lenient whole-record path decides
            keys = avro_columnar.decode_block_fields(content, schema_json, [RECORD_KEY])
            return keys.column(RECORD_KEY).combine_chunks().cast(pa.string())
    table = _block_table(block, file_schema, ordering_field)
    return table.column(RECORD_KEY).combine_chunks().cast(pa.string())


def _empty(file_schema: pa.Schema) -> pa.Table:
    schema = file_schema.append(pa.field(DELETED, pa.bool_())).append(pa.field(NATURAL, pa.bool_()))
    return schema.empty_table().append_column(SEQ, pa.array([], pa.int64()))


def _block_table(
    block: LocatedBlock, file_schema: pa.Schema, ordering_field: str | None
) -> pa.Table:
    if block.block_type is LogBlockType.DELETE_BLOCK:
        return _delete_table(block, file_schema, ordering_field)
    if block.block_type is LogBlockType.PARQUET_DATA_BLOCK:
        data = decode_parquet_block(block.content) if block.content else pa.table({})
    else:
        data = _avro_table(block.content, block.schema_json)
    table = conform(data, file_schema)
    deleted = (
        pc.fill_null(table.column(IS_DELETED_FIELD).cast(pa.bool_()), False)
        if IS_DELETED_FIELD in table.column_names
        else pa.repeat(False, table.num_rows)
    )
    return table.append_column(DELETED, deleted).append_column(
        NATURAL, pa.repeat(False, table.num_rows)
    )


def _avro_table(content: bytes, schema_json: str | None) -> pa.Table:
    """An Avro data block as Arrow: the columnar codec for flat schemas, fastavro otherwise."""
    if not schema_json:
        return pa.table({})
    if avro_columnar.supports(schema_json) and avro_record_count(content) >= COLUMNAR_MIN_RECORDS:
        try:
            return avro_columnar.decode_block_content(content, schema_json)
        except CorruptFileError:
            pass  # e.g. records longer than their content (tolerated, as Java does): the lenient path
    records = decode_avro_records(content, schema_json)
    return pa.Table.from_pylist(records, schema=avro_to_arrow(schema_json))


def _delete_table(
    block: LocatedBlock, file_schema: pa.Schema, ordering_field: str | None
) -> pa.Table:
    records = decode_delete_records(block.content)
    columns: dict[str, pa.Array] = {
        RECORD_KEY: pa.array([r.record_key for r in records], pa.string()),
        PARTITION_PATH: pa.array([r.partition_path for r in records], pa.string()),
    }
    fields = [f.strip() for f in (ordering_field or "").split(",") if f.strip()]
    nested: dict[str, dict[tuple[str, ...], pa.Array]] = {}
    for index, name in enumerate(fields):
        top, *path = name.split(".")
        if top not in file_schema.names:
            continue
        values = [None if r.is_natural_order else _nth(r.ordering_value, index) for r in records]
        target = nested_type(file_schema.field(top).type, path)
        if target is None:
            continue
        with contextlib.suppress(pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            nested.setdefault(top, {})[tuple(path)] = pa.array(values).cast(target)
    for top, parts in nested.items():
        columns[top] = _carrying(file_schema.field(top).type, parts, len(records))
    table = conform(pa.table(columns) if records else pa.table({}), file_schema)
    natural = pa.array(
        [r.is_natural_order or r.ordering_value is None for r in records], pa.bool_()
    )
    return table.append_column(DELETED, pa.repeat(True, table.num_rows)).append_column(
        NATURAL, natural
    )


def _carrying(data_type: pa.DataType, parts: dict[tuple[str, ...], pa.Array], n: int) -> pa.Array:
    """An array of `data_type` holding `parts` (values by nested field path; `()`: the array
    itself) and nulls elsewhere: a delete's ordering value in a nested ordering field (`a.b`)."""
    if () in parts:
        return parts[()]
    children = []
    for child in data_type:
        inner = {path[1:]: values for path, values in parts.items() if path[0] == child.name}
        children.append(_carrying(child.type, inner, n) if inner else pa.nulls(n, child.type))
    return pa.StructArray.from_arrays(children, fields=list(data_type))


def _nth(value: object, index: int) -> object:
    """Field `index` of a delete's ordering value (a list when there are several ordering fields)."""
    if isinstance(value, list | tuple):
        return value[index] if index < len(value) else None
    return value if index == 0 else None
