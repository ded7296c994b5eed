"""Change-data-capture logs on write (`hoodie.table.cdc.enabled`), compared with what Hudi writes.

The expected schema texts and records are those Hudi 0.15 and 1.2 wrote for the same table
(`t`: id, ts, v, p; record key id, precombine ts, partition p) in the same situation.
"""

from __future__ import annotations

import glob
import os

import pytest
from tests.helpers.crash import crashed_write

import pyhudi
from pyhudi.codec.log.avro_content import decode_avro_records
from pyhudi.codec.log.reader import read_log_file
from pyhudi.exceptions import ConfigError
from pyhudi.metadata import read_view
from pyhudi.model.enums import HeaderMetadataType, LogBlockType
from pyhudi.services.compaction.execute import run_compaction
from pyhudi.table.context import TableContext

SCHEMA = "id string, ts bigint, v string, p string"
_RECORD = (
    '{"type":"record","name":"t_record","fields":[{"name":"id","type":["null","string"],'
    '"default":null},{"name":"ts","type":["null","long"],"default":null},{"name":"v","type":'
    '["null","string"],"default":null},{"name":"p","type":["null","string"],"default":null}]}'
)
_OP = '{"name":"op","type":["null","string"],"doc":"","default":null}'
#: Hudi 0.15's SCHEMA header of a DATA_BEFORE_AFTER CDC block (Hudi 1.2 adds `"doc":""` after
#: the namespace).
BEFORE_AFTER_V6 = (
    '{"type":"record","name":"CDC","namespace":"hoodie.t","fields":[' + _OP + ","
    '{"name":"ts_ms","type":["null","string"],"doc":"","default":null},'
    '{"name":"before","type":["null",' + _RECORD + '],"doc":"","default":null},'
    '{"name":"after","type":["null","t_record"],"doc":"","default":null}]}'
)
BEFORE_V6 = (
    '{"type":"record","name":"CDC","namespace":"hoodie.t","fields":[' + _OP + ","
    '{"name":"record_key","type":["null","string"],"doc":"","default":null},'
    '{"name":"before","type":["null",' + _RECORD + '],"doc":"","default":null}]}'
)
OP_KEY = (
    '{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},'
    '{"name":"record_key","type":["string","null"]}]}'
)


def _options(mode: str = "DATA_BEFORE_AFTER", **extra: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.table.cdc.enabled": "true",
        "hoodie.table.cdc.supplemental.logging.mode": mode,
        "hoodie.metadata.enable": "false",
        **extra,
    }


def _rows(spark, ids, ts, v):  # type: ignore[no-untyped-def]
    return spark.createDataFrame([(f"k{i}", ts, v, f"p{i % 2}") for i in ids], SCHEMA)


def _write(spark, path, ids, ts, v, operation, options):  # type: ignore[no-untyped-def]
    result = pyhudi.write(
        _rows(spark, ids, ts, v), path, {**options, "hoodie.datasource.write.operation": operation}
    )
    return result.instant_time


def _cdc_logs(path: str, instant: str | None = None) -> dict[str, str]:
    """partition -> CDC log name (of `instant`)."""
    found = {}
    for name in glob.glob(os.path.join(path, "*", ".*.cdc")):
        partition, file = os.path.relpath(name, path).split(os.sep)
        if instant is None or f"_{instant}.log." in file:
            found[partition] = file
    return found


def _decoded(path: str, relative: str) -> tuple[str, list[dict]]:
    (block,) = read_log_file(os.path.join(path, relative))
    assert block.block_type is LogBlockType.CDC_DATA_BLOCK
    schema = block.header[HeaderMetadataType.SCHEMA]
    return schema, decode_avro_records(block.content, schema)


def _stats(path: str, time: str) -> dict:
    """partition -> write stats of the completed instant `time` (one file group a partition)."""
    ctx = TableContext.open(path)
    instant = ctx.active.timeline.find(time)
    assert instant is not None
    return {s.partition_path: s for s in ctx.active.commit_metadata(instant).write_stats()}


