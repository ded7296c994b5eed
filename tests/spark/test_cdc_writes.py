"""Change-data-capture logs on write (`hoodie.table.cdc.enabled`), compared with what Hudi writes.

The expected schema texts and records are those Hudi 0.15 and 1.2 wrote for the same table
(`t`: id, ts, v, p; record key id, precombine ts, partition p) in the same situation.
"""

from __future__ import annotations

import glob
import os

import pyhudi
from pyhudi.codec.log.avro_content import decode_avro_records
from pyhudi.codec.log.reader import read_log_file
from pyhudi.model.enums import HeaderMetadataType, LogBlockType
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
