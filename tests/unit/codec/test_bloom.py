"""Bloom filter codec against Hudi-written fixture files (reference §4.4).

The fixture files hold at most a few keys, far below `num_entries` (60000), so they exercise the hash,
the bit layout and the header, but not the row switch; key order only matters once a row is full
(within a row, setting bits commutes). Row growth and the bound are tested on small synthetic filters.
"""

from __future__ import annotations

import base64
import struct
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.helpers.fixtures import table_names, unzip_table

from pyhudi.codec import bloom
from pyhudi.codec.bloom import (
    FOOTER_BLOOM_KEY,
    FOOTER_MAX_KEY,
    FOOTER_MIN_KEY,
    FOOTER_TYPE_CODE_KEY,
    BloomFilterTypeCode,
    DynamicBloomFilter,
    deserialize_bloom_filter,
    footer_metadata,
    new_bloom_filter,
    read_footer_bloom,
)
from pyhudi.codec.bloom_hash import hash_positions
from pyhudi.exceptions import InvalidRecordError

HUDI_FOOTER_KEYS = (FOOTER_BLOOM_KEY, FOOTER_TYPE_CODE_KEY, FOOTER_MIN_KEY, FOOTER_MAX_KEY)


@pytest.fixture(scope="session")
def base_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Base parquet files (outside `.hoodie/`) of every fixture table that has meta fields."""
    root = tmp_path_factory.mktemp("hudi-tables")
    for name in table_names():
        unzip_table(name, root)
    files = [
        f
        for f in sorted(root.rglob("*.parquet"))
        if ".hoodie" not in f.parts and "no_metafields" not in str(f.relative_to(root))
    ]
    assert len(files) > 10
    return files


def _keys(f: Path) -> pa.ChunkedArray:
    return pq.read_table(f, columns=["_hoodie_record_key"]).column(0)


def _meta(f: Path) -> dict[bytes, bytes]:
    meta = pq.read_metadata(f).metadata
    assert meta is not None
    return meta


def test_fixture_footers_are_dynamic_v0_with_defaults(base_files: list[Path]) -> None:
    for f in base_files:
        bf = read_footer_bloom(_meta(f))
        assert isinstance(bf, DynamicBloomFilter), f
        assert (bf.vector_size, bf.nb_hash, bf.nr, len(bf.rows)) == (2587966, 30, 60000, 1)
        assert bf.current_nb_record == len(_keys(f))


def test_every_record_key_tests_positive(base_files: list[Path]) -> None:
    for f in base_files:
        bf = read_footer_bloom(_meta(f))
        assert bf is not None
        keys = _keys(f)
        assert bf.might_contain_keys(keys).all(), f
        assert all(bf.might_contain(k) for k in keys.to_pylist()), f


def test_random_uuids_test_negative(base_files: list[Path]) -> None:
    randoms = [str(uuid.uuid4()) for _ in range(2000)]
    for f in base_files:
        bf = read_footer_bloom(_meta(f))
        assert bf is not None
        assert not bf.might_contain_keys(randoms).any(), f


def test_rebuilt_filter_and_footer_equal_hudi_bytes(base_files: list[Path]) -> None:
    for f in base_files:
        meta = _meta(f)
        keys = _keys(f).to_pylist()
        rebuilt = new_bloom_filter()
        rebuilt.add_keys(keys)
        assert rebuilt.serialize() == meta[FOOTER_BLOOM_KEY.encode()].decode(), f
        expected = {k: meta[k.encode()].decode() for k in HUDI_FOOTER_KEYS}
        assert footer_metadata(rebuilt, min(keys), max(keys)) == expected, f


def test_deserialize_serialize_is_identity_on_fixtures(base_files: list[Path]) -> None:
    for f in base_files:
        text = _meta(f)[FOOTER_BLOOM_KEY.encode()].decode()
        assert deserialize_bloom_filter(text, "dynamic_v0").serialize() == text


def test_default_sizes_match_hudi() -> None:
    assert bloom.bloom_sizes(60000, 1e-9) == (2587966, 30)
    bf = new_bloom_filter()
    raw = base64.b64decode(bf.serialize())
    assert struct.unpack_from(">iibiiii", raw) == (-1, 30, 1, 2587966, 60000, 0, 1)
    assert len(raw) == 25 + 13 + (2587966 + 7) // 8


def test_simple_filter_round_trip() -> None:
    keys = [f"key-{i}" for i in range(500)] + ["ключ", "键", "🔑"]
    bf = new_bloom_filter(num_entries=1000, fpp=1e-6, type_code="SIMPLE")
    assert bf.type_code is BloomFilterTypeCode.SIMPLE
    bf.add_keys(keys)
    text = bf.serialize()
    raw = base64.b64decode(text)
    assert struct.unpack_from(">iibi", raw) == (-1, bf.nb_hash, 1, bf.vector_size)
    assert len(raw) == 13 + (bf.vector_size + 7) // 8
    back = deserialize_bloom_filter(text, None)
    assert back.type_code is BloomFilterTypeCode.SIMPLE
    assert back.serialize() == text
    assert back.might_contain_keys(keys).all()
    assert not back.might_contain_keys([str(uuid.uuid4()) for _ in range(1000)]).any()


def _row_of(bf: bloom.BloomFilter, key: str) -> list[int]:
    pos = hash_positions([key], bf.nb_hash, bf.vector_size)[0]
    return [i for i, bits in enumerate(bf.rows) if bits[pos].all()]


def test_dynamic_filter_adds_rows_and_stays_bounded() -> None:
    bf = new_bloom_filter(num_entries=10, fpp=1e-6, max_entries=25)
    assert isinstance(bf, DynamicBloomFilter)
    keys = [f"k{i:03d}" for i in range(100)]
    bf.add_keys(keys[:10])
    assert (len(bf.rows), bf.current_nb_record) == (1, 10)
    bf.add(keys[10])  # the 11th key opens row 1
    assert (len(bf.rows), bf.current_nb_record) == (2, 1)
    bf.add_keys(keys[11:36])
    # rows * nr < maxNr opens rows 1 and 2; at 3 * 10 >= 25 the bound is reached
    assert len(bf.rows) == 3
    assert _row_of(bf, keys[0]) == [0] and _row_of(bf, keys[25]) == [2]
    # past the bound: row 0 takes keys 31 and 32 (the round robin restarts at 0), then 1, 2, 0, ...
    assert [_row_of(bf, k) for k in keys[30:36]] == [[0], [0], [1], [2], [0], [1]]
    bf.add_keys(keys[36:])
    assert len(bf.rows) == 3
    assert bf.current_nb_record == 80  # 10 in row 2, then 70 more past the bound
    assert bf.might_contain_keys(keys).all()
    raw = base64.b64decode(bf.serialize())
    assert struct.unpack_from(">iii", raw, 13) == (10, 80, 3)


def test_default_dynamic_filter_has_at_most_two_rows() -> None:
    bf = new_bloom_filter()
    keys = np.array([str(uuid.uuid4()) for _ in range(130_000)], dtype=object)
    bf.add_keys(keys[:60_001])
    assert (len(bf.rows), bf.current_nb_record) == (2, 1)
    bf.add_keys(keys[60_001:])
    assert (len(bf.rows), bf.current_nb_record) == (2, 70_000)
    assert bf.might_contain_keys(keys).all()


def test_batched_add_equals_key_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [f"key-{i}" for i in range(60)]
    one_by_one = new_bloom_filter(num_entries=7, fpp=0.01, max_entries=30)
    for k in keys:
        one_by_one.add(k)
    monkeypatch.setattr(bloom, "_BATCH", 4)
    batched = new_bloom_filter(num_entries=7, fpp=0.01, max_entries=30)
    batched.add_keys(iter(keys))
    assert batched.serialize() == one_by_one.serialize()


def test_one_batch_of_mixed_lengths_past_the_bound_equals_key_by_key() -> None:
    """Rows filled in order, then the round robin, with keys of three lengths in one batch."""
    keys = [f"k-{i}" for i in range(0, 400, 3)]
    one_by_one = new_bloom_filter(num_entries=9, fpp=0.01, max_entries=40)
    for k in keys:
        one_by_one.add(k)
    batched = new_bloom_filter(num_entries=9, fpp=0.01, max_entries=40)
    batched.add_keys(keys)
    assert len(batched.rows) == 5
    assert batched.serialize() == one_by_one.serialize()


def test_deserialized_dynamic_filter_never_opens_rows() -> None:
    """`maxNr` is not serialized, so Hudi's reread filter has maxNr = 0 and reuses row 0."""
    bf = new_bloom_filter(num_entries=5, fpp=0.01, max_entries=100)
    bf.add_keys([f"a{i}" for i in range(5)])
    back = deserialize_bloom_filter(bf.serialize(), "DYNAMIC_V0")
    back.add("extra")
    bf.add("extra")
    assert len(bf.rows) == 2 and len(back.rows) == 1
    assert back.might_contain("extra")


