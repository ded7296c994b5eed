"""column_stats, bloom_filters and record_index records built as Hudi 0.14 builds them: keys and
file-group hashing against the real metadata tables, column stats of the real tables' base files
equal to what Hudi stored, byte-exact encoding of the v8 column stats HFiles, round trips."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.fixtures import unzip_table

from pyhudi.codec.bloom import deserialize_bloom_filter, new_bloom_filter
from pyhudi.codec.hfile import HFileReader
from pyhudi.codec.log.delete_content import decode_delete_records, encode_delete_records
from pyhudi.codec.log.reader import read_log_file
from pyhudi.codec.metadata_hfile import write_metadata_hfile
from pyhudi.codec.metadata_keys import (
    column_stats_key,
    file_group_index,
    file_group_indexes,
    java_string_hash,
    partition_index_id,
    xxh64,
)
from pyhudi.codec.metadata_records import ColumnStats, iter_hfile_records, merge_records
from pyhudi.metadata import MetadataTable
from pyhudi.metadata.column_stats_records import (
    base_file_column_stats,
    deleted_file_column_stats,
    log_file_column_stats,
)
from pyhudi.metadata.index_records import (
    RecordIndexSizing,
    bloom_filter_record,
    deleted_bloom_filter_record,
    footer_bloom_filter_record,
    instant_epoch_ms,
    record_index_delete_records,
    record_index_file_group_count,
    record_index_file_group_id,
    record_index_records,
)
from pyhudi.metadata.slices import valid_instants
from pyhudi.metadata.validation import bloom_filter_differences
from pyhudi.model.enums import LogBlockType
from pyhudi.table.context import TableContext

V8 = "mor_avro__v8_trips_8i3u1d"


@pytest.fixture(scope="module")
def v8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unzip_table(V8, tmp_path_factory.mktemp("mdtidx-v8"))


def test_xxh64_and_java_hash_match_reference_values() -> None:
    assert xxh64(b"", 0) == 0xEF46DB3751D8E999
    assert xxh64(b"abc", 0) == 0x44BC2CF5AD770999
    assert xxh64(bytes(range(100)), 0) == xxh64(bytes(range(100)), 0) != xxh64(b"x" * 100, 0)
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert file_group_index("polygenelubricants", 10) == 8  # abs(MIN_VALUE % 10)
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # UTF-16 surrogates
    assert partition_index_id("") == partition_index_id(".")


@pytest.mark.parametrize("count", [1, 3, 10, 97])
def test_vectorised_file_group_indexes_equal_the_per_key_hash(count: int) -> None:
    rng = random.Random(count)
    keys = [
        "",
        "a",
        "polygenelubricants",
        *(str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(500)),
    ]
    keys += [
        "".join(rng.choice("abcXYZ019-_:") for _ in range(rng.randint(1, 70))) for _ in range(500)
    ]
    expected = [file_group_index(k, count) for k in keys]
    assert file_group_indexes(pa.array(keys), count).to_pylist() == expected
    chunked = pa.chunked_array([keys[:300], keys[300:]]).slice(7)
    assert file_group_indexes(chunked, count).to_pylist() == expected[7:]
    odd = ["é", "\U0001f600x", "plain"]  # non-ASCII batches take the per-key path
    assert file_group_indexes(pa.array(odd), count).to_pylist() == [
        file_group_index(k, count) for k in odd
    ]


def _file_groups(ctx: TableContext, partition: str) -> list[dict]:
    mdt = MetadataTable.open(ctx)
    instants = valid_instants(ctx.active, mdt.table.active, None)
    slices = sorted(mdt.merge_slices(partition), key=lambda s: s.file_id)
    return [mdt.merge_file_group(s, instants) for s in slices]


@pytest.mark.parametrize("partition", ["record_index", "column_stats"])
def test_every_real_key_lives_in_the_file_group_it_hashes_to(v8: Path, partition: str) -> None:
    groups = _file_groups(TableContext.open(str(v8)), partition)
    assert len(groups) == {"record_index": 10, "column_stats": 2}[partition]
    placed = [(key, index) for index, records in enumerate(groups) for key in records]
    assert len(placed) >= {"record_index": 6, "column_stats": 60}[partition]
    assert all(file_group_index(key, len(groups)) == index for key, index in placed)


TABLES = [
    V8,
    "cow__v9_txns_simple_meta",
    "cow__v9_txns_nonpart_meta",
    "mor_avro__v9_txns_complex_meta",
]


@pytest.mark.parametrize("name", TABLES)
def test_base_file_column_stats_equal_what_hudi_stored(name: str, tmp_path: Path) -> None:
    root = unzip_table(name, tmp_path)
    ctx = TableContext.open(str(root))
    stored = MetadataTable.open(ctx).records("column_stats")
    compared = 0
    for piece in ctx.view().latest_merged_file_slices():
        base = piece.base_file
        if base is None:
            continue
        footer = pq.ParquetFile(root / base.relative_path).metadata
        for record in base_file_column_stats(base.partition_path, base.file_name, footer):
            theirs = stored.get(record.key)
            if theirs is None:  # Hudi 1.x does not index _hoodie_commit_seqno / _hoodie_file_name
                assert record.column_stats.column_name in (
                    "_hoodie_commit_seqno",
                    "_hoodie_file_name",
                )
                continue
            assert _v1_values(theirs.column_stats) == record.column_stats, record.key
            if name == V8:  # Hudi 1.0 still writes 0.14's wrappers; 1.1 (v9) writes valueType
                assert theirs.column_stats.value_wrapper == record.column_stats.value_wrapper
            compared += 1
    assert compared >= 20


def _v1_values(stats: ColumnStats) -> ColumnStats:
    """Hudi 1.1 (v9) types timestamps (`valueType`); 0.14 and 1.0 store their raw long micros."""

    def raw(value: object) -> object:
        if isinstance(value, dt.datetime):
            return (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
        return value

    return replace(stats, min_value=raw(stats.min_value), max_value=raw(stats.max_value))


def test_column_stats_hfiles_are_rewritten_byte_for_byte(v8: Path) -> None:
    folder = v8 / ".hoodie" / "metadata" / "column_stats"
    written = 0
    for path in sorted(folder.glob("*.hfile")):
        data = path.read_bytes()
        schema = HFileReader(data).file_info.text("schema")
        records = list(iter_hfile_records(data))
        assert write_metadata_hfile(records, base_file_name=path.name, schema_json=schema) == data
        written += 1
    for path in sorted(folder.glob(".*.log.*")):
        for block in read_log_file(path):
            if block.block_type is LogBlockType.HFILE_DATA_BLOCK:
                records = list(iter_hfile_records(block.content, block.schema_json))
                rewritten = write_metadata_hfile(records, schema_json=block.schema_json)
                assert rewritten == block.content, path.name
                written += 1
    assert written >= 10


def test_column_stats_of_every_wrapper_round_trip_in_the_v6_schema(tmp_path: Path) -> None:
    table = pa.table(
        {
            "b": pa.array([True, False, None]),
            "i": pa.array([3, -1, 7], pa.int32()),
            "l": pa.array([2**40, 5, None], pa.int64()),
            "f": pa.array([1.5, -2.0, 0.0], pa.float32()),
            "d": pa.array([1.25, 9.0, -3.5]),
            "s": pa.array(["b", "a", "é"]),
            "y": pa.array([b"\x01", b"\xff", None]),
            "dt": pa.array([dt.date(2024, 1, 2), dt.date(1969, 12, 31), None]),
            "dec": pa.array([Decimal("1.50"), Decimal("-3.25"), None], pa.decimal128(9, 2)),
            "big": pa.array([Decimal("1.5")], pa.decimal128(38, 20)).take([0, 0, 0]),
            "ts": pa.array([1, 2_000_000, None], pa.timestamp("us", "UTC")),
            "nested": pa.array([{"x": 1}, {"x": 2}, None]),
        }
    )
    pq.write_table(table, tmp_path / "f.parquet", row_group_size=2)
    footer = pq.ParquetFile(tmp_path / "f.parquet").metadata
    records = base_file_column_stats("p=1", "f.parquet", footer)
    stats = {r.column_stats.column_name: r.column_stats for r in records}
    assert set(stats) == {"b", "i", "l", "f", "d", "s", "y", "dt", "dec", "ts"}  # big, nested: none
    assert (stats["i"].min_value, stats["i"].max_value, stats["i"].value_wrapper) == (
        -1,
        7,
        "IntWrapper",
    )
    assert (stats["l"].null_count, stats["l"].value_count) == (1, 3)
    assert (stats["s"].min_value, stats["s"].max_value) == ("a", "é")
    assert stats["dt"].min_value == dt.date(1969, 12, 31)
    assert stats["dec"].min_value == Decimal("-3.25")
    assert (stats["ts"].min_value, stats["ts"].value_wrapper) == (1, "LongWrapper")  # raw, as Hudi
    assert records[0].key == column_stats_key(
        "p=1", "f.parquet", records[0].column_stats.column_name
    )
    logs = log_file_column_stats("p=1", ".f_1.log.1_0-1-1", table.drop_columns(["nested", "big"]))
    decoded = {r.key: r for r in iter_hfile_records(write_metadata_hfile(records + logs))}
    for record in records + logs:
        assert decoded[record.key].column_stats == record.column_stats, record.key
    log_ts = {r.column_stats.column_name: r.column_stats for r in logs}["ts"]
    assert (log_ts.min_value, log_ts.max_value, log_ts.value_wrapper) == (
        1,
        2_000_000,
        "LongWrapper",
    )
    assert (log_ts.total_size_bytes, log_ts.value_count, log_ts.null_count) == (0, 3, 1)


def test_deleted_file_tombstones_win_over_older_stats(tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "f.parquet")
    live = base_file_column_stats("", "f.parquet", pq.ParquetFile(tmp_path / "f.parquet").metadata)
    gone = deleted_file_column_stats("", "f.parquet", ["a"])
    assert [r.key for r in gone] == [r.key for r in live]
    merged = merge_records(live[0], iter_hfile_records(write_metadata_hfile(gone)).__next__())
    assert merged.column_stats is not None and merged.column_stats.is_deleted
    assert (merged.column_stats.value_count, merged.column_stats.min_value) == (-1, None)


def test_bloom_filter_records_use_the_footer_filter_and_hudi_keys(v8: Path, tmp_path: Path) -> None:
    ctx = TableContext.open(str(v8))
    latest = [s.base_file for s in ctx.view().latest_merged_file_slices() if s.base_file]
    records = []
    for base in latest:
        kv = pq.ParquetFile(v8 / base.relative_path).metadata.metadata
        record = footer_bloom_filter_record(
            base.partition_path, base.file_name, base.instant_time, kv
        )
        assert record is not None
        records.append(record)
    assert bloom_filter_differences(records, latest) == []
    stored_keys = set(MetadataTable.open(ctx).records("column_stats"))
    for record, base in zip(records, latest, strict=True):
        # the real column_stats keys end with this record's key (partition id + file id)
        assert any(k.endswith(record.key) for k in stored_keys), base.file_name
    decoded = {r.key: r for r in iter_hfile_records(write_metadata_hfile(records))}
    entry = decoded[records[0].key].bloom_filter
    assert entry is not None and entry.type_code == "DYNAMIC_V0"
    keys = pq.read_table(v8 / latest[0].relative_path, columns=["_hoodie_record_key"]).column(0)
    bloom = deserialize_bloom_filter(entry.bloom_filter.decode(), entry.type_code)
    assert all(bloom.might_contain(k) for k in keys.to_pylist())
    tomb = deleted_bloom_filter_record(latest[0].partition_path, latest[0].file_name, "2")
    assert tomb.key == records[0].key and tomb.bloom_filter.is_deleted
    assert bloom_filter_differences([tomb], latest[:1])  # a tombstone is no entry
    assert footer_bloom_filter_record("", "x.parquet", "1", {}) is None
    own = new_bloom_filter()
    own.add("k")
    assert bloom_filter_record(
        "", "x", "1", own.serialize(), "DYNAMIC_V0"
    ).bloom_filter.bloom_filter


def test_record_index_records_equal_what_hudi_stored(v8: Path) -> None:
    ctx = TableContext.open(str(v8))
    stored = MetadataTable.open(ctx).records("record_index")
    first = ctx.active.timeline.completed().times()[0]
    inserted = [
        k for k, r in stored.items() if r.location.instant_time_ms == instant_epoch_ms(first)
    ]
    assert inserted
    location = stored[inserted[0]].location
    built = record_index_records(location.partition_path, location.file_id, first, inserted[:1])
    assert built == [stored[inserted[0]]]
    assert write_metadata_hfile(built)  # encodes
    assert record_index_records("p", location.file_id, first, pa.array(["a", "b"])) == [
        *record_index_records("p", location.file_id, first, ["a"]),
        *record_index_records("p", location.file_id, first, ["b"]),
    ]
    raw = record_index_records("p", "not-a-uuid", first, ["k"])[0]
    assert next(iter_hfile_records(write_metadata_hfile([raw]))).location == raw.location


def test_record_index_delete_entries_are_what_hudi_wrote(v8: Path) -> None:
    folder = v8 / ".hoodie" / "metadata" / "record_index"
    compared = 0
    for path in sorted(folder.glob(".*.log.*")):
        for block in read_log_file(path):
            if block.block_type is LogBlockType.DELETE_BLOCK:
                theirs = decode_delete_records(block.content)
                mine = record_index_delete_records([d.record_key for d in theirs])
                assert encode_delete_records(mine) == bytes(block.content), path.name
                compared += len(mine)
    assert compared == 2


def test_record_index_file_group_count_follows_hudi_estimate() -> None:
    assert record_index_file_group_count(0) == 10
    assert record_index_file_group_count(10_000_000) == 10  # 20M * 48 B < 10 GiB
    assert record_index_file_group_count(2_000_000_000) == 178  # ceil(4e9) // 22369621
    assert record_index_file_group_count(10**12) == 10000
    assert record_index_file_group_count(5, RecordIndexSizing(4, 4)) == 4
    assert record_index_file_group_id(3) == "record-index-0003-0"
