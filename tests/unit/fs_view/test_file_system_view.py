"""`pyhudi.fs_view.FileSystemView` on the real tables: latest slices, time travel, replaced and pending files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyhudi.codec.avro_schemas import encode_container
from pyhudi.fs_view import FileSystemView, PartitionListing, pending_compaction_operations
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

TRIPS = "mor_avro__v6_trips_8i1u"
SF = "city=san_francisco"
SF_FILE_ID = "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"
SF_BASE = f"{SF_FILE_ID}_0-13-60_20250331030642808.parquet"
SF_LOG = f".{SF_FILE_ID}_20250331030642808.log.1_0-26-85"
FIRST, SECOND = "20250331030642808", "20250331030645735"


def view_of(root: Path) -> FileSystemView:
    return TableContext.open(str(root)).view()


def copy_table(hudi_tables: dict[str, Path], name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(hudi_tables[name], target)
    return target


def slices_summary(slices) -> list[tuple]:
    return sorted(
        (
            s.partition_path,
            s.file_id,
            s.base_file.file_name if s.base_file else None,
            tuple(lf.file_name for lf in s.log_files),
        )
        for s in slices
    )


def hudi_rs_slices(root: Path, as_of: str | None = None) -> list[tuple]:
    hudi = pytest.importorskip("hudi")
    options = hudi.HudiReadOptions()
    if as_of is not None:
        options = options.with_as_of_timestamp(as_of)
    found = hudi.HudiTable(str(root)).get_file_slices(options)
    return sorted(
        (s.partition_path, s.file_id, s.base_file_name, tuple(s.log_file_names)) for s in found
    )


def compaction_plan(
    file_id: str, base_instant: str, base_file: str, logs: list[str], partition: str
) -> bytes:
    operation = {
        "baseInstantTime": base_instant,
        "deltaFilePaths": logs,
        "dataFilePath": base_file,
        "fileId": file_id,
        "partitionPath": partition,
        "metrics": {},
        "bootstrapFilePath": None,
    }
    plan = {
        "operations": [operation],
        "extraMetadata": None,
        "version": 2,
        "strategy": None,
        "preserveHoodieMetadata": None,
    }
    return encode_container("HoodieCompactionPlan", plan)


# ---- the real tables, against hudi-rs -----------------------------------------------------------


def test_latest_file_slices_of_every_real_table_match_hudi(hudi_tables):
    for name, root in sorted(hudi_tables.items()):
        assert slices_summary(view_of(root).latest_file_slices()) == hudi_rs_slices(root), name


def test_time_travel_slices_of_every_real_table_match_hudi_at_every_commit(hudi_tables):
    checked = 0
    for name, root in sorted(hudi_tables.items()):
        ctx = TableContext.open(str(root))
        for instant in ctx.active.timeline.commits():
            ours = slices_summary(ctx.view().latest_file_slices(as_of=instant.time))
            assert ours == hudi_rs_slices(root, instant.time), (name, instant.time)
            checked += 1
    assert checked >= 40


def test_latest_base_files_are_the_base_files_of_the_latest_slices(hudi_tables):
    for name, root in sorted(hudi_tables.items()):
        view = view_of(root)
        from_slices = sorted(
            s.base_file.file_name for s in view.latest_file_slices() if s.base_file
        )
        assert sorted(b.file_name for b in view.latest_base_files()) == from_slices, name


def test_latest_base_files_of_a_cow_table_are_the_newest_per_file_group(hudi_tables):
    names = sorted(
        b.relative_path
        for b in view_of(hudi_tables["cow__v6_simplekeygen_nonhivestyle"]).latest_base_files()
    )
    assert names == [
        "10/97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0_0-119-166_20240418172804498.parquet",
        "20/76e0556b-390d-4249-b7ad-9059e2bc2cbd-0_0-98-141_20240418172802262.parquet",
        "30/6db57019-98ee-480e-8eb1-fb3de48e1c24-0_1-119-167_20240418172804498.parquet",
    ]


def test_time_travel_to_the_first_commit_gives_its_base_files(hudi_tables):
    view = view_of(hudi_tables["cow__v6_simplekeygen_nonhivestyle"])
    names = sorted(b.file_name for b in view.latest_base_files(as_of="20240418172802262"))
    assert names == [
        "76e0556b-390d-4249-b7ad-9059e2bc2cbd-0_0-98-141_20240418172802262.parquet",
        "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0_1-98-142_20240418172802262.parquet",
    ]
    assert view.latest_base_files(as_of="20240418172802261") == []


def test_file_group_keeps_every_committed_slice_newest_first(hudi_tables):
    view = view_of(hudi_tables["cow__v6_nonpartitioned"])
    (group,) = view.file_groups()
    assert [s.base_instant_time for s in group.slices] == ["20240418173551906", "20240418173550988"]
    assert group.latest_slice is group.slices[0]


def test_partition_paths_of_real_tables(hudi_tables):
    assert view_of(hudi_tables["cow__v6_nonpartitioned"]).partition_paths() == [""]
    assert view_of(hudi_tables["cow__v6_empty"]).partition_paths() == []
    assert view_of(hudi_tables["cow__v6_timebasedkeygen_nonhivestyle"]).partition_paths() == [
        "2023/04/01/12",
        "2023/04/02/12",
        "2023/04/03/12",
        "2023/04/04/13",
    ]


def test_listing_skips_hoodie_folder_and_hidden_litter(hudi_tables):
    root = hudi_tables["cow__v6_complexkeygen_hivestyle"]
    listing = PartitionListing.scan(Storage.for_uri(str(root))[0], str(root))
    names = {status.name for files in listing.files.values() for status in files}
    assert ".DS_Store" not in names and not any(
        n.startswith(".hoodie_partition_metadata") for n in names
    )
    assert not any(p.startswith(".hoodie") for p in listing.partition_paths)


@pytest.mark.parametrize(
    "name",
    [
        "cow__v6_simplekeygen_nonhivestyle_overwritetable",
        "mor_parquet__v6_simplekeygen_nonhivestyle_overwritetable",
    ],
)
def test_replaced_file_groups_are_hidden_after_insert_overwrite_table(hudi_tables, name):
    view = view_of(hudi_tables[name])
    replaced = view.replaced_file_groups()
    assert {p for p, _ in replaced} == {"10", "20", "30"}
    latest = view.latest_file_slices()
    assert len(latest) == 1 and latest[0].partition_path == "30"
    assert not {(s.partition_path, s.file_id) for s in latest} & replaced
    everything = view.file_groups(include_replaced=True)
    assert {(g.partition_path, g.file_id) for g in everything} >= replaced


def test_replaced_file_groups_are_visible_before_the_replacecommit(hudi_tables):
    view = view_of(hudi_tables["cow__v6_simplekeygen_nonhivestyle_overwritetable"])
    assert view.replaced_file_groups(as_of="20240707001302376") == set()
    assert len(view.latest_file_slices(as_of="20240707001302376")) == 3


def test_mor_log_files_group_under_the_slice_of_their_base_instant(hudi_tables):
    view = view_of(hudi_tables[TRIPS])
    by_partition = {s.partition_path: s for s in view.latest_file_slices()}
    sf = by_partition[SF]
    assert sf.base_instant_time == FIRST and sf.base_file.file_name == SF_BASE
    assert [lf.file_name for lf in sf.log_files] == [SF_LOG]
    assert sf.has_log_files and not by_partition["city=chennai"].has_log_files


def test_mor_rollback_table_slice_holds_all_log_versions_in_order(hudi_tables):
    (file_slice,) = view_of(
        hudi_tables["mor_parquet__v6_nonpartitioned_rollback"]
    ).latest_file_slices()
    assert [lf.version for lf in file_slice.log_files] == [1, 2, 3]
    assert file_slice.latest_log_version == 3
    assert file_slice.total_size_bytes == file_slice.base_file.size_bytes + sum(
        lf.size_bytes for lf in file_slice.log_files
    )


def test_v8_log_files_join_the_slice_by_completion_time(hudi_tables):
    view = view_of(hudi_tables["mor_avro__v8_trips_8i3u1d"])
    groups = {g.partition_path: g for g in view.file_groups()}
    chennai = groups["city=chennai"]
    assert [s.base_instant_time for s in chennai.slices] == [
        "20251220210129235",
        "20251220210108078",
    ]
    assert chennai.slices[0].log_files == ()
    assert [lf.base_instant_time for lf in chennai.slices[1].log_files] == [
        "20251220210127080",
        "20251220210128625",
    ]


# ---- uncommitted files --------------------------------------------------------------------------


def test_base_file_of_an_inflight_instant_is_invisible(hudi_tables, tmp_path):
    root = copy_table(hudi_tables, "cow__v6_nonpartitioned", tmp_path)
    pending = "20240418173600000"
    (root / ".hoodie" / f"{pending}.commit.requested").write_bytes(b"")
    (root / ".hoodie" / f"{pending}.inflight").write_bytes(b"")
    (root / f"a079bdb3-731c-4894-b855-abfcd6921007-0_0-1-1_{pending}.parquet").write_bytes(b"PAR1")
    (root / f"ffffffff-0000-0000-0000-000000000000-0_0-1-2_{pending}.parquet").write_bytes(b"PAR1")
    view = view_of(root)
    assert slices_summary(view.latest_file_slices()) == hudi_rs_slices(
        hudi_tables["cow__v6_nonpartitioned"]
    )
    assert all(s.base_instant_time != pending for g in view.file_groups() for s in g.slices)


def test_base_file_of_an_inflight_instant_older_than_every_commit_stays_invisible(
    hudi_tables, tmp_path
):
    root = copy_table(hudi_tables, "cow__v6_nonpartitioned", tmp_path)
    pending = "20240418170000000"  # before the first commit, but still on the active timeline
    (root / ".hoodie" / f"{pending}.inflight").write_bytes(b"")
    (root / f"ffffffff-0000-0000-0000-000000000000-0_0-1-2_{pending}.parquet").write_bytes(b"PAR1")
    assert [s.file_id for s in view_of(root).latest_file_slices()] == [
        "a079bdb3-731c-4894-b855-abfcd6921007-0"
    ]


def test_base_file_of_an_unknown_later_instant_is_invisible(hudi_tables, tmp_path):
    root = copy_table(hudi_tables, "cow__v6_nonpartitioned", tmp_path)
    (root / "ffffffff-0000-0000-0000-000000000000-0_0-1-2_20991231000000000.parquet").write_bytes(
        b"PAR1"
    )
    assert len(view_of(root).latest_file_slices()) == 1


def test_base_file_older_than_the_active_timeline_counts_as_archived_and_committed(
    hudi_tables, tmp_path
):
    root = copy_table(hudi_tables, "cow__v6_nonpartitioned", tmp_path)
    archived = "20240101000000000"
    (root / f"eeeeeeee-0000-0000-0000-000000000000-0_0-1-2_{archived}.parquet").write_bytes(b"PAR1")
    file_ids = sorted(s.file_id for s in view_of(root).latest_file_slices())
    assert file_ids == [
        "a079bdb3-731c-4894-b855-abfcd6921007-0",
        "eeeeeeee-0000-0000-0000-000000000000-0",
    ]


def test_log_only_file_group_of_an_inflight_deltacommit_is_invisible(hudi_tables, tmp_path):
    root = copy_table(hudi_tables, TRIPS, tmp_path)
    pending = "20250331030700000"
    (root / ".hoodie" / f"{pending}.deltacommit.requested").write_bytes(b"")
    (root / ".hoodie" / f"{pending}.deltacommit.inflight").write_bytes(b"")
    (root / SF / f".abcdabcd-0000-0000-0000-000000000000-0_{pending}.log.1_0-1-2").write_bytes(
        b"#HUDI#"
    )
    assert slices_summary(view_of(root).latest_file_slices()) == hudi_rs_slices(hudi_tables[TRIPS])


# ---- pending compaction -------------------------------------------------------------------------


def schedule_sf_compaction(root: Path, time: str) -> None:
    plan = compaction_plan(SF_FILE_ID, FIRST, SF_BASE, [SF_LOG], SF)
    (root / ".hoodie" / f"{time}.compaction.requested").write_bytes(plan)


def test_pending_compaction_plan_opens_a_new_empty_slice(hudi_tables, tmp_path):
    root = copy_table(hudi_tables, TRIPS, tmp_path)
    compaction = "20250331030650000"
    schedule_sf_compaction(root, compaction)
    ctx = TableContext.open(str(root))
    assert pending_compaction_operations(ctx.active) == {(SF, SF_FILE_ID): compaction}
    view = ctx.view()
    sf = next(s for s in view.latest_file_slices() if s.partition_path == SF)
    assert (sf.base_instant_time, sf.base_file, sf.log_files) == (compaction, None, ())
    (group,) = [g for g in view.file_groups() if g.partition_path == SF]
    assert [s.base_instant_time for s in group.slices] == [compaction, FIRST]
    others = [s for s in view.latest_file_slices() if s.partition_path != SF]
    assert all(s.base_instant_time == FIRST for s in others)


def test_logs_written_after_compaction_is_scheduled_join_the_new_slice(hudi_tables, tmp_path):
    root = copy_table(hudi_tables, TRIPS, tmp_path)
    compaction = "20250331030650000"
    schedule_sf_compaction(root, compaction)
    new_log = f".{SF_FILE_ID}_{compaction}.log.1_0-30-99"
    (root / SF / new_log).write_bytes(b"#HUDI#")
    (root / SF / f"{SF_FILE_ID}_0-40-1_{compaction}.parquet").write_bytes(
        b"PAR1"
    )  # compaction output, pending
    view = view_of(root)
    sf = next(s for s in view.latest_file_slices() if s.partition_path == SF)
    assert (sf.base_instant_time, sf.base_file, [lf.file_name for lf in sf.log_files]) == (
        compaction,
        None,
        [new_log],
    )
    merged = next(s for s in view.latest_merged_file_slices() if s.partition_path == SF)
    assert merged.base_file.file_name == SF_BASE
    assert [lf.file_name for lf in merged.log_files] == [SF_LOG, new_log]
    assert SF_BASE in [b.file_name for b in view.latest_base_files()]


def test_merged_slices_equal_latest_slices_without_pending_compaction(hudi_tables):
    for name in (TRIPS, "mor_parquet__v6_nonpartitioned_rollback", "cow__v6_nonpartitioned"):
        view = view_of(hudi_tables[name])
        assert view.latest_merged_file_slices() == view.latest_file_slices(), name


def test_completed_compaction_of_the_v8_table_is_not_pending(hudi_tables):
    ctx = TableContext.open(str(hudi_tables["mor_avro__v8_trips_8i3u1d"]))
    assert not ctx.active.timeline.pending_compactions()
    assert pending_compaction_operations(ctx.active) == {}
