"""Change-data-capture logs (`hoodie.table.cdc.enabled`): what a merge of an existing base file
changed, as Hudi's `HoodieMergeHandleWithChangeLog` and `HoodieCDCLogger` write it (§3.5, §5.10).

A merge writes `.<fileId>_<instant>.log.1_<writeToken>.cdc` beside its new base file (same
instant and write token), with an APPEND marker named after it, holding one CDC_DATA_BLOCK
(header INSTANT_TIME, SCHEMA; Avro data block content). One CDC record per changed key:

| `hoodie.table.cdc.supplemental.logging.mode` | record (Avro)                                  |
|----------------------------------------------|------------------------------------------------|
| OP_KEY_ONLY                                  | `Record {op, record_key}`, `["string","null"]` |
| DATA_BEFORE                                  | `<ns>.CDC {op, record_key, before}`            |
| DATA_BEFORE_AFTER (default)                  | `<ns>.CDC {op, ts_ms, before, after}`          |

`op` is `i` (an insert into the file group), `u` (a stored record replaced), `d` (a stored record
removed); `ts_ms` is the instant time; `before`/`after` are the table's records without meta
fields (`["null", <table record>]`, the record schema of the commit without its namespace, which
it takes from `CDC`). Table version 8 and 9 (Hudi 1.2) put `"doc":""` on the CDC record.

Hudi writes no CDC log when the merged file is empty or holds only inserts (its handle's
`recordsWritten == insertRecordsWritten`), and an empty block when nothing changed.

Records are built and encoded column by column (`avro_columnar`): the image records once per
image, then joined with the `op`/`ts_ms` bytes and the union branches row by row in Arrow.
"""

from __future__ import annotations

import functools
import io
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.file_names import log_file_name
from pyhudi.codec.log import avro_columnar
from pyhudi.codec.log.avro_content import parsed_avro_schema
from pyhudi.codec.log.block import BLOCK_CONTENT_VERSION, LogBlock
from pyhudi.codec.log.writer import encode_blocks
from pyhudi.codec.schema import COMMIT_SEQNO, COMMIT_TIME, META_FIELDS, RECORD_KEY
from pyhudi.config import table as table_keys
from pyhudi.model.enums import HeaderMetadataType, LogBlockType

CDC_SUFFIX = ".cdc"
#: `HoodieCDCUtils.CDC_SCHEMA_OP_AND_RECORDKEY_STRING`, verbatim.
OP_KEY_SCHEMA = (
    '{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
    '{"name":"record_key","type":["string","null"]}]}'
)
_HEAD = struct.Struct(">ii")
_BINARY = pa.large_binary()


@functools.cache
def _scalar(value: bytes) -> pa.Scalar:
    """A binary scalar, made on first use: `pa.scalar` at import time imports pandas, which would
    cost every Spark Python worker that imports pyhudi half a second."""
    return pa.scalar(value, _BINARY)


class CdcMode(str, Enum):
    """`hoodie.table.cdc.supplemental.logging.mode` (Hudi's `HoodieCDCSupplementalLoggingMode`)."""

    OP_KEY_ONLY = "OP_KEY_ONLY"
    DATA_BEFORE = "DATA_BEFORE"
    DATA_BEFORE_AFTER = "DATA_BEFORE_AFTER"


@dataclass(frozen=True)
class CdcSpec:
    """What a write task needs to write CDC logs: the mode, the table record's Avro schema
    (without meta fields, as the commit records it) and the table version."""

    mode: CdcMode
    data_schema_json: str
    table_version: int

    @property
    def schema_json(self) -> str:
        """The CDC block's SCHEMA header, spelled as Hudi spells it."""
        return cdc_schema_json(self.mode, self.data_schema_json, self.table_version)


def cdc_spec_of(
    table_props: Mapping[str, str], data_schema_json: str, table_version: int
) -> CdcSpec | None:
    """The table's CDC settings (hoodie.properties decides, as in Hudi), or None when CDC is off."""
    if not table_keys.CDC_ENABLED.get(table_props):
        return None
    mode = CdcMode(table_keys.CDC_SUPPLEMENTAL_LOGGING_MODE.get(table_props))
    return CdcSpec(mode, data_schema_json, table_version)


def _field(name: str, type_json: str) -> str:
    return f'{{"name":"{name}","type":{type_json},"doc":"","default":null}}'