def _image(i: int, ts: int, v: str) -> dict:
    return {"id": f"k{i}", "ts": ts, "v": v, "p": f"p{i % 2}"}


def test_copy_on_write_upsert_and_delete_write_hudis_cdc_logs(spark, tmp_path):
    path = str(tmp_path / "t")
    options = _options()
    first = _write(spark, path, range(4), 1, "a", "insert", options)
    assert not _cdc_logs(path)  # new file groups: no change log
    props = TableContext.open(path).config.props
    assert props["hoodie.table.cdc.enabled"] == "true"
    assert props["hoodie.table.cdc.supplemental.logging.mode"] == "DATA_BEFORE_AFTER"

    upsert = _write(spark, path, range(2, 6), 2, "b", "upsert", options)
    logs = _cdc_logs(path, upsert)
    assert sorted(logs) == ["p0", "p1"]
    schema, records = _decoded(path, os.path.join("p0", logs["p0"]))
    assert schema == BEFORE_AFTER_V6
    assert records == [
        {"op": "u", "ts_ms": upsert, "before": _image(2, 1, "a"), "after": _image(2, 2, "b")},
        {"op": "i", "ts_ms": upsert, "before": None, "after": _image(4, 2, "b")},
    ]
    stats = _stats(path, upsert)
    size = os.path.getsize(os.path.join(path, "p0", logs["p0"]))
    assert stats["p0"].cdc_stats == {f"p0/{logs['p0']}": size}
    name = logs["p0"]
    base = os.path.basename(stats["p0"].path)
    assert name.endswith(f"_{upsert}.log.1_{base.split('_')[1]}.cdc")

    delete = _write(spark, path, [0, 3], 3, "c", "delete", options)
    logs = _cdc_logs(path, delete)
    _, records = _decoded(path, os.path.join("p1", logs["p1"]))
    assert records == [{"op": "d", "ts_ms": delete, "before": _image(3, 2, "b"), "after": None}]
    assert first < upsert < delete


