"""`pyhudi.services.clean.execute`: scheduling, executing and running cleans on disk (reference §7.5)."""

from __future__ import annotations

import io
import shutil
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import fastavro
import pytest
from tests.helpers.fixtures import unzip_table
from tests.helpers.timeline_builder import Base, Log, TimelineBuilder

from pyhudi.codec.avro_schemas import encode_container, schema
from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.config.clean import CleanConfig, CleaningPolicy, FailedWritesPolicy
from pyhudi.model.commit import CommitMetadata
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.services.clean.execute import execute_clean, run_clean, schedule_clean
from pyhudi.services.clean.plan import earliest_instant_to_retain
from pyhudi.table.context import TableContext

P1, P2 = "p=1", "p=2"
COMMITS = CleaningPolicy.KEEP_LATEST_COMMITS
VERSIONS = CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
HOURS = CleaningPolicy.KEEP_LATEST_BY_HOURS


def read_avro(path: Path, record: str) -> dict:
    """Decode with Hudi's own schema as the reader schema (what a Java reader does)."""
    (value,) = list(fastavro.reader(io.BytesIO(path.read_bytes()), reader_schema=schema(record)))
    return value


def timeline_file(tb: TimelineBuilder, name: str) -> Path:
    return Path(tb.ctx.meta_path) / name


def visible_files(tb: TimelineBuilder, as_of: str | None) -> set[str]:
    """Relative paths of every file a snapshot query as of `as_of` reads."""
    view = tb.ctx.view()
    files = set()
    for file_slice in view.latest_merged_file_slices(as_of):
        if file_slice.base_file is not None:
            files.add(file_slice.base_file.relative_path)
        files.update(lf.relative_path for lf in file_slice.log_files)
    return files


# ---- layouts ---------------------------------------------------------------------------------------


def cow_layout(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P1, "b-0"), Base(P2, "c-0"))
    for i in range(5):
        tb.write(Base(P1, "a-0"), *([Base(P2, "c-0")] if i % 2 else []))


def mor_layout(tb: TimelineBuilder) -> None:
    tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    for _ in range(2):
        tb.write(Log(P1, "a-0"), Log(P2, "c-0"))
        tb.write(Log(P1, "a-0"))
        tb.compaction((P1, "a-0"), (P2, "c-0"))
    tb.write(Log(P1, "a-0"), Log(P1, "d-0"))  # d-0: a log-only file group


HOURLY = [f"2024010100{m:02d}00000" for m in range(0, 60, 5)]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(
    "config",
    [
        CleanConfig(commits_retained=2),
        CleanConfig(policy=VERSIONS, file_versions_retained=2),
        CleanConfig(policy=HOURS, hours_retained=1),
    ],
    ids=["commits", "versions", "hours"],
)
def test_queries_as_of_every_retained_instant_still_find_their_files(tmp_path, table_type, config):
    tb = TimelineBuilder.create(tmp_path, table_type)
    if config.policy is HOURS:
        tb.times = iter(HOURLY)  # five minutes apart, from midnight
        now = datetime(2024, 1, 1, 1, 22, tzinfo=timezone.utc)
    else:
        now = None
    (mor_layout if table_type == "MERGE_ON_READ" else cow_layout)(tb)
    timeline = tb.ctx.active.timeline
    earliest = earliest_instant_to_retain(timeline, config, now=now)
    retained = [i.time for i in timeline.commits() if earliest is None or i.time >= earliest.time]
    if config.policy is VERSIONS:
        retained = retained[-1:]
    needed = {t: visible_files(tb, t) for t in retained}
    before = tb.data_files()

    result = run_clean(tb.ctx, config, now=now)

    assert result is not None and result.files_deleted > 0
    after = tb.data_files()
    assert after == before - set(result.deleted_files)
    for instant_time, files in needed.items():
        assert files <= after, f"a query as of {instant_time} lost files"
        assert visible_files(tb, instant_time) == files


# ---- the timeline files ----------------------------------------------------------------------------


