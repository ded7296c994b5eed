"""Archival of table versions 8 and 9 into the LSM history (`services/archival/lsm.py`): the rows,
manifests and version file written, layer compaction and cleaning, the crash-safe order, and the
Hudi 1.2 planning rules that differ from version 6. No Spark (the judge compares with Hudi 1.2:
tests/judge/test_lsm_archival.py)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.helpers.timeline_builder_archival import at, commit_metadata, new_table

from pyhudi.codec.avro_schemas import encode_container
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.lsm_timeline import (
    AVRO_SCHEMA_JSON,
    LsmFileEntry,
    decode_lsm_file,
    decode_manifest,
    encode_manifest,
    parse_lsm_file_name,
)
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import ConfigError
from pyhudi.services.archival import execute as archival
from pyhudi.services.archival import lsm
from pyhudi.services.archival.execute import archive
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import read_archived_instants, whole_timeline

CONFIG = ArchivalConfig(
    min_commits_to_keep=2,
    max_commits_to_keep=3,
    cleaner_commits_retained=1,
    timeline_compaction_batch_size=2,
)
#: Manifest bytes as Hudi 1.2 wrote them (a table of the judge's).
HUDI_MANIFEST = (
    b'{\n  "files" : [ {\n    "fileName" : "20261127134617279_20261127134624628_1.parquet",\n'
    b'    "fileLen" : 12483\n  }, {\n    "fileName" : '
    b'"20261127134625627_20261127134627452_0.parquet",\n    "fileLen" : 8399\n  } ]\n}'
)


def v8_table(root: Path, table_type: str = "COPY_ON_WRITE") -> TableContext:
    return new_table(
        root, table_type, **{"hoodie.table.version": "8", "hoodie.timeline.layout.version": "2"}
    )


def t(n: int) -> str:
    return at(n * 10)


def done(n: int) -> str:
    return at(n * 10 + 5)


def add(ctx: TableContext, n: int, action: str = "commit", *, pending_only: bool = False) -> None:
    """Instant `t(n)` of `action`, its files written as Hudi 1.x names them (layout 2); the bytes
    of the completed file and of the plan are `META[n]`, `PLAN[n]`."""
    folder = Path(ctx.active.timeline_path)
    folder.mkdir(parents=True, exist_ok=True)
    time = t(n)
    if action == "clean":
        PLAN[n] = encode_container("HoodieCleanerPlan", CLEAN_PLAN)
        META[n] = encode_container(
            "HoodieCleanMetadata", {**CLEAN_METADATA, "startCleanTime": time}
        )
    else:
        PLAN[n] = f"compaction-plan-{n}".encode() if action == "compaction" else b""
        compacted = action == "compaction"
        META[n] = encode_commit_metadata(commit_metadata(time, compacted=compacted))
    inflight = f"{time}.inflight" if action == "commit" else f"{time}.{action}.inflight"
    (folder / f"{time}.{action}.requested").write_bytes(PLAN[n])
    (folder / inflight).write_bytes(b"" if action == "compaction" else f"inflight-{n}".encode())
    if not pending_only:
        completed_action = "commit" if action == "compaction" else action
        (folder / f"{time}_{done(n)}.{completed_action}").write_bytes(META[n])
    ctx.active.reload()


META: dict[int, bytes] = {}
PLAN: dict[int, bytes] = {}
CLEAN_PLAN = {
    "earliestInstantToRetain": None,
    "lastCompletedCommitTimestamp": "",
    "policy": "KEEP_LATEST_COMMITS",
    "filesToBeDeletedPerPartition": {},
    "version": 2,
    "filePathsToBeDeletedPerPartition": {},
    "partitionsToBeDeleted": [],
}
CLEAN_METADATA = {
    "timeTakenInMillis": 12,
    "totalFilesDeleted": 0,
    "earliestCommitToRetain": "",
    "lastCompletedCommitTimestamp": "",
    "partitionMetadata": {},
    "version": 2,
    "bootstrapPartitionMetadata": {},
}


def history(ctx: TableContext) -> Path:
    return Path(ctx.meta_path) / "timeline" / "history"


def rows(
    ctx: TableContext, name: str
) -> list[tuple[str, str | None, str, bytes | None, bytes | None]]:
    data = (history(ctx) / name).read_bytes()
    return [
        (r.instant_time, r.completion_time, r.action, r.metadata, r.plan)
        for r in decode_lsm_file(data)
    ]


def active_names(ctx: TableContext) -> list[str]:
    return sorted(p.name for p in Path(ctx.active.timeline_path).iterdir() if p.is_file())


# ---- codec -----------------------------------------------------------------------------------


def test_manifest_json_is_byte_for_byte_hudis():
    entries = decode_manifest(HUDI_MANIFEST)
    assert entries[1] == LsmFileEntry("20261127134625627_20261127134627452_0.parquet", 8399)
    assert encode_manifest(entries) == HUDI_MANIFEST
    assert encode_manifest([]) == b'{\n  "files" : [ ]\n}'


def test_history_file_names_carry_min_max_and_layer():
    assert parse_lsm_file_name("1_2_0.parquet") == ("1", "2", 0)
    assert parse_lsm_file_name("1_2_10.parquet") is None  # Hudi's pattern: one digit
    assert parse_lsm_file_name("manifest_1") is None


# ---- what is written -------------------------------------------------------------------------


def test_archival_writes_rows_manifest_and_version_then_deletes_the_active_files(tmp_path):
    ctx = v8_table(tmp_path)
    for n in range(1, 7):
        add(ctx, n, "clean" if n == 3 else "commit")
    result = archive(ctx, CONFIG)

    name = f"{t(1)}_{t(4)}_0.parquet"
    assert Path(result.archive_file or "").name == name
    assert rows(ctx, name) == [
        (t(1), done(1), "commit", META[1], None),
        (t(2), done(2), "commit", META[2], None),
        (t(3), done(3), "clean", META[3], PLAN[3]),
        (t(4), done(4), "commit", META[4], None),
    ]
    assert result.timeline_files == 12
    assert (history(ctx) / "manifest_1").read_bytes() == encode_manifest(
        [LsmFileEntry(name, (history(ctx) / name).stat().st_size)]
    )
    assert (history(ctx) / "_version_").read_bytes() == b"1"
    assert active_names(ctx) == sorted(
        [f"{t(n)}.commit.requested" for n in (5, 6)]
        + [f"{t(n)}.inflight" for n in (5, 6)]
        + [f"{t(n)}_{done(n)}.commit" for n in (5, 6)]
    )
    footer = pq.ParquetFile(history(ctx) / name).metadata.metadata
    assert footer[b"parquet.avro.schema"].decode() == AVRO_SCHEMA_JSON
    assert [i.time for i in read_archived_instants(ctx)] == [t(n) for n in range(1, 5)]


def test_compaction_plan_is_kept_with_the_completed_compaction(tmp_path):
    ctx = v8_table(tmp_path, "MERGE_ON_READ")
    for n in range(1, 8):
        add(ctx, n, "compaction" if n in (2, 4) else "deltacommit")
    config = ArchivalConfig(
        min_commits_to_keep=2, max_commits_to_keep=3, compaction_max_delta_commits=2
    )
    result = archive(ctx, config)
    archived = rows(ctx, Path(result.archive_file or "").name)
    assert (t(2), done(2), "commit", META[2], PLAN[2]) in archived
    assert all(r[4] is None for r in archived if r[2] == "deltacommit")


def test_second_layer_is_compacted_and_old_manifests_cleaned_as_hudi_does(tmp_path):
    ctx = v8_table(tmp_path)
    for n in range(1, 5):
        add(ctx, n)
    archive(ctx, CONFIG)  # t1, t2
    for n in range(5, 7):
        add(ctx, n)
    archive(ctx, CONFIG)  # t3, t4, then [L0, L0] -> L1
    layer1 = f"{t(1)}_{t(4)}_1.parquet"
    assert [e.file_name for e in decode_manifest((history(ctx) / "manifest_3").read_bytes())] == [
        layer1
    ]
    assert [r[0] for r in rows(ctx, layer1)] == [t(n) for n in range(1, 5)]
    for n in range(7, 9):
        add(ctx, n)
    archive(ctx, CONFIG)  # t5, t6: 4 manifests, 3 retained, no compaction
    names = sorted(p.name for p in history(ctx).iterdir())
    assert names == sorted(
        [
            f"{t(1)}_{t(2)}_0.parquet",  # named by the retained manifest_2
            f"{t(3)}_{t(4)}_0.parquet",
            layer1,
            f"{t(5)}_{t(6)}_0.parquet",
            "manifest_2",
            "manifest_3",
            "manifest_4",
            "_version_",
        ]
    )
    assert [i.time for i in whole_timeline(ctx)] == [t(n) for n in range(1, 9)]


# ---- crashes ---------------------------------------------------------------------------------


def test_crash_before_the_manifest_rewrites_the_file_next_time(tmp_path, monkeypatch):
    ctx = v8_table(tmp_path)
    for n in range(1, 6):
        add(ctx, n)

    def crash(self, remove, add):  # type: ignore[no-untyped-def]
        raise OSError("killed")

    monkeypatch.setattr(lsm.LsmHistory, "update_manifest", crash)
    with pytest.raises(OSError):
        archive(ctx, CONFIG)
    assert read_archived_instants(ctx) == []  # the file is written, no manifest names it
    assert len(ctx.active.reload().timeline.commits()) == 5
    monkeypatch.undo()
    result = archive(ctx, CONFIG)
    assert [i.time for i in result.archived] == [t(1), t(2), t(3)]
    assert (history(ctx) / "_version_").read_bytes() == b"1"
    assert [i.time for i in whole_timeline(ctx)] == [t(n) for n in range(1, 6)]


def test_crash_before_deleting_active_files_writes_nothing_twice(tmp_path, monkeypatch):
    ctx = v8_table(tmp_path)
    for n in range(1, 6):
        add(ctx, n)

    def crash(ctx, files):  # type: ignore[no-untyped-def]
        raise OSError("killed")

    monkeypatch.setattr(archival, "_delete_timeline_files", crash)
    with pytest.raises(OSError):
        archive(ctx, CONFIG)
    assert [i.time for i in read_archived_instants(ctx)] == [t(1), t(2), t(3)]
    assert [i.time for i in whole_timeline(ctx)] == [t(n) for n in range(1, 6)]
    monkeypatch.undo()
    archive(ctx, CONFIG)
    assert (history(ctx) / "_version_").read_bytes() == b"1"  # no second manifest
    assert len(ctx.active.reload().timeline.commits()) == 2
    assert [i.time for i in whole_timeline(ctx)] == [t(n) for n in range(1, 6)]


def test_a_lost_version_file_falls_back_to_the_highest_manifest(tmp_path):
    ctx = v8_table(tmp_path)
    for n in range(1, 5):
        add(ctx, n)
    archive(ctx, CONFIG)
    (history(ctx) / "_version_").unlink()  # a crash between its delete and its creation
    for n in range(5, 7):
        add(ctx, n)
    archive(ctx, CONFIG)
    assert (history(ctx) / "_version_").read_bytes() == b"3"
    assert [i.time for i in read_archived_instants(ctx)] == [t(n) for n in range(1, 5)]


# ---- planning (Hudi 1.2 TimelineArchiverV2) --------------------------------------------------


def test_cleans_are_archived_only_before_the_last_archived_commit(tmp_path):
    ctx = v8_table(tmp_path)
    for n in range(1, 6):
        add(ctx, n)
    add(ctx, 6, "clean")  # after every commit archived: stays
    add(ctx, 7)
    result = archive(ctx, CONFIG)
    assert [i.time for i in result.archived] == [t(1), t(2), t(3), t(4)]
    assert f"{t(6)}_{done(6)}.clean" in active_names(ctx)


def test_a_pending_instant_stops_archival_before_it(tmp_path):
    ctx = v8_table(tmp_path)
    for n in range(1, 3):
        add(ctx, n)
    add(ctx, 3, pending_only=True)
    for n in range(4, 7):
        add(ctx, n)
    # (KEEP_LATEST_COMMITS would keep every commit: its earliest commit to retain is t2)
    config = ArchivalConfig(
        min_commits_to_keep=2, max_commits_to_keep=3, cleaner_policy="KEEP_LATEST_FILE_VERSIONS"
    )
    result = archive(ctx, config)
    assert [i.time for i in result.archived] == [t(1)]  # t2 is kept before the pending t3


def test_retained_manifest_versions_must_be_positive():
    with pytest.raises(ConfigError, match=r"hoodie\.timeline\.manifest\.retained\.versions"):
        ArchivalConfig.from_options({"hoodie.timeline.manifest.retained.versions": "0"})