def test_a_killed_cdc_write_is_rolled_back_and_clean_takes_cdc_logs_with_their_slice(
    spark, tmp_path
):
    path = str(tmp_path / "t")
    options = _options(
        **{
            "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
            "hoodie.cleaner.fileversions.retained": "1",
            "hoodie.metadata.enable": "true",  # the cleaner lists files through it
        }
    )
    _write(spark, path, range(4), 1, "a", "insert", options)
    upsert = _write(spark, path, [2, 3], 2, "b", "upsert", options)
    upsert_logs = _cdc_logs(path, upsert)
    assert sorted(upsert_logs) == ["p0", "p1"]

    failed = crashed_write(
        spark,
        path,
        _rows(spark, [2], 3, "x"),
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    ((partition, name),) = _cdc_logs(path, failed).items()
    assert os.path.exists(
        os.path.join(path, ".hoodie", ".temp", failed, partition, name + ".marker.APPEND")
    )
    result = pyhudi.write(
        _rows(spark, [0, 1], 4, "c"),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    assert result.rolled_back == (failed,)
    assert not _cdc_logs(path, failed)
    # The upsert's slices were cleaned (one file version retained), CDC logs included.
    assert not _cdc_logs(path, upsert)
    assert sorted(_cdc_logs(path, result.instant_time)) == ["p0", "p1"]
    # The metadata table's file listing follows: the kept CDC logs listed, the cleaned ones not.
    listing = read_view(TableContext.open(path), {}).listing.files
    listed = {(p, f.name) for p, files in listing.items() for f in files if f.name.endswith(".cdc")}
    assert listed == {(p, n) for p, n in _cdc_logs(path, result.instant_time).items()}

    with pytest.raises(ConfigError, match=r"hoodie\.table\.cdc\.enabled='false'"):
        pyhudi.write(
            _rows(spark, [0], 5, "d"), path, {**options, "hoodie.table.cdc.enabled": "false"}
        )


@pytest.mark.parametrize(
    ("mode", "schema", "update", "insert"),
    [
        ("OP_KEY_ONLY", OP_KEY, {"op": "u", "record_key": "k2"}, {"op": "i", "record_key": "k4"}),
        (
            "DATA_BEFORE",
            BEFORE_V6,
            {"op": "u", "record_key": "k2", "before": _image(2, 1, "a")},
            {"op": "i", "record_key": "k4", "before": None},
        ),
    ],
)
def test_key_only_and_before_modes_write_hudis_records(
    spark, tmp_path, mode, schema, update, insert
):
    path = str(tmp_path / "t")
    options = _options(mode)
    _write(spark, path, range(4), 1, "a", "insert", options)
    upsert = _write(spark, path, range(2, 6), 2, "b", "upsert", options)
    assert (
        TableContext.open(path).config.props["hoodie.table.cdc.supplemental.logging.mode"] == mode
    )
    logs = _cdc_logs(path, upsert)
    assert _decoded(path, os.path.join("p0", logs["p0"])) == (schema, [update, insert])


def test_merge_on_read_small_file_merge_writes_a_cdc_log_and_log_appends_none(spark, tmp_path):
    path = str(tmp_path / "t")
    options = _options(**{"hoodie.datasource.write.table.type": "MERGE_ON_READ"})
    _write(spark, path, range(4), 1, "a", "insert", options)
    merged = _write(spark, path, range(2, 6), 2, "b", "upsert", options)  # inserts: small files
    logs = _cdc_logs(path, merged)
    _, records = _decoded(path, os.path.join("p1", logs["p1"]))
    assert records == [
        {"op": "u", "ts_ms": merged, "before": _image(3, 1, "a"), "after": _image(3, 2, "b")},
        {"op": "i", "ts_ms": merged, "before": None, "after": _image(5, 2, "b")},
    ]
    appended = _write(spark, path, [3], 3, "c", "upsert", options)  # an update only: a log append
    assert not _cdc_logs(path, appended)
    assert pyhudi.read(spark, path).filter("id = 'k3'").select("v").first()[0] == "c"


def test_version_9_compaction_writes_the_changes_against_the_previous_base_file(spark, tmp_path):
    path = str(tmp_path / "t")
    options = _options(
        **{
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.write.table.version": "9",
            "hoodie.parquet.small.file.limit": "0",
        }
    )
    _write(spark, path, range(4), 1, "a", "insert", options)
    _write(spark, path, [1, 3], 2, "b", "upsert", options)
    _write(spark, path, [1], 3, "c", "delete", options)
    (outcome,) = run_compaction(spark, TableContext.open(path), options, force=True)
    logs = _cdc_logs(path, outcome.instant_time)
    assert sorted(logs) == ["p1"]
    schema, records = _decoded(path, os.path.join("p1", logs["p1"]))
    assert schema == BEFORE_AFTER_V6.replace(
        '"namespace":"hoodie.t",', '"namespace":"hoodie.t","doc":"",'
    )
    t = outcome.instant_time
    assert records == [
        {"op": "d", "ts_ms": t, "before": _image(1, 1, "a"), "after": None},
        {"op": "u", "ts_ms": t, "before": _image(3, 1, "a"), "after": _image(3, 2, "b")},
    ]
    stats = _stats(path, t)
    assert stats["p1"].cdc_stats == {
        f"p1/{logs['p1']}": os.path.getsize(os.path.join(path, "p1", logs["p1"]))
    }


def test_a_stale_update_is_no_change_as_hudi_1_2_logs_it(spark, tmp_path):
    """Hudi 1.2 (and 0.15 under event-time ordering) log nothing for an incoming record older
    than the stored one: here, an insert into the same file group only."""
    path = str(tmp_path / "t")
    options = _options(**{"hoodie.write.table.version": "9"})
    _write(spark, path, [0, 2], 5, "a", "insert", options)
    upsert = _write(spark, path, [0, 4], 1, "b", "upsert", options)  # k0 stale, k4 new
    (name,) = _cdc_logs(path, upsert).values()
    _, records = _decoded(path, os.path.join("p0", name))
    assert records == [{"op": "i", "ts_ms": upsert, "before": None, "after": _image(4, 1, "b")}]