def test_clean_writes_requested_inflight_and_completed_files_hudi_can_decode(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    for _ in range(2):
        tb.write(Base(P1, "a-0"))
    instant = schedule_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert instant is not None and instant.state is State.REQUESTED
    started = time.monotonic()
    result = execute_clean(tb.ctx, instant)
    elapsed_ms = (time.monotonic() - started) * 1000

    requested = timeline_file(tb, f"{instant.time}.clean.requested")
    inflight = timeline_file(tb, f"{instant.time}.clean.inflight")
    assert requested.read_bytes() == inflight.read_bytes()
    plan = read_avro(requested, "HoodieCleanerPlan")
    (deleted,) = tb.slice_files(P1, "a-0", t1)
    assert plan["filePathsToBeDeletedPerPartition"] == {
        P1: [{"filePath": tb.ctx.storage.uri(tb.ctx.path(deleted)), "isBootstrapBaseFile": False}]
    }
    metadata = read_avro(timeline_file(tb, f"{instant.time}.clean"), "HoodieCleanMetadata")
    last = tb.ctx.active.timeline.commits().last
    assert metadata["startCleanTime"] == instant.time
    assert metadata["totalFilesDeleted"] == 1
    assert metadata["earliestCommitToRetain"] == plan["earliestInstantToRetain"]["timestamp"]
    assert metadata["lastCompletedCommitTimestamp"] == last.time
    assert metadata["version"] == 2
    taken = metadata["timeTakenInMillis"]
    assert isinstance(taken, int) and 0 <= taken <= elapsed_ms  # milliseconds of this clean
    assert metadata["bootstrapPartitionMetadata"] == {}
    name = deleted.split("/")[1]
    assert metadata["partitionMetadata"] == {
        P1: {
            "partitionPath": P1,
            "policy": "KEEP_LATEST_COMMITS",
            "deletePathPatterns": [name],
            "successDeleteFiles": [name],
            "failedDeleteFiles": [],
            "isPartitionDeleted": False,
        }
    }
    assert result.deleted_files == (deleted,)
    assert not Path(tb.ctx.path(deleted)).exists()
    assert "1 files deleted in 1 partitions" in str(result)


def test_delete_partition_clean_removes_the_partition_folder(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base(P1, "a-0"), Base(P2, "b-0"))
    tb.write(
        action=Action.REPLACE_COMMIT,
        operation=WriteOperationType.DELETE_PARTITION,
        replaced={P2: ["b-0"]},
    )
    tb.write(Base(P1, "a-0"))
    result = run_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert result is not None and result.deleted_partitions == (P2,)
    assert not Path(tb.ctx.partition_path(P2)).exists()
    assert Path(tb.ctx.partition_path(P1)).exists()
    metadata = read_avro(timeline_file(tb, f"{result.instant_time}.clean"), "HoodieCleanMetadata")
    assert metadata["partitionMetadata"][P2]["isPartitionDeleted"] is True


def test_nothing_newer_than_a_pending_write_is_touched(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    for _ in range(3):
        tb.write(Base(P1, "a-0"))
    pending = tb.write(Base(P1, "b-0"), complete=False)
    for _ in range(3):
        tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    newer = {f for f in tb.data_files() if f.rsplit("_", 1)[1][:17] >= pending}
    for config in (
        CleanConfig(commits_retained=1),
        CleanConfig(policy=VERSIONS, file_versions_retained=1),
    ):
        run_clean(tb.ctx, config)
        assert newer <= tb.data_files()
    assert tb.instant(pending).state is State.INFLIGHT


# ---- crashes and re-runs ---------------------------------------------------------------------------


def test_run_clean_completes_a_clean_left_requested(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1, *_ = [tb.write(Base(P1, "a-0")) for _ in range(4)]
    instant = schedule_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert instant is not None
    result = run_clean(TableContext.open(tb.ctx.uri), CleanConfig(commits_retained=1))
    assert result is not None and result.instant_time == instant.time
    assert timeline_file(tb, f"{instant.time}.clean").exists()
    assert not set(tb.slice_files(P1, "a-0", t1)) & tb.data_files()


def test_run_clean_completes_an_inflight_clean_whose_files_are_partly_gone(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    t2 = tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    for _ in range(2):
        tb.write(Base(P1, "a-0"), Base(P2, "c-0"))
    instant = schedule_clean(tb.ctx, CleanConfig(commits_retained=1))
    assert instant is not None
    tb.ctx.active.transition_to_inflight(instant, tb.ctx.active.read_content(instant))
    (gone,) = tb.slice_files(P1, "a-0", t1)  # the crashed run deleted this one already
    Path(tb.ctx.path(gone)).unlink()

    result = run_clean(TableContext.open(tb.ctx.uri), CleanConfig(commits_retained=1))

    assert result is not None and result.instant_time == instant.time
    assert result.failed_files == (gone,), "as in Hudi: listed as failed, the clean still completes"
    expected = {*tb.slice_files(P1, "a-0", t2), *tb.slice_files(P2, "c-0", t1)}
    expected |= set(tb.slice_files(P2, "c-0", t2))
    assert set(result.deleted_files) == expected
    assert not expected & tb.data_files()
    assert execute_clean(tb.ctx, instant) == result, "a completed clean only reports"


# ---- trigger and failed writes ---------------------------------------------------------------------


def test_max_commits_trigger_counts_commits_since_the_last_clean(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    config = CleanConfig(commits_retained=1, max_commits=3)
    for _ in range(4):
        tb.write(Base(P1, "a-0"))
    assert run_clean(tb.ctx, config) is not None
    for _ in range(2):
        tb.write(Base(P1, "a-0"))
    assert run_clean(tb.ctx, config) is None, "two commits since the last clean"
    tb.write(Base(P1, "a-0"))
    assert run_clean(tb.ctx, config) is not None


def test_lazy_policy_rolls_back_writes_whose_heartbeat_expired_and_no_other(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    tb.write(Base(P1, "a-0"))
    silent = tb.write(Base(P1, "s-0"), complete=False)  # no heartbeat file at all
    expired = tb.write(Base(P1, "e-0"), complete=False)
    alive = tb.write(Base(P1, "f-0"), complete=False)
    tb.heartbeat(expired, age_seconds=121)
    fresh = tb.heartbeat(alive, age_seconds=5)

    assert run_clean(tb.ctx, CleanConfig(failed_writes_policy=FailedWritesPolicy.EAGER)) is None
    assert {tb.instant(t).state for t in (silent, expired, alive)} == {State.INFLIGHT}

    run_clean(tb.ctx, CleanConfig(failed_writes_policy=FailedWritesPolicy.LAZY))

    timeline = tb.ctx.active.timeline
    assert timeline.find(silent) is None and timeline.find(expired) is None
    assert tb.instant(alive).state is State.INFLIGHT
    assert len(timeline.completed().with_actions(Action.ROLLBACK)) == 2
    files = tb.data_files()
    assert not any(f.startswith((f"{P1}/s-0", f"{P1}/e-0")) for f in files)
    assert any(f.startswith(f"{P1}/f-0") for f in files)
    assert fresh.exists()
    assert not (Path(tb.ctx.meta_path) / ".heartbeat" / expired).exists()


def test_lazy_policy_heartbeat_age_is_measured_from_now(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    alive = tb.write(Base(P1, "f-0"), complete=False)
    tb.heartbeat(alive, age_seconds=5)
    later = datetime.now(timezone.utc) + timedelta(minutes=3)
    config = CleanConfig(failed_writes_policy=FailedWritesPolicy.LAZY)
    run_clean(tb.ctx, config, now=later)
    assert tb.ctx.active.timeline.find(alive) is None


# ---- a real Hudi table -----------------------------------------------------------------------------

OVERWRITE_TABLE = "cow__v6_simplekeygen_nonhivestyle_overwritetable"
REPLACED = {
    "10/4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0_0-95-135_20240707001302376.parquet",
    "10/4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0_1-74-111_20240707001301554.parquet",
    "20/88163884-fef0-4aab-865d-c72327a8a1d5-0_0-74-110_20240707001301554.parquet",
    "30/d398fae1-c0e6-4098-8124-f55f7098bdba-0_1-95-136_20240707001302376.parquet",
}


@pytest.fixture
def overwrite_table(tmp_path) -> Path:
    inner = unzip_table(OVERWRITE_TABLE, tmp_path / "unzipped")
    target = tmp_path / inner.name
    shutil.copytree(inner, target)
    return target


def hudi_rows(path: Path) -> list[dict]:
    hudi = pytest.importorskip("hudi")
    import pyarrow as pa

    batches = hudi.HudiTable(str(path)).read(hudi.HudiReadOptions())
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    return sorted(rows, key=lambda r: r["id"])


def data_files(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*.parquet")
        if ".hoodie" not in p.relative_to(root).parts
    }


def add_empty_commit(ctx: TableContext) -> None:
    """A commit that writes nothing (keeps the table schema for readers that look it up)."""
    last = ctx.active.timeline.commits().last
    schema_json = ctx.active.commit_metadata(last).extra_metadata["schema"]
    requested = ctx.active.create_requested(ctx.new_instant_time(), Action.COMMIT)
    inflight = ctx.active.transition_to_inflight(requested)
    metadata = CommitMetadata(
        operation_type=WriteOperationType.UPSERT, extra_metadata={"schema": schema_json}
    )
    ctx.active.complete(inflight, encode_commit_metadata(metadata))


def test_real_overwrite_table_commits_policy_removes_replaced_groups_once_a_commit_follows(
    overwrite_table,
):
    rows = hudi_rows(overwrite_table)
    ctx = TableContext.open(str(overwrite_table))
    config = CleanConfig(commits_retained=1)
    assert run_clean(ctx, config) is None, "the replacecommit itself is the earliest retained"
    add_empty_commit(ctx)

    result = run_clean(ctx, config)

    assert result is not None
    assert set(result.deleted_files) == REPLACED
    assert set(result.deleted_partitions) == {"10", "20"}
    assert data_files(overwrite_table) == {
        "30/ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet"
    }
    assert hudi_rows(overwrite_table) == rows


def test_real_overwrite_table_file_versions_policy_removes_replaced_groups_at_once(
    overwrite_table,
):
    rows = hudi_rows(overwrite_table)
    ctx = TableContext.open(str(overwrite_table))
    result = run_clean(ctx, CleanConfig(policy=VERSIONS))
    assert result is not None and set(result.deleted_files) == REPLACED
    assert hudi_rows(overwrite_table) == rows
    clean = Instant(result.instant_time, Action.CLEAN, State.COMPLETED)
    metadata = read_avro(Path(ctx.active.instant_path(clean)), "HoodieCleanMetadata")
    assert metadata["earliestCommitToRetain"] == ""
    assert metadata["totalFilesDeleted"] == 4


def test_a_clean_requested_by_hudi_with_hadoop_style_paths_is_executed(tmp_path):
    tb = TimelineBuilder.create(tmp_path)
    t1 = tb.write(Base(P1, "a-0"))
    for _ in range(2):
        tb.write(Base(P1, "a-0"))
    (old,) = tb.slice_files(P1, "a-0", t1)
    plan = {
        "earliestInstantToRetain": None,
        "lastCompletedCommitTimestamp": "",
        "policy": "KEEP_LATEST_FILE_VERSIONS",
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            P1: [{"filePath": "file:" + tb.ctx.path(old), "isBootstrapBaseFile": False}]
        },
        "partitionsToBeDeleted": [],
    }
    time = tb.ctx.new_instant_time()
    tb.ctx.active.create_requested(time, Action.CLEAN, encode_container("HoodieCleanerPlan", plan))
    result = run_clean(tb.ctx, CleanConfig(commits_retained=5))
    assert result is not None and result.instant_time == time
    assert result.deleted_files == (old,)
    assert result.earliest_commit_retained is None
    assert "KEEP_LATEST_FILE_VERSIONS" in str(result)
