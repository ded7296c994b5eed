"""Record positions from the index lookup: the SIMPLE / BLOOM / GLOBAL_SIMPLE lookups (a Spark job
reading `_metadata.row_index` with the keys, or the bloom check of the candidate files' keys) and
the small-batch lookup on the driver return each located record's row in its base file; the log
append writes those as the RECORD_POSITIONS header without reading the base file's keys. The header
is byte for byte what the key read gives, hudi-rs reads the table, and the read matches."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.codec.log.block import LogBlock
from pyhudi.codec.log.positions import encode_positions
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.codec.schema import PARTITION_PATH, RECORD_KEY, arrow_to_avro_json
from pyhudi.file_group.control_columns import POSITION
from pyhudi.file_group.log_append import KnownPositions, LogSpec, SliceState, append_log
from pyhudi.index import driver_lookup
from pyhudi.index.locate import tag_locations
from pyhudi.model.enums import HeaderMetadataType, LogBlockType
from pyhudi.table.context import TableContext
from pyhudi.writer.config import resolve_write_config
from pyhudi.writer.pipeline import task_spec

MOR = {
    **trips_options(),
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.parquet.small.file.limit": "0",
}
COLUMNS = ["_hoodie_record_key", "uuid", "city", "ts", "fare"]
LOOKUPS = {
    "driver": {},
    "simple": {"hoodie.index.type": "SIMPLE"},
    "bloom": {"hoodie.index.type": "BLOOM"},
    "global_simple": {"hoodie.index.type": "GLOBAL_SIMPLE"},
}


def _write(path, data, operation, **extra):
    options = {**MOR, **extra, "hoodie.datasource.write.operation": operation}
    return pyhudi.write(data, path, options)


def _base_keys(path, file_id):
    (base,) = [
        os.path.join(d, f)
        for d, _, fs in os.walk(path)
        for f in fs
        if f.startswith(file_id) and f.endswith(".parquet")
    ]
    return pq.read_table(base, columns=[RECORD_KEY]).column(0)


def _log_blocks(path):
    found = []
    for folder, _, names in sorted(os.walk(path)):
        for name in sorted(n for n in names if ".log." in n and ".hoodie" not in folder):
            with open(os.path.join(folder, name), "rb") as handle:
                file_id = name[1:].split("_")[0]
                found += [(file_id, b) for b in iter_blocks(handle.read(), read_content=False)]
    return found


def _key_read_header(base_keys, keys):
    """The header value the append task's key read gives for a block of `keys`."""
    rows_of = pc.index_in(pa.array(sorted(keys), pa.string()), value_set=base_keys)
    return encode_positions(rows_of.drop_null().to_numpy())


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
def test_index_positions_are_the_key_reads_header(spark, tmp_path, monkeypatch, lookup):
    if lookup != "driver":  # the Spark lookup: no batch is small enough for the driver's
        monkeypatch.setattr(driver_lookup, "DRIVER_LOOKUP_MAX_ROWS", 0)
    path, extra = str(tmp_path / "t"), LOOKUPS[lookup]
    _write(path, df_of(spark, trips(0, 120)), "bulk_insert", **extra)
    updated, deleted = trips(0, 120, ts=2, fare=7.0)[::5], trips(0, 120)[2::9]
    _write(path, df_of(spark, updated + trips(500, 6)), "upsert", **extra)
    _write(path, df_of(spark, deleted).select("uuid", "city"), "delete", **extra)
    blocks = _log_blocks(path)
    assert {b.block_type for _, b in blocks} == {
        LogBlockType.AVRO_DATA_BLOCK,
        LogBlockType.DELETE_BLOCK,
    }
    for file_id, block in blocks:
        base = _base_keys(path, file_id)
        is_delete = block.block_type is LogBlockType.DELETE_BLOCK
        keys = {r["uuid"] for r in (deleted if is_delete else updated)} & set(base.to_pylist())
        assert keys
        assert block.header[HeaderMetadataType.RECORD_POSITIONS] == _key_read_header(base, keys)
    theirs = rows(hudi_rs_table(path), columns=COLUMNS)
    ours = rows(pyhudi.read(spark, path).toArrow(), columns=COLUMNS)
    assert ours == theirs
    gone = {r["uuid"] for r in deleted}
    assert len(ours) == 126 - len(gone)
    assert {r["uuid"] for r in ours if r["fare"] == 7.0} == {r["uuid"] for r in updated} - gone


@pytest.mark.parametrize("index_type", ["SIMPLE", "BLOOM"])
def test_spark_lookup_returns_each_matchs_row_in_its_base_file(spark, tmp_path, index_type):
    path = str(tmp_path / "t")
    _write(path, df_of(spark, trips(0, 60)), "bulk_insert")
    ctx = TableContext.open(path)
    cfg = resolve_write_config({**MOR, "hoodie.index.type": index_type}, ctx.config)
    incoming = df_of(spark, trips(0, 60)[::4] + trips(900, 3)).select(
        F.col("uuid").alias(RECORD_KEY), F.col("city").alias(PARTITION_PATH)
    )
    tagged = tag_locations(spark, ctx, incoming, cfg, ["sf", "chennai", "sao_paulo"], 18, True)
    found = tagged.toArrow()
    assert found.column(POSITION).null_count == 3  # the new keys
    for row in found.filter(pc.is_valid(found.column(POSITION))).to_pylist():
        keys = _base_keys(path, row["__pyhudi_loc_fid"])
        assert keys[row[POSITION]].as_py() == row[RECORD_KEY]


def test_append_with_index_positions_reads_no_base_file(spark, tmp_path):
    """Known positions go into the header as they are: the slice's base file is never opened
    (here it does not exist: a read would fail)."""
    path = str(tmp_path / "t")
    _write(path, df_of(spark, trips(0, 9)), "bulk_insert")
    ctx = TableContext.open(path)
    cfg = resolve_write_config({**MOR, "hoodie.datasource.write.operation": "upsert"}, ctx.config)
    schema = pa.schema([(n, t) for n, t in [("uuid", pa.string()), ("city", pa.string())]])
    spec = task_spec(ctx, cfg, schema, "20991231000000000")
    records = pa.table({RECORD_KEY: ["a", "b"], PARTITION_PATH: ["sf", "sf"]})
    records = records.append_column("uuid", records.column(0)).append_column(
        "city", records.column(1)
    )
    state = SliceState("20200101000000000", "f1-0_0-1-1_20200101000000000.parquet", (), 1)
    log_spec = LogSpec(
        arrow_to_avro_json(spec.file_schema, "trips", with_meta_fields=True),
        "avro",
        record_positions=True,
    )

    def appended(state: SliceState, token: str, upserts: pa.Array) -> tuple[dict, LogBlock]:
        positions = KnownPositions(upserts, pa.array([], pa.int64()))
        row = append_log(
            spec, log_spec, state, "sf", "f1-0", token, 0, records, records.slice(0, 0),
            num_updates=2, positions=positions,
        )  # fmt: skip
        with open(os.path.join(path, "sf", row["file_name"]), "rb") as handle:
            (block,) = iter_blocks(handle.read(), read_content=False)
        return row, block

    row, block = appended(state, "0-1-1", pa.array([70_000, 3], pa.int64()))
    assert block.header[HeaderMetadataType.RECORD_POSITIONS] == encode_positions(
        np.array([3, 70_000])
    )
    state2 = SliceState(state.base_instant, state.base_file_name, (row["file_name"],), 2)
    _, block = appended(state2, "0-1-2", pa.array([None, 3], pa.int64()))
    assert HeaderMetadataType.RECORD_POSITIONS not in block.header  # an insert: no header