def test_key_container_types_agree() -> None:
    keys = ["a", "bb", "ccc", "dddd", "ééé", "x" * 37]
    expected = hash_positions(keys, 30, 2587966)
    for variant in (
        np.array(keys),
        np.array(keys, dtype=object),
        pa.array(keys),
        pa.chunked_array([keys[:2], keys[2:]]),
        pa.array(keys, pa.large_string()).slice(0),
        pa.array(keys).dictionary_encode(),
        [k.encode() for k in keys],
    ):
        np.testing.assert_array_equal(hash_positions(variant, 30, 2587966), expected)
    sliced = pa.array(["zz", *keys]).slice(1)
    np.testing.assert_array_equal(hash_positions(sliced, 30, 2587966), expected)


def test_invalid_keys_are_rejected() -> None:
    bf = new_bloom_filter(num_entries=10, fpp=0.01)
    with pytest.raises(InvalidRecordError):
        bf.add("")
    with pytest.raises(InvalidRecordError):
        bf.add_keys(["a", None])
    with pytest.raises(TypeError):
        bf.add_keys("abc")
    with pytest.raises(ValueError):
        new_bloom_filter(type_code="BOGUS")


def test_footer_metadata_round_trip(tmp_path: Path) -> None:
    keys = ["b", "a", "c"]
    for code in ("DYNAMIC_V0", "SIMPLE"):
        bf = new_bloom_filter(num_entries=100, fpp=1e-6, type_code=code)
        bf.add_keys(keys)
        meta = footer_metadata(bf, "a", "c")
        assert (FOOTER_TYPE_CODE_KEY in meta) == (code == "DYNAMIC_V0")
        assert (meta[FOOTER_MIN_KEY], meta[FOOTER_MAX_KEY]) == ("a", "c")
        path = tmp_path / f"{code}.parquet"
        table = pa.table({"_hoodie_record_key": keys}).replace_schema_metadata(meta)
        pq.write_table(table, path)
        back = read_footer_bloom(pq.read_metadata(path).metadata)
        assert back is not None and back.type_code.value == code
        assert back.serialize() == bf.serialize()
        assert read_footer_bloom(meta) is not None  # str keys work too
    assert footer_metadata(None, None, None) == {}
    assert read_footer_bloom(None) is None
    assert read_footer_bloom({b"writer.model.name": b"avro"}) is None


def test_legacy_footer_key_is_read() -> None:
    bf = new_bloom_filter(num_entries=100, fpp=1e-6, type_code="SIMPLE")
    bf.add("legacy")
    back = read_footer_bloom({b"com.uber.hoodie.bloomfilter": bf.serialize().encode()})
    assert back is not None and back.might_contain("legacy")