def cdc_schema_json(mode: CdcMode, data_schema_json: str, table_version: int) -> str:
    """`HoodieCDCUtils.schemaBySupplementalLoggingMode` as Java's `Schema.toString` prints it."""
    if mode is CdcMode.OP_KEY_ONLY:
        return OP_KEY_SCHEMA
    record = json.loads(data_schema_json)
    namespace = record.pop("namespace", None)
    image = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    fields = [_field("op", '["null","string"]')]
    if mode is CdcMode.DATA_BEFORE:
        fields += [_field("record_key", '["null","string"]'), _field("before", f'["null",{image}]')]
    else:
        name = json.dumps(record["name"])
        fields += [
            _field("ts_ms", '["null","string"]'),
            _field("before", f'["null",{image}]'),
            _field("after", f'["null",{name}]'),
        ]
    head = '{"type":"record","name":"CDC"'
    if namespace is not None:
        head += f',"namespace":{json.dumps(namespace)}'
    if table_version >= 8:
        head += ',"doc":""'
    return f'{head},"fields":[{",".join(fields)}]}}'


@dataclass(frozen=True)
class Changes:
    """A file group's changes as row positions: stored rows replaced (`replaced_old`, by the new
    rows `replaced_new`, aligned) or removed (`dropped_old`), new rows inserted (`inserted_new`)."""

    replaced_old: np.ndarray
    replaced_new: np.ndarray
    dropped_old: np.ndarray
    inserted_new: np.ndarray


def changes_between(old: pa.Table, new: pa.Table) -> Changes:
    """What a compaction changed of its base file (Hudi 1.2's CDC of a compaction, table
    versions 8 and 9): stored keys gone (deleted), kept under another commit time or sequence
    number (updated from the logs), and new keys (inserted)."""
    old_keys, new_keys = old.column(RECORD_KEY), new.column(RECORD_KEY)
    at = pc.index_in(old_keys, value_set=new_keys.combine_chunks())
    matched = pc.is_valid(at).to_numpy(zero_copy_only=False).astype(bool)
    positions = pc.fill_null(at, 0).cast(pa.int64())
    changed = np.zeros(len(matched), bool)
    for name in (COMMIT_TIME, COMMIT_SEQNO):
        stored = old.column(name).combine_chunks()
        written = new.column(name).combine_chunks().take(positions)
        differs = pc.fill_null(pc.not_equal(stored, written), False)
        changed |= differs.to_numpy(zero_copy_only=False).astype(bool)
    changed &= matched
    in_old = pc.is_in(new_keys, value_set=old_keys.combine_chunks())
    return Changes(
        replaced_old=np.flatnonzero(changed).astype(np.int64),
        replaced_new=positions.to_numpy(zero_copy_only=False)[changed].astype(np.int64),
        dropped_old=np.flatnonzero(~matched).astype(np.int64),
        inserted_new=np.flatnonzero(~in_old.to_numpy(zero_copy_only=False)).astype(np.int64),
    )


@dataclass(frozen=True)
class _Layout:
    """The CDC rows in order (updates and deletes in stored order, then inserts): their `op`
    codes (`_OP_NAMES`), the stored rows they show before, the new rows they show after, and for each
    CDC row its slot in those (-1: none)."""

    codes: np.ndarray
    changed_old: np.ndarray
    after_rows: np.ndarray
    before_slot: np.ndarray
    after_slot: np.ndarray

    @classmethod
    def of(cls, changes: Changes) -> _Layout:
        changed_old = np.concatenate([changes.replaced_old, changes.dropped_old]).astype(np.int64)
        order = np.argsort(changed_old, kind="stable")
        n_u, n_ud, n_i = len(changes.replaced_old), len(changed_old), len(changes.inserted_new)
        is_update = order < n_u
        codes = np.concatenate([np.where(is_update, 0, 1), np.full(n_i, 2)]).astype(np.int64)
        after_rows = np.concatenate([changes.replaced_new[order[is_update]], changes.inserted_new])
        after_slot = np.full(n_ud + n_i, -1, np.int64)
        after_slot[np.flatnonzero(is_update)] = np.arange(n_u)
        after_slot[n_ud:] = n_u + np.arange(n_i)
        before_slot = np.full(n_ud + n_i, -1, np.int64)
        before_slot[:n_ud] = np.arange(n_ud)
        return cls(codes, changed_old[order], after_rows.astype(np.int64), before_slot, after_slot)


_OP_NAMES = ("u", "d", "i")


