"""pyhudi upgrades and downgrades a table as Apache Hudi 1.2 does: a pyhudi v6 table (a few commits
with a delete, a compaction on merge-on-read, its metadata table on) is upgraded to version 9 by
a pyhudi write asking `hoodie.write.table.version=9`, and a copy (modification times kept: Hudi
takes completion times from them) by Hudi 1.2's write with the same options. Then: the same
`hoodie.properties` (but the metadata table's entries: pyhudi rebuilds that table, Hudi
upgrades it in place), the same timeline file names for every instant the v6 table had
(completion times included) and the same new instants (modulo their times), the commit metadata
re-encoded alike, and every reader (Hudi 1.2, pyhudi, hudi-rs) reads both tables alike. Then
pyhudi downgrades its table to version 6 and Hudi 1.2's `downgrade_table` the copy: the same
properties and timeline names again, and Hudi 0.15 reads pyhudi's table as pyhudi does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import pyhudi
from pyhudi.codec.archived_entry import decode_archive_log
from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.lsm_timeline import decode_lsm_file
from pyhudi.table.context import TableContext
from pyhudi.table.downgrade import ARCHIVE_MARKER
from tests.judge.agreement import assert_readers_agree
from tests.judge.compare import HUDI_READ, assert_same_read, hudi_frame
from tests.judge.tables import all_types_frame, base_options

#: Entries of the metadata table's state: pyhudi drops and rebuilds it (files only), Hudi upgrades
#: it in place (and its procedures build column stats, with their index definitions).
_NOT_COMPARED = ("hoodie.table.metadata.partitions", "hoodie.table.index.defs.path")


def _properties(path: Path) -> dict[str, str]:
    text = (path / ".hoodie" / "hoodie.properties").read_text()
    entries = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k: v for k, v in entries.items() if not k.startswith("#") and k not in _NOT_COMPARED}


def _timeline(folder: Path, old: set[str]) -> tuple[list[str], list[str]]:
    """(names of the v6 table's instants, shapes of the new ones with their times masked)."""
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name[:1].isdigit())
    kept = [n for n in names if n[:17] in old]
    new = sorted(
        "T" + (n[17:] if n[17] != "_" else "_C" + n[35:]) for n in names if n[:17] not in old
    )
    return kept, new


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_upgrade_to_9_and_downgrade_to_6_as_hudi_1_2(
    spark, hudi_1_2, hudi_0_15, tmp_path, table_type
) -> None:  # type: ignore[no-untyped-def]
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    options = base_options(
        "upgrading",
        table_type,
        **{
            "hoodie.metadata.enable": "true",
            "hoodie.compact.inline": "false",  # compacted by the delete only
            "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.clean.automatic": "false",
        },
    )
    # The last v6 write asks version 9 with auto upgrade off: written at version 6, as Hudi 1.2.
    no_upgrade = {"hoodie.write.table.version": "9", "hoodie.write.auto.upgrade": "false"}
    for operation, df, extra in [
        ("bulk_insert", all_types_frame(spark, range(12), 1, "a"), {}),
        ("upsert", all_types_frame(spark, range(8, 16), 2, "b"), {}),
        ("delete", all_types_frame(spark, range(0, 2), 9, "c"), {"hoodie.compact.inline": "true"}),
        ("upsert", all_types_frame(spark, range(4, 6), 4, "d"), no_upgrade),
    ]:
        write = {**options, **extra, "hoodie.datasource.write.operation": operation}
        pyhudi.write(df, str(ours), write)
    v6 = TableContext.open(str(ours))
    assert v6.config.version == 6
    old = {i.time for i in v6.active.timeline}
    if table_type == "MERGE_ON_READ":  # the compaction ran, and a delta commit followed it
        assert any(
            i.action.value == "compaction" or i.action.value == "commit" for i in v6.active.timeline
        )
        assert any(s.has_log_files for s in v6.view().latest_file_slices())
    shutil.copytree(ours, theirs)  # copy2: modification times kept

    upgrade = {
        **options,
        "hoodie.write.table.version": "9",
        "hoodie.metadata.index.column.stats.enable": "false",
        "hoodie.datasource.write.operation": "upsert",
    }
    rows = all_types_frame(spark, range(14, 18), 5, "e")
    hudi_1_2.write(str(theirs), rows, upgrade)
    pyhudi.write(rows, str(ours), upgrade)

    assert _properties(ours) == _properties(theirs)
    assert _properties(ours)["hoodie.table.version"] == "9"
    kept, new = _timeline(ours / ".hoodie/timeline", old)
    assert (kept, new) == _timeline(theirs / ".hoodie/timeline", old)
    assert not [p for p in (ours / ".hoodie").iterdir() if p.is_file() and p.name[:17] in old]
    for name in kept:  # Avro commit metadata alike (sync markers differ)
        if (
            name.endswith(("commit", "deltacommit", "requested", "inflight"))
            and "compaction" not in name
        ):
            mine, hudis = (p / ".hoodie" / "timeline" / name for p in (ours, theirs))
            assert decode_container(mine.read_bytes()) == decode_container(hudis.read_bytes()), name

    what = f"{table_type} upgraded to v9"
    count = assert_readers_agree(spark, hudi_1_2, str(ours), what)
    assert count == 16  # keys 2..17
    theirs_read = hudi_frame(spark, hudi_1_2.read(str(theirs), HUDI_READ))
    drop = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
    label = f"{what}: pyhudi's and Hudi's upgrades"
    assert_same_read(pyhudi.read(spark, str(ours)), theirs_read, label, drop=drop)
    assert pyhudi.HudiTable(str(ours)).properties["hoodie.table.metadata.partitions"] == "files"

    # Downgrade to 6: pyhudi's, and Hudi's downgrade_table on the copy; Hudi 0.15 reads ours.
    name = f"theirs_{table_type.lower()}"
    hudi_1_2.sql(f"CREATE TABLE {name} USING hudi LOCATION '{theirs}'")
    hudi_1_2.call("downgrade_table", table=name, to_version="SIX")
    pyhudi.downgrade_table(str(ours), 6, spark=spark)
    assert _properties(ours) == _properties(theirs)
    assert _properties(ours)["hoodie.table.version"] == "6"
    assert _timeline(ours / ".hoodie", old) == _timeline(theirs / ".hoodie", old)
    assert not [p for p in (ours / ".hoodie/timeline").iterdir() if p.is_file()]
    # Snapshot and read-optimized: time travel and incremental reads of the delta commit written
    # at version 9 read its log file, whose blocks carry a version-9 header Hudi 0.15 does not
    # know (Hudi's own downgrade leaves its log files as they are too).
    only = ("snapshot", "read optimized")
    count = assert_readers_agree(spark, hudi_0_15, str(ours), f"{what}, downgraded", only=only)
    assert count == 16


