"""A merge that drops no row goes on from the old file's footer bloom filter (the old keys are not
hashed again): the new footer is byte for byte the filter built from every key of the new file."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pyhudi.codec.bloom import (
    FOOTER_BLOOM_KEY,
    continued_bloom_filter,
    deserialize_bloom_filter,
    new_bloom_filter,
    read_footer_bloom,
)
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY, with_meta_fields
from pyhudi.file_group.base_file import BaseFileWriter
from pyhudi.file_group.merge import MergeSpec, merge_into_file_group
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.merge.config import MergeMode
from pyhudi.model.enums import IOType
from pyhudi.storage import Storage
from pyhudi.writer.config import resolve_write_config

SCHEMA = pa.schema([pa.field("v", pa.float64())])


def _spec(tmp_path, instant: str, **options: str) -> WriteTaskSpec:  # type: ignore[no-untyped-def]
    storage, root = Storage.for_uri(str(tmp_path / "t"))
    cfg = resolve_write_config({"hoodie.table.name": "t", **options}, None)
    return WriteTaskSpec(storage, root, instant, with_meta_fields(SCHEMA), cfg.sizing, cfg.bloom)


def _rows(keys: list[str], value: float) -> pa.Table:
    return pa.table(
        {
            RECORD_KEY: keys,
            PARTITION_PATH: ["p"] * len(keys),
            "v": [value] * len(keys),
        }
    )


def _footer_bloom_text(path: str) -> bytes:
    return pq.ParquetFile(path).metadata.metadata[FOOTER_BLOOM_KEY.encode()]


def _base(tmp_path, count: int, **options: str) -> str:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path, "20240101000000000", **options)
    writer = BaseFileWriter(spec, "p", "fg-1", "0-1-0", IOType.CREATE, task_partition_id=0)
    writer.write_new(_rows([f"key-{i:07d}" for i in range(count)], 1.0))
    return writer.close()["file_name"]


@pytest.mark.parametrize(
    ("count", "options"),
    [
        (150, {}),
        (150, {"hoodie.bloom.index.filter.type": "SIMPLE"}),
        # DYNAMIC_V0 rows of 40 keys, at most 100: the old file fills row 1 and part of row 2,
        # the inserts open row 3 and go past the bound (the round robin starts).
        (
            70,
            {
                "hoodie.index.bloom.num_entries": "40",
                "hoodie.bloom.index.filter.dynamic.max.entries": "100",
            },
        ),
    ],
)
@pytest.mark.parametrize("deletes", [0, 3])
def test_merged_footer_bloom_is_the_filter_of_all_its_keys(
    tmp_path, count, options, deletes
) -> None:  # type: ignore[no-untyped-def]
    base = _base(tmp_path, count, **options)
    spec = _spec(tmp_path, "20240102000000000", **options)
    b = spec.bloom
    old_footer = pq.ParquetFile(os.path.join(spec.base_path, "p", base)).metadata.metadata
    # The old file's filter is one a merge can go on from (the path this test compares).
    assert continued_bloom_filter(
        read_footer_bloom(old_footer), count, b.num_entries, b.fpp, b.type_code, b.max_entries
    )
    updated = [f"key-{i:07d}" for i in range(0, count, 7)]
    inserted = [f"new-{i:05d}" for i in range(60)]
    incoming = _rows(updated + inserted, 2.0)
    flags = np.zeros(incoming.num_rows, bool)
    flags[:deletes] = True
    merge = MergeSpec(MergeMode.COMMIT_TIME_ORDERING, None)
    row = merge_into_file_group(
        spec, merge, "p", "fg-1", base, incoming, pa.chunked_array([flags]), 0, "0-2-0"
    )
    path = os.path.join(spec.base_path, "p", row["file_name"])
    keys = pq.read_table(path, columns=[RECORD_KEY]).column(0)
    assert len(keys) == count + 60 - deletes and row["num_deletes"] == deletes
    expected = new_bloom_filter(b.num_entries, b.fpp, b.type_code, b.max_entries)
    expected.add_keys(keys)
    written = _footer_bloom_text(path)
    assert written.decode() == expected.serialize()
    assert read_footer_bloom(pq.ParquetFile(path).metadata.metadata).might_contain_keys(keys).all()


def test_a_filter_that_does_not_match_its_key_count_is_not_continued() -> None:
    built = new_bloom_filter(40, 1e-9, "DYNAMIC_V0", 100)
    built.add_keys([f"k{i}" for i in range(70)])
    text = built.serialize()
    again = deserialize_bloom_filter(text, "DYNAMIC_V0")
    assert continued_bloom_filter(again, 70, 40, 1e-9, "DYNAMIC_V0", 100) is again
    for keys, entries, fpp, kind in [
        (69, 40, 1e-9, "DYNAMIC_V0"),  # not the filter of these keys
        (70, 50, 1e-9, "DYNAMIC_V0"),  # other sizes
        (70, 40, 1e-6, "DYNAMIC_V0"),
        (70, 40, 1e-9, "SIMPLE"),  # other type
    ]:
        fresh = deserialize_bloom_filter(text, "DYNAMIC_V0")
        assert continued_bloom_filter(fresh, keys, entries, fpp, kind, 100) is None
    past_bound = new_bloom_filter(40, 1e-9, "DYNAMIC_V0", 100)
    past_bound.add_keys([f"k{i}" for i in range(130)])  # the round robin began: position unknown
    reread = deserialize_bloom_filter(past_bound.serialize(), "DYNAMIC_V0")
    assert continued_bloom_filter(reread, 130, 40, 1e-9, "DYNAMIC_V0", 100) is None
