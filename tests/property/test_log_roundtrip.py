"""Round trips of every log block type, and the reader's behaviour on damaged log files."""

from __future__ import annotations

import io
import json
import struct
from datetime import timezone
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyhudi.codec.log import avro_content, delete_content, parquet_content
from pyhudi.codec.log import block as log_block
from pyhudi.codec.log import reader as log_reader
from pyhudi.codec.log.reader import LocatedBlock, iter_blocks, iter_blocks_reverse, read_blocks
from pyhudi.codec.log.writer import (
    avro_data_block,
    delete_block,
    encode_blocks,
    parquet_data_block,
    rollback_block,
)
from pyhudi.exceptions import UnsupportedVersionError
from pyhudi.model.enums import HeaderMetadataType as H
from pyhudi.model.enums import LogBlockType as T

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
W = delete_content.OrderingWrapper

instants = st.from_regex(r"\A20[0-9]{15}\Z")
v6_header_keys = st.sampled_from([k for k in H if k < log_block.V6_HEADER_ORDINAL_LIMIT])

# ---- Avro schemas and records ----------------------------------------------------------------

_AVRO_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=12),
    "int": st.integers(-(2**31), 2**31 - 1),
    "long": st.integers(-(2**63), 2**63 - 1),
    "double": st.floats(allow_nan=False),
    "boolean": st.booleans(),
    "bytes": st.binary(max_size=12),
}


@st.composite
def avro_schema_and_records(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    names = draw(
        st.lists(st.from_regex(r"\A[a-z_][a-z0-9_]{0,6}\Z"), min_size=1, max_size=8, unique=True)
    )
    kinds = [draw(st.sampled_from(sorted(_AVRO_VALUES))) for _ in names]
    nullable = [draw(st.booleans()) for _ in names]
    fields = [
        {"name": n, "type": ["null", k] if null else k}
        for n, k, null in zip(names, kinds, nullable)
    ]
    schema = json.dumps(
        {"type": "record", "name": "rec", "namespace": "hoodie.t", "fields": fields}
    )
    row = st.fixed_dictionaries(
        {
            n: st.none() | _AVRO_VALUES[k] if null else _AVRO_VALUES[k]
            for n, k, null in zip(names, kinds, nullable)
        }
    )
    return schema, draw(st.lists(row, max_size=12))


@st.composite
def headers(draw: st.DrawFn, **required: str) -> dict[H, str]:
    keys = draw(st.lists(v6_header_keys, unique=True, max_size=7))
    header = {k: draw(st.text(max_size=20)) for k in keys}
    header.update({H[name]: value for name, value in required.items()})
    return header


# ---- delete records ---------------------------------------------------------------------------

_decimals = st.integers(0, 15).flatmap(
    lambda places: st.decimals(
        min_value=-(10**14), max_value=10**14, places=places, allow_nan=False, allow_infinity=False
    )
)
ordering_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=10),
    st.binary(max_size=10),
    st.dates(),
    st.datetimes(timezones=st.just(timezone.utc)),
    st.times(),
    _decimals,
)
explicit_wrappers = st.one_of(
    st.tuples(st.just(W.FLOAT), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just(W.LONG), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(W.NULL), st.none()),
)


@st.composite
def delete_records(draw: st.DrawFn) -> delete_content.DeleteRecord:
    key, partition = draw(st.none() | st.text(max_size=10)), draw(st.none() | st.text(max_size=10))
    if draw(st.booleans()):
        return delete_content.DeleteRecord(key, partition, draw(ordering_values))
    wrapper, value = draw(explicit_wrappers)
    return delete_content.DeleteRecord(key, partition, value, wrapper)


# ---- round trips ------------------------------------------------------------------------------


def _round_trip(block: log_block.LogBlock) -> log_block.LogBlock:
    decoded = log_reader.decode_block(block.encode())
    assert decoded == block
    assert list(decoded.header) == list(block.header)  # header order is kept
    return decoded


@SETTINGS
@given(avro_schema_and_records(), st.data(), st.sampled_from([T.AVRO_DATA_BLOCK, T.CDC_DATA_BLOCK]))
def test_avro_and_cdc_blocks_round_trip(
    schema_records: tuple[str, list[dict[str, Any]]], data: st.DataObject, block_type: T
) -> None:
    schema, records = schema_records
    header = data.draw(headers(SCHEMA=schema))
    block = _round_trip(
        log_block.LogBlock(block_type, header, avro_content.encode_avro_records(schema, records))
    )
    assert avro_content.decode_avro_records(block.content, schema) == records
    assert avro_content.avro_record_count(block.content) == len(records)


@SETTINGS
@given(st.lists(delete_records(), max_size=10), headers())
def test_delete_blocks_round_trip_every_ordering_wrapper(
    deletes: list[delete_content.DeleteRecord], header: dict[H, str]
) -> None:
    block = _round_trip(
        log_block.LogBlock(T.DELETE_BLOCK, header, delete_content.encode_delete_records(deletes))
    )
    decoded = delete_content.decode_delete_records(block.content)
    assert decoded == deletes
    assert delete_content.encode_delete_records(decoded) == block.content


