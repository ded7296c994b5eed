"""The metadata table's own services (`run_metadata_table_services`, Hudi 0.14
`performTableServices`) after every deltacommit of a hand-built v6 metadata table: compactions at
`<t>001` every 10 deltacommits, cleans at `<t>002` that keep what readers need, archival of the
metadata table bounded by the data table's active timeline, and the data table's archival bounded
by the metadata table's latest compaction. The listing always equals storage."""

from __future__ import annotations

import os

import pytest
from tests.helpers.mdt_builder import INIT, MdtBuilder, disk_files

from pyhudi.config.archival import ArchivalConfig
from pyhudi.metadata import MetadataTable, validate
from pyhudi.model.instant import Action
from pyhudi.services.archival.execute import archive
from pyhudi.services.metadata_table import run_metadata_table_services
from pyhudi.table.context import TableContext
from pyhudi.timeline.archived import read_archived_instants

TIMES = [f"20240418{19 + i // 60:02d}{i % 60:02d}00000" for i in range(1, 60)]
OPTIONS = {"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "8"}


@pytest.fixture
def built(hudi_tables, tmp_path) -> MdtBuilder:
    return MdtBuilder(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], tmp_path / "t")


def _run(builder: MdtBuilder, count: int, start: int = 0) -> list:
    results = []
    for i in range(start, start + count):
        builder.commit(TIMES[i], ("10", "30")[i % 2])
        results.append(run_metadata_table_services(builder.data(), OPTIONS))
    return results


def _listing_equals_storage(builder: MdtBuilder) -> None:
    data = builder.data()
    completed = set(data.active.timeline.completed().times())
    archived = {i.time for i in read_archived_instants(data)}
    assert MetadataTable.open(data).all_files() == disk_files(builder.root, completed | archived)
    report = validate(data)
    assert report.ok, [str(d) for d in report.differences]


def test_metadata_services_compact_every_ten_deltacommits_and_clean_old_slices(built):
    results = _run(built, 40)
    compactions = [(i, r.compaction.time) for i, r in enumerate(results) if r.compaction]
    assert compactions == [
        (8, TIMES[8] + "001"),
        (18, TIMES[18] + "001"),
        (28, TIMES[28] + "001"),
        (38, TIMES[38] + "001"),
    ]
    cleans = [r.clean.instant_time for r in results if r.clean]
    assert cleans and all(t.endswith("002") and t[:17] in TIMES for t in cleans)
    names = os.listdir(built.mdt_root / "files")
    assert f"files-0000-0_0-0-0_{INIT}.hfile" not in names  # the first slice was cleaned
    assert not any(n.startswith(f".files-0000-0_{INIT}") for n in names)
    assert f"files-0000-0_0-0-0_{TIMES[38]}001.hfile" in names
    _listing_equals_storage(built)


def test_metadata_clean_waits_three_instants_after_a_compaction(built):
    results = _run(built, 12)
    assert results[8].compaction is not None
    assert all(r.clean is None for r in results[8:11])


def test_metadata_archival_stays_behind_the_data_tables_active_timeline(built):
    _run(built, 40)
    data = built.data()
    first_mdt_compaction = TIMES[38] + "001"
    result = archive(data, ArchivalConfig.from_options(OPTIONS))
    assert result.archived and all(i.time < first_mdt_compaction for i in result.archived)
    _run(built, 1, start=40)
    data, mdt = built.data(), built.mdt()
    first_data = data.active.timeline.with_actions(Action.COMMIT).first
    archived = read_archived_instants(mdt)
    assert archived and all(i.time < first_data.time for i in archived)
    _listing_equals_storage(built)


def test_metadata_services_do_nothing_without_a_metadata_table(hudi_tables, tmp_path):
    ctx = TableContext.open(str(hudi_tables["cow__v6_simplekeygen_nonhivestyle"]))
    before = sorted(os.listdir(ctx.meta_path))
    result = run_metadata_table_services(ctx, OPTIONS)
    assert result.clean is None and result.compaction is None and result.archive is None
    assert sorted(os.listdir(ctx.meta_path)) == before


def test_reads_as_of_an_instant_after_compactions_and_cleans(built):
    _run(built, 40)
    data = built.data()
    before_fixture = {t for t in data.active.timeline.completed().times() if t < TIMES[0]}
    for as_of in (TIMES[37], TIMES[38], TIMES[39]):
        upto = before_fixture | {t for t in TIMES if t <= as_of}
        assert MetadataTable.open(data, as_of=as_of).all_files() == disk_files(built.root, upto)
        report = validate(data, as_of=as_of)
        assert report.ok, (as_of, [str(d) for d in report.differences])