def _history(path: Path) -> tuple[list[str], list[tuple]]:
    """(the history's file names, its rows with the Avro metadata and plans decoded)."""
    folder = path / ".hoodie" / "timeline" / "history"
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    rows = []
    for name in names:
        if name.endswith(".parquet"):
            for row in decode_lsm_file((folder / name).read_bytes()):
                decoded = [decode_container(b) if b else None for b in (row.metadata, row.plan)]
                rows.append((row.instant_time, row.completion_time, row.action, *decoded))
    return names, rows


def _archive_files(path: Path) -> list[str]:
    """The archive files' names, by version."""
    names = [p.name for p in (path / ".hoodie" / "archived").iterdir()]
    versions = {
        n: int(m.group(1)) for n in names if (m := re.match(r"\.commits_\.archive\.(\d+)_", n))
    }
    return sorted(versions, key=versions.__getitem__)


def _entries(path: Path, names: list[str]) -> list[dict]:
    """The entries of archive files, in order."""
    folder = path / ".hoodie" / "archived"
    return [e for name in names for e in decode_archive_log((folder / name).read_bytes())]


def test_upgrade_moves_the_archived_timeline_into_the_lsm_history_as_hudi_1_2(
    spark, hudi_1_2, hudi_0_15, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    """A merge-on-read v6 table whose archive holds delta commits, compactions (their plans) and
    cleans, upgraded by pyhudi and (a copy) by Hudi 1.2's `upgrade_table`: the same history.
    Downgraded back to 6 by both: the same new archive files, but for the entry Hudi drops."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    options = base_options(
        "archived",
        "MERGE_ON_READ",
        **{
            "hoodie.metadata.enable": "false",
            "hoodie.compact.inline": "true",
            "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.keep.min.commits": "2",
            "hoodie.keep.max.commits": "3",
            "hoodie.cleaner.commits.retained": "1",
            "hoodie.commits.archival.batch": "4",  # several archive files
            "hoodie.datasource.write.operation": "upsert",
        },
    )
    for i in range(7):
        pyhudi.write(all_types_frame(spark, range(i, i + 3), i + 1, f"w{i}"), str(ours), options)
    archived = pyhudi.HudiTable(str(ours)).archived_timeline()
    assert {i.action.value for i in archived} >= {"deltacommit", "commit", "clean"}
    shutil.copytree(ours, theirs)

    name = "theirs_archived"
    hudi_1_2.sql(f"CREATE TABLE {name} USING hudi LOCATION '{theirs}'")
    hudi_1_2.call("upgrade_table", table=name, to_version="NINE")
    result = pyhudi.upgrade_table(str(ours), 9, spark=spark)
    assert result.archived_instants == len(archived)

    names, rows = _history(ours)
    assert (names, rows) == _history(theirs)
    # Batches of 10 actions (`hoodie.commits.archival.batch`; Hudi's procedure takes the default).
    assert len([n for n in names if n.endswith(".parquet")]) >= 2, names
    assert any(row[2] == "commit" and row[4] is not None for row in rows)  # a compaction's plan
    upgraded = pyhudi.HudiTable(str(ours)).archived_timeline()
    assert [(i.time, i.action) for i in upgraded] == [(i.time, i.action) for i in archived]
    count = assert_readers_agree(
        spark, hudi_1_2, str(ours), "archived, upgraded", only=("snapshot",)
    )
    assert count == 9  # keys 0..8

    # Back to 6: the history's rows (by file name, each in file order) as completed entries, in
    # new archive files of 10 (after the ones the upgrade left), written with Hudi 1.2's schema.
    before = _archive_files(ours)
    assert before == _archive_files(theirs)
    hudi_1_2.call("downgrade_table", table=name, to_version="SIX")
    pyhudi.downgrade_table(str(ours), 6, spark=spark)
    new = [n for n in _archive_files(ours) if n not in before]
    hudis_new = [n for n in _archive_files(theirs) if n not in before]
    assert new == [f".commits_.archive.{len(before) + k}_1-0-1" for k in (1, 2)]
    mine, hudis = _entries(ours, new), _entries(theirs, hudis_new)
    assert [(e["commitTime"], e["actionType"], e["stateTransitionTime"]) for e in mine] == [
        (row[0], row[2], row[1]) for row in rows
    ]
    # Hudi's ArchiveEntryFlusher drops the entry that arrives when its batch is full (the 11th it
    # loads, docs/table-versions.md; its load order of the history files varies from run to run):
    # pyhudi keeps it; every entry Hudi wrote equals pyhudi's of that instant, member by member.
    assert len(rows) == 11 and hudis_new == new[:1]
    by_time = {e["commitTime"]: e for e in mine}
    assert len(hudis) == 10 and all(e == by_time[e["commitTime"]] for e in hudis)
    assert len(by_time.keys() - {e["commitTime"] for e in hudis}) == 1
    assert any(e["hoodieCompactionPlan"] for e in mine) and any(
        e["hoodieCleanMetadata"] for e in mine
    )
    history = ours / ".hoodie" / "timeline" / "history"
    assert _history(ours)[0] == _history(theirs)[0] == names  # left in place, as Hudi does
    assert not (ours / ".hoodie" / "archived" / ARCHIVE_MARKER).exists() and history.is_dir()
    downgraded = pyhudi.HudiTable(str(ours)).archived_timeline()
    assert [(i.time, i.action) for i in downgraded] == [(i.time, i.action) for i in archived]
    count = assert_readers_agree(
        spark, hudi_0_15, str(ours), "archived, downgraded", only=("snapshot",)
    )
    assert count == 9
