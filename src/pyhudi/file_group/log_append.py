"""Appending a write's records of one file group as a new log file (merge-on-read, §5.4, §5.12).

Every write to a file slice creates the next log version `.<fileId>_<baseInstant>.log.<v>_<token>`,
holding one data block (Avro, or Parquet with `hoodie.logfile.data.block.format=parquet`) and, when
there are deletes, one delete block; both carry the INSTANT_TIME and SCHEMA headers. Existing log
files are never rewritten. The APPEND marker names the slice's base-file-style name (HUDI-1517).
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.arrow_compute import field_values
from pyhudi.codec.file_names import base_file_name, log_file_name, parse_base_file
from pyhudi.codec.log import avro_columnar
from pyhudi.codec.log.block import LogBlock
from pyhudi.codec.log.delete_content import DeleteRecord, OrderingWrapper, ordering_wrapper_for
from pyhudi.codec.log.positions import encode_positions
from pyhudi.codec.log.writer import avro_data_block, delete_block, encode_blocks, parquet_data_block
from pyhudi.codec.schema import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY
from pyhudi.file_group.base_file import conform
from pyhudi.file_group.base_formats import read_base_file
from pyhudi.file_group.column_ranges import table_column_ranges
from pyhudi.file_group.index_results import COLUMN_RANGES, encode_column_ranges
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.merge.ordering import ordering_columns
from pyhudi.model.enums import HeaderMetadataType, IOType, LogBlockType
from pyhudi.table.faults import fault_point

#: Below this many records fastavro's per-record path is cheaper than the columnar codec's set-up.
COLUMNAR_MIN_RECORDS = 64


@dataclass(frozen=True)
class SliceState:
    """What a task needs to know of the file slice it appends to."""

    base_instant: str
    base_file_name: str | None
    log_file_names: tuple[str, ...]
    next_version: int


@dataclass(frozen=True)
class LogSpec:
    schema_json: str  # writer schema with meta fields (SCHEMA header)
    block_format: str  # "avro" | "parquet"
    compression: str = "gzip"
    #: Put the RECORD_POSITIONS header on blocks whose records are all rows of the slice's base
    #: file (`hoodie.write.record.positions`; parquet base files with stored record keys only).
    record_positions: bool = False
    #: Table version 8+ (Hudi 1.x): every write appends a log file of its own, named by its instant
    #: (version 1), which the completion time files into a slice; 6 appends the slice's next version.
    table_version: int = 6


@dataclass(frozen=True)
class KnownPositions:
    """The appended records' row positions in the slice's base file as the index lookup found
    them (aligned with the upserts and the deletes; null: not a row of the base file)."""

    upserts: pa.ChunkedArray | pa.Array
    deletes: pa.ChunkedArray | pa.Array


def avro_ready_rows(table: pa.Table) -> list[dict[str, Any]]:
    """Rows as fastavro takes them: timestamps as epoch micros, dates as days, maps as dicts."""
    columns = []
    for field in table.schema:
        column = table.column(field.name)
        if pa.types.is_timestamp(field.type):
            column = pc.cast(column.cast(pa.timestamp("us", tz=field.type.tz)), pa.int64())
        elif pa.types.is_date32(field.type):
            column = column.cast(pa.int32())
        columns.append(column)
    rows = pa.Table.from_arrays(columns, names=table.column_names).to_pylist()
    maps = [f.name for f in table.schema if pa.types.is_map(f.type)]
    for row in rows if maps else ():
        for name in maps:
            if row[name] is not None:
                row[name] = dict(row[name])
    return rows


def append_log(
    spec: WriteTaskSpec,
    log_spec: LogSpec,
    state: SliceState,
    partition: str,
    file_id: str,
    token: str,
    task_partition_id: int,
    records: pa.Table,
    deletes: pa.Table,
    *,
    num_updates: int,
    positions: KnownPositions | None = None,
    delete_ordering: str | None = None,
) -> dict[str, Any]:
    """Append `records` (upserts) and `deletes` as the slice's next log file; its stats row.
    `positions`: from the index lookup (else the base file's keys are read, when positions go on).
    `delete_ordering`: the ordering field whose values the deletes carry (`_hoodie_is_deleted`
    upserts under event-time ordering); None: natural order."""
    started = time.monotonic()
    own_file = log_spec.table_version >= 8
    slice_in_stat = not own_file or spec.cdc is not None
    log_instant = spec.instant_time if own_file else state.base_instant
    version = 1 if own_file else state.next_version
    name = log_file_name(file_id, log_instant, version, token)
    spec.ensure_partition_metadata(partition)
    spec.create_marker(partition, base_file_name(file_id, token, log_instant), IOType.APPEND)
    blocks = []
    side: dict[str, Any] = {}
    allowed = _positions_allowed(spec, log_spec, state, partition, file_id)
    known = positions if allowed else None
    located = _base_keys(spec, state, partition) if allowed and known is None else None
    if records.num_rows:
        records, upsert_positions = _in_position_order(records, located, known and known.upserts)
        table = _log_records(spec, records, file_id, task_partition_id)
        block = _data_block(spec, log_spec, table)
        block = _with_positions(block, upsert_positions)
        blocks.append(_with_base_instant(block, state, log_spec))
        if spec.collect_column_ranges:
            side[COLUMN_RANGES] = encode_column_ranges(table_column_ranges(name, table))
    if deletes.num_rows:
        deletes, delete_positions = _in_position_order(deletes, located, known and known.deletes)
        entries = delete_entries(deletes, delete_ordering)
        block = delete_block(spec.instant_time, entries, schema_json=log_spec.schema_json)
        block = _with_positions(block, delete_positions)
        blocks.append(_with_base_instant(block, state, log_spec))
    data = encode_blocks(blocks, table_version=log_spec.table_version)
    spec.storage.create_new(posixpath.join(spec.partition_dir(partition), name), data)
    fault_point("write.during_data_files")  # executor side: a log file is complete
    return {
        "partition_path": partition,
        "file_id": file_id,
        "file_name": name,
        "io_type": IOType.APPEND.value,
        "prev_commit": state.base_instant if slice_in_stat else log_instant,
        "num_writes": records.num_rows,
        "num_inserts": records.num_rows - num_updates,
        "num_updates": num_updates,
        "num_deletes": deletes.num_rows,
        "file_size_bytes": len(data),
        "write_bytes": len(data),
        "runtime_ms": int((time.monotonic() - started) * 1000),
        "log_version": version,
        "log_offset": 0,
        # Hudi 1.x's stat names the new log file only, and no base file, unless the table has
        # CDC on: then, as at version 6, the slice it appends to (Hudi's CDC query reads it).
        "base_file": (state.base_file_name or "") if slice_in_stat else "",
        "log_files": ",".join([*state.log_file_names, name]) if slice_in_stat else name,
        **side,
    }


def delete_entries(deletes: pa.Table, ordering_field: str | None) -> list[DeleteRecord]:
    """The delete block's records: with the ordering value as Hudi 0.15 writes it for an upsert
    carrying `_hoodie_is_deleted=true` (`DeleteRecord.create(key, record.getOrderingValue())`, the
    wrapper of the field's Java class), so that the log scanner ignores the delete against an
    earlier log record with a greater value; several ordering fields (`a,b`, tables of version 8
    and 9) as Hudi 1.2 writes them, an `ArrayWrapper` of the fields' wrapped values. Without
    `ordering_field` (the `delete` operation: `EmptyHoodieRecordPayload`), a null value, or a field
    type pyhudi does not wrap: `IntWrapper(0)`, natural order, the delete always applies."""
    keys = deletes.column(RECORD_KEY).to_pylist()
    partitions = deletes.column(PARTITION_PATH).to_pylist()
    natural = [DeleteRecord(k, p, 0) for k, p in zip(keys, partitions)]
    columns, wrappers = [], []
    for name in ordering_columns(ordering_field):
        values = field_values(deletes, name)
        wrapper = ordering_wrapper_for(values.type) if values is not None else None
        if values is None or wrapper is None:
            return natural
        columns.append(values.to_pylist())
        wrappers.append(wrapper)
    if not columns:
        return natural
    if len(columns) == 1:
        return [
            DeleteRecord(k, p, v, wrappers[0]) if v is not None else record
            for k, p, v, record in zip(keys, partitions, columns[0], natural)
        ]
    array, elements = OrderingWrapper.ARRAY, tuple(wrappers)
    return [
        record if None in values else DeleteRecord(k, p, values, array, elements)
        for k, p, record, values in zip(keys, partitions, natural, zip(*columns))
    ]


def _positions_allowed(
    spec: WriteTaskSpec, log_spec: LogSpec, state: SliceState, partition: str, file_id: str
) -> bool:
    """The blocks may carry positions: the log belongs to the base file's slice (not to a slice a
    pending compaction opened, whose base file does not exist yet), and the base file is a
    parquet file with stored keys (not a bootstrap skeleton)."""
    name = state.base_file_name
    if not log_spec.record_positions or not name or (partition, file_id) in spec.bootstrap_sources:
        return False
    parsed = parse_base_file(partition, name)
    return (
        parsed is not None
        and parsed.instant_time == state.base_instant
        and name.endswith(".parquet")
    )


def _base_keys(spec: WriteTaskSpec, state: SliceState, partition: str) -> pa.ChunkedArray:
    """The record keys of the slice's base file in row order (positions the index did not give)."""
    path = posixpath.join(spec.partition_dir(partition), state.base_file_name or "")
    return read_base_file(spec.storage, path, columns=[RECORD_KEY]).column(RECORD_KEY)


def _in_position_order(
    records: pa.Table,
    base_keys: pa.ChunkedArray | None,
    known: pa.ChunkedArray | pa.Array | None,
) -> tuple[pa.Table, np.ndarray | None]:
    """The records in the order of their rows in the base file, and those rows, when every record
    is a row of it (as Hudi writes positions: all records positioned, or no header); else the
    records as they are and None. `known` positions (aligned with `records`), or the rows of the
    records' keys in `base_keys`. The header holds the positions as a sorted set, and Hudi 1.x
    pairs a block's n-th record with the n-th smallest position: records in any other order
    would each be merged onto another key's row."""
    if known is not None:
        positions = known
    elif base_keys is not None:
        positions = pc.index_in(records.column(RECORD_KEY), value_set=base_keys)
    else:
        return records, None
    if positions.null_count:
        return records, None
    rows = np.asarray(positions.to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    return records.take(pa.array(order)), rows[order]


def _with_positions(block: LogBlock, positions: np.ndarray | None) -> LogBlock:
    """`block` with the RECORD_POSITIONS header of `positions` (its records' rows in the base
    file, in record order), or as it is without them."""
    if positions is None:
        return block
    header = {**block.header, HeaderMetadataType.RECORD_POSITIONS: encode_positions(positions)}
    return replace(block, header=header)


def _with_base_instant(block: LogBlock, state: SliceState, log_spec: LogSpec) -> LogBlock:
    """Table version 8+: positions name the base file they index by its instant time (a log file
    is no longer named after its slice's base file)."""
    if log_spec.table_version < 8 or HeaderMetadataType.RECORD_POSITIONS not in block.header:
        return block
    header = {
        **block.header,
        HeaderMetadataType.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS: state.base_instant,
    }
    return replace(block, header=header)


def _log_records(spec: WriteTaskSpec, records: pa.Table, file_id: str, pid: int) -> pa.Table:
    """The records as the data block holds them: meta fields set, in the file schema."""
    n = records.num_rows
    numbers = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
    meta = {
        COMMIT_TIME: pa.repeat(spec.instant_time, n).cast(pa.string()),
        COMMIT_SEQNO: pc.binary_join_element_wise(
            pa.repeat(f"{spec.instant_time}_{pid}_", n), numbers, ""
        ),
        FILE_NAME: pa.repeat(file_id, n).cast(pa.string()),  # log records carry the file id (§4.1)
    }
    table = records
    for column_name, values in meta.items():
        table = table.drop_columns([column_name]) if column_name in table.column_names else table
        table = table.append_column(column_name, values)
    return conform(table, spec.file_schema)


def _data_block(spec: WriteTaskSpec, log_spec: LogSpec, table: pa.Table) -> LogBlock:
    n = table.num_rows
    if log_spec.block_format == "parquet":
        return parquet_data_block(
            spec.instant_time, log_spec.schema_json, table, compression=log_spec.compression
        )
    if n >= COLUMNAR_MIN_RECORDS and avro_columnar.supports(log_spec.schema_json):
        header = {
            HeaderMetadataType.INSTANT_TIME: spec.instant_time,
            HeaderMetadataType.SCHEMA: log_spec.schema_json,
        }
        content = avro_columnar.encode_block_content(table, log_spec.schema_json)
        return LogBlock(LogBlockType.AVRO_DATA_BLOCK, header, content)
    return avro_data_block(spec.instant_time, log_spec.schema_json, avro_ready_rows(table))
