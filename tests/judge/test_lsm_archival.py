"""pyhudi's archival of table versions 8 and 9 (the LSM history) against Hudi 1.2's own archiver.

Hudi 1.2 writes a table with its archival off; a copy is archived by Hudi's `TimelineArchiverV2`
(run in the judge's JVM with the same options) and the table itself by pyhudi: the history files
(names, manifests, `_version_`, parquet rows, schema, footer, codec) and the active timeline left
must be the same, apart from parquet file lengths (parquet-mr's pages are not pyarrow's). A second
archival compacts two layer-0 files into layer 1 and cleans, compared the same way. Then Hudi reads
the table (its commits, its archived commits, time travel to and an incremental query from an
archived instant), continues writing with its own archival on, and pyhudi reads what Hudi archived.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.codec.lsm_timeline import (
    LsmFileEntry,
    decode_lsm_file,
    decode_manifest,
    encode_manifest,
)
from pyhudi.config.archival import ArchivalConfig
from pyhudi.services.archival.execute import archive
from pyhudi.table.context import TableContext
from pyhudi.table.metadata_table import open_metadata_table
from tests.helpers.fixtures import unzip_table
from tests.judge.compare import HUDI_READ, assert_same_read, hudi_frame
from tests.judge.tables import base_options

#: Hudi's `TimelineArchiverV2` on the table at `path`, configured by `options` only.
HUDI_ARCHIVES = """
jvm = spark._jvm
props = jvm.java.util.Properties()
for key, value in options.items():
    props.setProperty(key, value)
config = (
    jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder()
    .withPath(path).withProperties(props).build()
)
context = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(spark._jsc)
table = jvm.org.apache.hudi.table.HoodieSparkTable.create(config, context)
layout = table.getMetaClient().getTimelineLayoutVersion()
archiver = jvm.org.apache.hudi.client.timeline.TimelineArchivers.getInstance(layout, config, table)
result = archiver.archiveIfRequired(context, True)
"""
BEGIN = "hoodie.datasource.read.begin.instanttime"
#: `show_archived_commits` lists the archived commits requested in this range.
TIME_RANGE = {"start_ts": "0", "end_ts": "99999999999999999"}
ARCHIVE = {
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
    "hoodie.timeline.compaction.batch.size": "2",
    "hoodie.clean.commits.retained": "1",
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.embed.timeline.server": "false",
}


def _rows(keys: range, ts: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"k{i}" for i in keys],
            "part": ["a" if i % 2 else "b" for i in keys],
            "ts": [ts] * len(keys),
            "v": [f"v{ts}-{i}" for i in keys],
        }
    )


def _options(name: str, table_type: str, **extra: str) -> dict[str, str]:
    upsert = {"hoodie.datasource.write.operation": "upsert", "hoodie.archive.automatic": "false"}
    return base_options(name, table_type, **{**upsert, **extra})


def _names(folder: Path) -> list[str]:
    """A folder's files, without Hadoop's local checksum files."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and not p.name.endswith(".crc"))


def _archive_both(hudi: Any, path: Path, *runs: dict[str, str]) -> tuple[Path, list[str]]:
    """Hudi archives a copy of the table, pyhudi the table, once per options of `runs`; returns
    the copy and pyhudi's results."""
    copy = path.with_name(path.name + "-hudi")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    results = []
    for options in runs:
        hudi.run(HUDI_ARCHIVES, path=str(copy), options=options)
        results.append(str(pyhudi.HudiTable(str(path)).archive(options)))
    return copy, results