def test_none_ordering_value_is_written_as_natural_order_int_zero() -> None:
    record = delete_content.DeleteRecord("k", "p", None)
    assert (record.ordering_wrapper, record.ordering_value) == (
        W.INT,
        0,
    ) and record.is_natural_order
    assert delete_content.DeleteRecord("k", "p", 2**31).ordering_wrapper is W.LONG
    assert delete_content.DeleteRecord("k", "p", True).ordering_wrapper is W.BOOLEAN


@SETTINGS
@given(instants, instants)
def test_rollback_command_blocks_round_trip(instant: str, target: str) -> None:
    block = _round_trip(rollback_block(instant, target))
    assert (block.instant_time, block.target_instant_time, block.command_type) == (
        instant,
        target,
        0,
    )
    assert block.content == b""


_parquet_rows = st.lists(
    st.tuples(
        st.none() | st.integers(-(2**63), 2**63 - 1),
        st.none() | st.text(max_size=8),
        st.none() | st.floats(allow_nan=False),
        st.none() | st.booleans(),
        st.none() | st.binary(max_size=8),
    ),
    max_size=10,
)
_PARQUET_SCHEMA = pa.schema(
    [
        ("l", pa.int64()),
        ("s", pa.string()),
        ("d", pa.float64()),
        ("b", pa.bool_()),
        ("y", pa.binary()),
    ]
)


@SETTINGS
@given(_parquet_rows, instants, st.sampled_from(["gzip", "snappy", "none"]))
def test_parquet_blocks_round_trip(
    rows: list[tuple[Any, ...]], instant: str, compression: str
) -> None:
    table = pa.Table.from_pylist(
        [dict(zip(_PARQUET_SCHEMA.names, r)) for r in rows], schema=_PARQUET_SCHEMA
    )
    block = _round_trip(parquet_data_block(instant, "{}", table, compression=compression))
    assert parquet_content.decode_parquet_block(block.content, schema=_PARQUET_SCHEMA).equals(table)
    assert parquet_content.parquet_record_count(block.content) == len(rows)


# ---- damaged files ----------------------------------------------------------------------------

_SCHEMA = '{"type":"record","name":"r","fields":[{"name":"k","type":"string"},{"name":"v","type":"long"}]}'
_PARQUET_BLOCK = parquet_data_block(
    "20250101000000000", _SCHEMA, pa.table({"k": ["a", "b"], "v": [1, 2]}), compression="gzip"
)
_blocks = st.one_of(
    st.builds(rollback_block, instants, instants),
    st.builds(
        lambda i, recs: avro_data_block(i, _SCHEMA, [{"k": k, "v": v} for k, v in recs]),
        instants,
        st.lists(st.tuples(st.text(max_size=6), st.integers(-(2**63), 2**63 - 1)), max_size=5),
    ),
    st.builds(
        lambda i, keys: delete_block(i, [delete_content.DeleteRecord(k, "p") for k in keys]),
        instants,
        st.lists(st.text(max_size=6), max_size=4),
    ),
    st.just(_PARQUET_BLOCK),
)
_damage = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=3)),
)  # fmt: skip


def _apply(data: bytes, damage: tuple[str, Any]) -> tuple[bytes, int, list[int]]:
    """The damaged bytes, the first damaged offset and the flipped offsets."""
    kind, arg = damage
    if kind == "truncate":
        cut = int(arg * len(data))
        return data[:cut], cut, []
    damaged, offsets = bytearray(data), []
    for fraction, mask in arg:
        offsets.append(int(fraction * len(data)))
        damaged[offsets[-1]] ^= mask
    return bytes(damaged), min(offsets), offsets


def _version_zeroed(data: bytes, original: list[LocatedBlock], flipped: list[int]) -> bool:
    """Did a flip turn some block's log format version into 0 (the legacy version)?"""
    return any(
        b.offset + 14 <= off < b.offset + 18 and data[b.offset + 14 : b.offset + 18] == bytes(4)
        for b in original
        for off in flipped
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(_blocks, min_size=1, max_size=5), _damage)
def test_damage_never_raises_nor_loses_a_block_before_it(
    blocks: list[log_block.LogBlock], damage: tuple[str, Any]
) -> None:
    data = encode_blocks(blocks)
    original = read_blocks(data)
    damaged, first_damage, flipped = _apply(data, damage)
    try:
        got = read_blocks(damaged)
    except UnsupportedVersionError:
        assert _version_zeroed(damaged, original, flipped)
        return
    # The blocks and corrupt ranges tile the file.
    assert [b.offset for b in got] == [0, *(b.end_offset for b in got)][: len(got)]
    assert (got[-1].end_offset if got else 0) == len(damaged)
    intact = [b for b in original if b.end_offset <= first_damage]
    assert got[: len(intact)] == intact
    assert [b.content for b in got[: len(intact)]] == [b.content for b in intact]
    assert list(iter_blocks_reverse(damaged)) == got[::-1]
    assert list(iter_blocks(io.BytesIO(damaged))) == got


@SETTINGS
@given(st.lists(_blocks, max_size=4))
def test_undamaged_files_read_back_every_block_both_ways(blocks: list[log_block.LogBlock]) -> None:
    data = encode_blocks(blocks)
    got = read_blocks(data)
    assert [b.to_log_block() for b in got] == blocks
    assert list(iter_blocks_reverse(data)) == got[::-1]
    assert all(
        struct.unpack(">q", data[b.end_offset - 8 : b.end_offset])[0] == b.size_bytes - 8
        for b in got
    )
