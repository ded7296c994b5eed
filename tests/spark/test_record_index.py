"""hoodie.index.type=RECORD_INDEX and HudiTable.lookup on the real v8 trips table (Hudi wrote its
record index): tags existing keys with the partition and file group hudi-rs reads them from, new
keys with nothing; a table without a record index is a ConfigError, and the table is unchanged."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.codec.schema import RECORD_KEY
from pyhudi.config.index import IndexType
from pyhudi.exceptions import ConfigError
from pyhudi.index.locate import tag_locations
from pyhudi.index.record_index import locate_on_driver, record_index_locations
from pyhudi.index.simple import LOC_BASE, LOC_FID, LOC_PARTITION
from pyhudi.metadata.record_index_lookup import RecordIndexFileGroups
from pyhudi.table.context import TableContext
from pyhudi.writer.config import resolve_write_config

V8 = "mor_avro__v8_trips_8i3u1d"


def _hudi_rs_locations(path: Path) -> dict[str, tuple[str, str]]:
    table = hudi_rs_table(str(path))
    names = table.column("_hoodie_file_name").to_pylist()
    return {
        key: (partition, name.lstrip(".").split("_")[0])
        for key, partition, name in zip(
            table.column("_hoodie_record_key").to_pylist(),
            table.column("_hoodie_partition_path").to_pylist(),
            names,
            strict=True,
        )
    }


def test_record_index_tags_existing_and_new_keys_as_hudi_rs_reads_them(spark, hudi_tables):
    path = hudi_tables[V8]
    expected = _hudi_rs_locations(path)
    assert len(expected) == 6
    keys = [*expected, "new-key-1", "new-key-2"]
    incoming = spark.createDataFrame(
        [(k, "city=x", i) for i, k in enumerate(keys)],
        f"`{RECORD_KEY}` string, `_hoodie_partition_path` string, v int",
    )
    ctx = TableContext.open(str(path))
    options = {
        "hoodie.table.name": "v8_trips_8i3u1d",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.metadata.enable": "false",
    }
    # pyhudi does not write a version 8 table's record index (a write asking for it is refused),
    # but it looks keys up in the one Hudi wrote: the lookup alone, with the record index's config.
    cfg = replace(resolve_write_config(options, ctx.config), index_type=IndexType.RECORD_INDEX)
    assert cfg.is_global_index
    tagged = tag_locations(spark, ctx, incoming, cfg, ["city=x"])
    rows = {r[RECORD_KEY]: r for r in tagged.collect()}
    assert len(rows) == len(keys) and {r["v"] for r in rows.values()} == set(range(len(keys)))
    for key, (partition, file_id) in expected.items():
        assert (rows[key][LOC_PARTITION], rows[key][LOC_FID]) == (partition, file_id), key
    latest = {s.file_id: s.base_file for s in ctx.view().latest_merged_file_slices()}
    for key in expected:
        base = latest[rows[key][LOC_FID]]
        assert rows[key][LOC_BASE] == (base.file_name if base else None)
    for key in ("new-key-1", "new-key-2"):
        assert rows[key][LOC_FID] is None and rows[key][LOC_PARTITION] is None


def test_spark_lookup_of_a_big_batch_equals_the_driver_lookup(spark, hudi_tables):
    path = hudi_tables[V8]
    expected = _hudi_rs_locations(path)
    keys = [*expected, "new-key-1", *expected]  # duplicates: located once
    incoming = spark.createDataFrame([(k,) for k in keys], f"`{RECORD_KEY}` string")
    ctx = TableContext.open(str(path))
    groups = RecordIndexFileGroups.open(ctx)
    on_driver = locate_on_driver(ctx, groups, pa.array(keys, pa.string()))
    in_spark = record_index_locations(spark, ctx, incoming, groups).toArrow()
    columns = [RECORD_KEY, LOC_PARTITION, LOC_FID, LOC_BASE]
    assert sorted(in_spark.select(columns).to_pylist(), key=str) == sorted(
        on_driver.select(columns).to_pylist(), key=str
    )
    assert {r[RECORD_KEY]: (r[LOC_PARTITION], r[LOC_FID]) for r in on_driver.to_pylist()} == (
        expected
    )


def test_lookup_seeks_the_record_index(hudi_tables):
    path = hudi_tables[V8]
    expected = _hudi_rs_locations(path)
    table = pyhudi.HudiTable.open(str(path))
    assert table.lookup([*expected, "absent"]) == expected
    assert table.lookup([]) == {}


def _snapshot(path: str) -> dict[str, int]:
    found = {}
    for folder, _, names in os.walk(path):
        for name in names:
            full = os.path.join(folder, name)
            found[os.path.relpath(full, path)] = os.path.getsize(full)
    return found


def test_record_index_on_a_table_without_one_is_a_config_error(spark, tmp_path):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    pyhudi.write(df_of(spark, trips(0, 4)), path, options)
    before = _snapshot(path)
    upsert = {
        **options,
        "hoodie.datasource.write.operation": "upsert",
        "hoodie.index.type": "RECORD_INDEX",
    }
    with pytest.raises(
        ConfigError, match=r"RECORD_INDEX.*'record_index' partition.*" + str(tmp_path)
    ):
        pyhudi.write(df_of(spark, trips(2, 4, ts=2)), path, upsert)
    assert _snapshot(path) == before
    with pytest.raises(ConfigError, match=r"HudiTable\.lookup.*'record_index'"):
        pyhudi.HudiTable.open(path).lookup(["k"])
    assert hudi_rs_table(path).num_rows == 4