def _assert_same_history(ours: Path, theirs: Path) -> None:
    """The same active timeline and LSM history; see the module docstring."""
    assert _names(ours / ".hoodie/timeline") == _names(theirs / ".hoodie/timeline")
    history, hudi_history = ours / ".hoodie/timeline/history", theirs / ".hoodie/timeline/history"
    names = _names(history)
    assert names == _names(hudi_history)
    assert any(n.endswith(".parquet") for n in names)
    for name in names:
        mine, hudis = (history / name).read_bytes(), (hudi_history / name).read_bytes()
        if name.startswith("manifest_"):
            expected = [
                LsmFileEntry(e.file_name, (history / e.file_name).stat().st_size)
                for e in decode_manifest(hudis)
            ]
            assert encode_manifest(decode_manifest(hudis)) == hudis, "Hudi's JSON shape"
            assert mine == encode_manifest(expected), name
        elif name.endswith(".parquet"):
            assert decode_lsm_file(mine) == decode_lsm_file(hudis), name
            ours_file, hudi_file = (
                pq.ParquetFile(history / name),
                pq.ParquetFile(hudi_history / name),
            )
            assert ours_file.schema_arrow == hudi_file.schema_arrow
            assert ours_file.metadata.metadata == hudi_file.metadata.metadata
            codecs = {ours_file.metadata.row_group(0).column(i).compression for i in range(6)}
            assert codecs == {"GZIP"}
        else:
            assert mine == hudis, name


def _archived_commits(path: str) -> list[str]:
    table = pyhudi.HudiTable(path)
    return [
        i.time for i in table.archived_timeline() if i.action.value in ("commit", "deltacommit")
    ]


def test_pyhudi_archives_a_v9_merge_on_read_table_as_hudi_1_2(spark, hudi_1_2, tmp_path):  # type: ignore[no-untyped-def]
    """MOR with Hudi's metadata table (its compaction bounds archival) and inline compaction plans,
    no cleaning (time travel to archived instants); Hudi reads pyhudi's history, then archives on
    top of it, compacting pyhudi's layer-0 file with its own into layer 1."""
    path = tmp_path / "mor9"
    options = _options(
        "mor9",
        "MERGE_ON_READ",
        **{"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"},
        **{"hoodie.clean.automatic": "false", "hoodie.metadata.compact.max.delta.commits": "3"},
    )
    for ts in range(3):  # deltacommit, deltacommit + compaction, deltacommit
        hudi_1_2.write(str(path), _rows(range(4), ts), options)
    copy, results = _archive_both(hudi_1_2, path, ARCHIVE)
    assert "archived" in results[0], results
    _assert_same_history(path, copy)
    first_archived = _archived_commits(str(path))
    assert len(first_archived) >= 2

    # Hudi reads the timeline pyhudi archived: its archived commits are pyhudi's, with their stats.
    hudi_1_2.sql(f"CREATE TABLE mor9 USING hudi LOCATION '{path}'")
    theirs = hudi_1_2.call("show_archived_commits", table="mor9", limit=100, **TIME_RANGE)
    archived = _archived_commits(str(path))
    assert sorted({r["commit_time"] for r in theirs}) == archived
    active = hudi_1_2.call("show_commits", table="mor9", limit=100)
    ours_active = [i.time for i in pyhudi.HudiTable(str(path)).commits()]
    assert sorted(r["commit_time"] for r in active) == ours_active

    travel = {"as.of.instant": first_archived[-1]}
    their_read = hudi_frame(spark, hudi_1_2.read(str(path), {**HUDI_READ, **travel}))
    assert_same_read(pyhudi.read(spark, str(path), travel), their_read, "time travel, archived")
    # Hudi's incremental query from an archived instant reads the archived commits' metadata:
    # its rows are the snapshot's rows of the commits completed after the begin time.
    begin = first_archived[0]
    incremental = {"hoodie.datasource.query.type": "incremental", **{BEGIN: begin}}
    their_read = hudi_frame(spark, hudi_1_2.read(str(path), {**HUDI_READ, **incremental}))
    table = pyhudi.HudiTable(str(path))
    window = [
        i.time
        for i in [*table.archived_timeline(), *table.commits()]
        if (i.completion_time or i.time) > begin
    ]
    expected = pyhudi.read(spark, str(path)).where(F.col("_hoodie_commit_time").isin(window))
    assert expected.count() > 0
    assert_same_read(expected, their_read, "Hudi's incremental query from an archived instant")

    # Hudi archives (and compacts) on top of pyhudi's history; pyhudi reads all of it.
    continued = {**options, **ARCHIVE, "hoodie.archive.automatic": "true"}
    for ts in range(3, 5):
        hudi_1_2.write(str(path), _rows(range(4), ts), continued)
    theirs = hudi_1_2.call("show_archived_commits", table="mor9", limit=100, **TIME_RANGE)
    now_archived = _archived_commits(str(path))
    assert sorted({r["commit_time"] for r in theirs}) == now_archived
    assert len(now_archived) > len(archived)
    assert any(n.endswith("_1.parquet") for n in _names(path / ".hoodie/timeline/history"))