def cdc_content(
    spec: CdcSpec, instant: str, old: pa.Table, new: pa.Table, changes: Changes
) -> bytes:
    """The CDC block content of `changes` (positions in `old`, the stored rows, and `new`)."""
    rows = _Layout.of(changes)
    n = len(rows.codes)
    op = pa.array(_OP_NAMES, pa.string()).take(pa.array(rows.codes))
    keys = pa.concat_arrays(
        [
            _column(old, RECORD_KEY).take(pa.array(rows.changed_old)).cast(pa.string()),
            _column(new, RECORD_KEY).take(pa.array(changes.inserted_new.astype(np.int64))),
        ]
    )
    if spec.mode is CdcMode.OP_KEY_ONLY:
        return _block_content(
            [_encoded(pa.table({"op": op, "record_key": keys}), OP_KEY_SCHEMA)], n
        )
    data = spec.data_schema_json
    before = _image(_images(old, rows.changed_old), data, rows.before_slot)
    if spec.mode is CdcMode.DATA_BEFORE:
        head = pa.table({"op": op, "record_key": keys})
        return _block_content([_encoded(head, _strings_schema("op", "record_key")), before], n)
    head = pa.table({"op": op, "ts_ms": pa.repeat(instant, n).cast(pa.string())})
    after = _image(_images(new, rows.after_rows), data, rows.after_slot)
    return _block_content([_encoded(head, _strings_schema("op", "ts_ms")), before, after], n)


def _column(table: pa.Table, name: str) -> pa.Array:
    return table.column(name).combine_chunks().cast(pa.string())


def _strings_schema(*names: str) -> str:
    fields = ",".join(f'{{"name":"{n}","type":["null","string"]}}' for n in names)
    return f'{{"type":"record","name":"Head","fields":[{fields}]}}'


def _images(table: pa.Table, positions: np.ndarray) -> pa.Table:
    data = table.drop_columns([c for c in META_FIELDS if c in table.column_names])
    return data.take(pa.array(positions, pa.int64()))


def _encoded(table: pa.Table, schema_json: str) -> pa.Array:
    """Each row's Avro binary (no length prefix), as a large_binary array."""
    if table.num_rows == 0:
        return pa.array([], _BINARY)
    if avro_columnar.supports(schema_json):
        data, offsets = avro_columnar.encode_table(table, schema_json)
        return pa.LargeBinaryArray.from_buffers(
            _BINARY, table.num_rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
        )
    schema = parsed_avro_schema(schema_json)  # nested types: fastavro, one record at a time
    encoded = []
    for record in table.to_pylist():
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, record)
        encoded.append(out.getvalue())
    return pa.array(encoded, _BINARY)


def _image(rows: pa.Table, schema_json: str, slot: np.ndarray) -> pa.Array:
    """The `["null", record]` union of each CDC row: branch 1 and the record where `slot` names
    one of `rows`, branch 0 where it is -1."""
    present = pc.binary_join_element_wise(
        _scalar(b"\x02"), _encoded(rows, schema_json), _scalar(b"")
    )
    indices = pa.array(np.clip(slot, 0, None), pa.int64(), mask=slot < 0)
    if len(present) == 0:
        return pa.repeat(_scalar(b"\x00"), len(slot))
    return pc.fill_null(present.take(indices), _scalar(b"\x00"))


def _block_content(pieces: list[pa.Array], n: int) -> bytes:
    head = _HEAD.pack(BLOCK_CONTENT_VERSION, n)
    if n == 0:
        return head
    records = pc.binary_join_element_wise(*pieces, _scalar(b""))
    lengths = pc.binary_length(records).to_numpy(zero_copy_only=False).astype(">i4")
    prefix = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(4), n, [None, pa.py_buffer(lengths.tobytes())]
    ).cast(_BINARY)
    framed = pc.binary_join_element_wise(prefix, records, _scalar(b""))
    offsets = np.frombuffer(framed.buffers()[1], np.int64)[framed.offset : framed.offset + n + 1]
    data = framed.buffers()[2]
    return head + data.to_pybytes()[int(offsets[0]) : int(offsets[-1])]


def needs_cdc_log(num_writes: int, num_inserts: int) -> bool:
    """Hudi's rule: no CDC log when the merged file is empty or holds only inserts."""
    return num_writes != 0 and num_writes != num_inserts


def cdc_log_name(file_id: str, instant: str, token: str) -> str:
    """`.<fileId>_<instant>.log.1_<writeToken>.cdc`: named after the merge's new base file."""
    return log_file_name(file_id, instant, 1, token, cdc=True)


def cdc_log_bytes(spec: CdcSpec, instant: str, content: bytes) -> bytes:
    """The CDC log file: one CDC_DATA_BLOCK with header INSTANT_TIME and SCHEMA."""
    header = {
        HeaderMetadataType.INSTANT_TIME: instant,
        HeaderMetadataType.SCHEMA: spec.schema_json,
    }
    block = LogBlock(LogBlockType.CDC_DATA_BLOCK, header, content)
    return encode_blocks([block], table_version=spec.table_version)
