"""`hoodie.properties` through upgrades and downgrades, against what Apache Hudi 1.2 wrote: the
expected entries below are those of pyhudi's version-6 tables after Hudi 1.2's
`CALL upgrade_table` / `downgrade_table` (to EIGHT, NINE, then EIGHT and SIX; captured on this
machine, the metadata table's entries left out). Also the refusals, before anything is written.
No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.table.config import TableConfig
from pyhudi.table.context import TableContext
from pyhudi.table.downgrade import check_downgrade, downgraded_properties
from pyhudi.table.upgrade import check_upgrade, upgraded_config
from pyhudi.writer.config import resolve_write_config

_MODEL = "org.apache.hudi.common.model."
_EVENT_TIME = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMON = {
    "hoodie.archivelog.folder": "archived",
    "hoodie.datasource.write.drop.partition.columns": "false",
    "hoodie.datasource.write.hive_style_partitioning": "false",
    "hoodie.datasource.write.partitionpath.urlencode": "false",
    "hoodie.partition.metafile.use.base.format": "false",
    "hoodie.populate.meta.fields": "true",
    "hoodie.table.base.file.format": "PARQUET",
    "hoodie.table.cdc.enabled": "false",
    "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "hoodie.table.name": "t",
    "hoodie.table.partition.fields": "part",
    "hoodie.table.recordkey.fields": "id",
    "hoodie.table.timeline.timezone": "UTC",
}
V6 = {**COMMON, "hoodie.table.precombine.field": "ts", "hoodie.table.version": "6"}
V6 |= {"hoodie.timeline.layout.version": "1"}
V6_MOR = {
    **V6,
    "hoodie.table.type": "MERGE_ON_READ",
    "hoodie.compaction.payload.class": _MODEL + "OverwriteWithLatestAvroPayload",
    "hoodie.compaction.record.merger.strategy": _EVENT_TIME,
}
V6_COW = {**V6, "hoodie.table.type": "COPY_ON_WRITE"}
#: What Hudi 1.2 adds to both at 8 and 9.
LAYOUT_2 = {
    "hoodie.timeline.layout.version": "2",
    "hoodie.timeline.path": "timeline",
    "hoodie.table.initial.version": "6",
    "hoodie.table.keygenerator.type": "SIMPLE",
    "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
    "hoodie.compaction.record.merger.strategy": _EVENT_TIME,
}
V8 = {
    "hoodie.table.version": "8",
    "hoodie.compaction.payload.class": _MODEL + "DefaultHoodieRecordPayload",
    "hoodie.record.merge.strategy.id": _EVENT_TIME,
}
NINE = {"hoodie.table.version": "9", "hoodie.table.ordering.fields": "ts"}
NOT_AT_9 = ("hoodie.table.precombine.field", "hoodie.compaction.payload.class")


def _without(props: dict[str, str], *keys: str) -> dict[str, str]:
    return {k: v for k, v in props.items() if k not in keys}


@pytest.mark.parametrize("v6", [V6_COW, V6_MOR], ids=["cow", "mor"])
def test_upgrades_write_the_entries_hudi_1_2_writes(v6: dict[str, str]) -> None:
    payload = v6.get("hoodie.compaction.payload.class", _MODEL + "DefaultHoodieRecordPayload")
    nine = {**_without(v6, *NOT_AT_9), **LAYOUT_2, **NINE}
    nine["hoodie.table.legacy.payload.class"] = payload  # the version-6 table's own
    assert upgraded_config(TableConfig(v6), 9).props == nine
    eight = {**v6, **LAYOUT_2, **V8}
    assert upgraded_config(TableConfig(v6), 8).props == eight
    # Hudi's 8 -> 9 of its version-8 table: the payload it recorded becomes the legacy one.
    legacy = {**_without(eight, *NOT_AT_9, "hoodie.record.merge.strategy.id"), **NINE}
    legacy["hoodie.table.legacy.payload.class"] = _MODEL + "DefaultHoodieRecordPayload"
    assert upgraded_config(TableConfig(eight), 9).props == legacy


def test_downgrades_write_the_entries_hudi_1_2_writes() -> None:
    nine = upgraded_config(TableConfig(V6_MOR), 9)
    eight = nine.with_changes(downgraded_properties(nine.props, 8)).props
    assert eight == {**V6_MOR, **LAYOUT_2, "hoodie.table.version": "8"} | {
        "hoodie.record.merge.strategy.id": _EVENT_TIME
    }
    six = nine.with_changes(downgraded_properties(nine.props, 6)).props
    # Hudi 1.2 leaves the key generator type, initial version and timeline path behind.
    assert six == {
        **V6_MOR,
        "hoodie.table.initial.version": "6",
        "hoodie.table.keygenerator.type": "SIMPLE",
        "hoodie.timeline.path": "timeline",
    }


def _table(tmp_path: Path, props: dict[str, str]) -> TableContext:
    return TableContext.create(str(tmp_path / "t"), props)


def test_what_pyhudi_does_not_upgrade_is_refused_before_anything_changes(tmp_path: Path) -> None:
    custom = _table(
        tmp_path / "a", {**V6_MOR, "hoodie.compaction.payload.class": "com.x.MyPayload"}
    )
    with pytest.raises(UnsupportedOperationError, match="built-in payloads"):
        check_upgrade(custom, 9)
    archived = _table(tmp_path / "b", V6_COW)
    (Path(archived.meta_path) / "archived" / ".commits_.archive.1_1-0-1").write_bytes(b"x")
    check_upgrade(archived, 9)  # an archived timeline moves into the LSM history
    with pytest.raises(UnsupportedOperationError, match="versions 8, 9, not 7"):
        check_upgrade(archived, 7)
    with pytest.raises(UnsupportedOperationError, match="not 6 to 8"):
        check_downgrade(archived, 8)
    assert TableContext.open(archived.uri).config.props == archived.config.props


def test_a_write_path_that_cannot_upgrade_says_so_and_auto_upgrade_off_writes_the_old_version(
    caplog: pytest.LogCaptureFixture,
) -> None:
    table = TableConfig(V6_COW)
    options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id"}
    options |= {"hoodie.datasource.write.partitionpath.field": "part"}
    nine = {**options, "hoodie.write.table.version": "9"}
    with pytest.raises(UnsupportedOperationError, match="does not upgrade tables"):
        resolve_write_config(nine, table)  # the data source, MERGE INTO: pyhudi.write upgrades
    off = {**nine, "hoodie.write.auto.upgrade": "false"}
    assert resolve_write_config(off, table).table_version == 6
    assert "the table stays at version 6" in caplog.text
    lower = TableConfig(upgraded_config(table, 9).props)
    with pytest.raises(UnsupportedOperationError, match="does not downgrade"):
        resolve_write_config({**options, "hoodie.write.table.version": "6"}, lower)