def test_pyhudi_archives_a_v8_copy_on_write_table_as_hudi_1_2(spark, hudi_1_2, tmp_path):  # type: ignore[no-untyped-def]
    """Table version 8, COW, no metadata table, Hudi's cleaner on: cleans (with their plans)
    archived with the commits before the last one archived; Hudi then reads the table."""
    path = tmp_path / "cow8"
    options = _options(
        "cow8",
        "COPY_ON_WRITE",
        **{"hoodie.write.table.version": "8", "hoodie.metadata.enable": "false"},
        **{"hoodie.clean.commits.retained": "1"},
    )
    for ts in range(6):
        hudi_1_2.write(str(path), _rows(range(4), ts), options)
    assert "hoodie.table.version=8" in (path / ".hoodie/hoodie.properties").read_text()
    no_mdt = {**ARCHIVE, "hoodie.metadata.enable": "false"}
    copy, results = _archive_both(hudi_1_2, path, no_mdt)
    assert "archived" in results[0], results
    _assert_same_history(path, copy)
    archived = pyhudi.HudiTable(str(path)).archived_timeline()
    assert {i.action.value for i in archived} == {"commit", "clean"}

    hudi_1_2.sql(f"CREATE TABLE cow8 USING hudi LOCATION '{path}'")
    theirs = hudi_1_2.call("show_archived_commits", table="cow8", limit=100, **TIME_RANGE)
    assert sorted({r["commit_time"] for r in theirs}) == _archived_commits(str(path))
    their_read = hudi_frame(spark, hudi_1_2.read(str(path), HUDI_READ))
    assert_same_read(pyhudi.read(spark, str(path)), their_read, "snapshot after archival")


@pytest.mark.parametrize(
    ("fixture", "first_min"),
    [
        ("cow__v9_txns_simple_meta", 8),
        ("mor_avro__v9_txns_simple_meta", 8),
        ("mor_avro__v8_trips_8i3u1d", 4),
    ],
)
def test_pyhudi_archives_hudi_written_tables_as_hudi_1_2(hudi_1_2, tmp_path, fixture, first_min):  # type: ignore[no-untyped-def]
    """Real Hudi 1.x tables (tests/data/hudi-tables) with clustering, insert overwrite, indexing
    and compaction instants and a metadata table: two archivals, the second one's layer-0 file
    compacted with the first one's into layer 1, pyhudi's and Hudi's alike; then the metadata
    table's own timeline (bounded by the data table's first active commit), alike too."""
    path = unzip_table(fixture, tmp_path)
    keep = {
        "hoodie.keep.min.commits": str(first_min),
        "hoodie.keep.max.commits": str(first_min + 1),
    }
    first = {**ARCHIVE, **keep}
    options = {**ARCHIVE, "hoodie.compact.inline.max.delta.commits": "1"}
    copy, results = _archive_both(hudi_1_2, path, first, options)
    assert all("archived" in r for r in results), results
    _assert_same_history(path, copy)
    assert any(n.endswith("_1.parquet") for n in _names(path / ".hoodie/timeline/history"))

    mdt_options = {**options, "hoodie.compact.inline.max.delta.commits": "10"}
    hudi_1_2.run(HUDI_ARCHIVES, path=str(copy / ".hoodie/metadata"), options=mdt_options)
    mdt = open_metadata_table(TableContext.open(str(path)))
    assert mdt is not None
    result = archive(mdt, ArchivalConfig.from_options(mdt_options))
    assert result.archived, result
    _assert_same_history(path / ".hoodie/metadata", copy / ".hoodie/metadata")
