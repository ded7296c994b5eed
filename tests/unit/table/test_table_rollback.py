"""`pyhudi.table.rollback`: rolling back failed writes with Hudi's rollback plan and metadata (§7.6)."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro

from pyhudi.codec import avro_schemas
from pyhudi.codec.file_names import base_file_name, log_file_name, marker_name
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.enums import IOType
from pyhudi.model.instant import Action, Instant, State
from pyhudi.table.context import TableContext
from pyhudi.table.rollback import failed_write_instants, plan_rollback, rollback_failed_writes


def new_table(root: Path, table_type: str = "COPY_ON_WRITE") -> TableContext:
    return TableContext.create(
        str(root),
        {
            "hoodie.table.name": "t",
            "hoodie.database.name": "default",
            "hoodie.table.type": table_type,
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.partition.fields": "p",
            "hoodie.table.timeline.timezone": "UTC",
        },
    )


def fail_write(
    ctx: TableContext,
    partition: str,
    *,
    action: Action = Action.COMMIT,
    file_id: str = "f1-0",
    with_marker: bool = True,
    inflight: bool = True,
) -> tuple[Instant, Path]:
    """A write that died after writing one base file: requested(+inflight) instant, marker, data file."""
    time = ctx.new_instant_time()
    instant = ctx.active.create_requested(time, action)
    if inflight:
        instant = ctx.active.transition_to_inflight(instant)
    name = base_file_name(file_id, "0-1-2", time)
    data = Path(ctx.partition_path(partition)) / name
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_bytes(b"PAR1 not really")
    if with_marker:
        marker = Path(ctx.marker_folder(time)) / partition / marker_name(name, IOType.CREATE)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_bytes(b"")
    return instant, data


def read_avro(path: Path, record: str) -> dict:
    """Decode with Hudi's own 0.14 schema as the reader schema (what a Java reader would do)."""
    (value,) = list(
        fastavro.reader(io.BytesIO(path.read_bytes()), reader_schema=avro_schemas.schema(record))
    )
    return value


def hoodie_names(ctx: TableContext) -> list[str]:
    return sorted(p.name for p in Path(ctx.meta_path).iterdir() if p.is_file())


def test_rollback_of_failed_commit_deletes_its_file_and_writes_rollback_triple(tmp_path):
    ctx = new_table(tmp_path)
    failed, data = fail_write(ctx, "p=1")
    rolled = rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert rolled == [failed.time]
    assert not data.exists()
    assert not Path(ctx.marker_folder(failed.time)).exists()
    names = hoodie_names(ctx)
    assert not [n for n in names if n.startswith(failed.time)], (
        "the failed instant's files are deleted"
    )
    rollback_files = [n for n in names if ".rollback" in n]
    (rollback_time,) = {n.split(".", 1)[0] for n in rollback_files}
    assert rollback_time > failed.time
    assert sorted(rollback_files) == [
        f"{rollback_time}.rollback",
        f"{rollback_time}.rollback.inflight",
        f"{rollback_time}.rollback.requested",
    ]
    assert (Path(ctx.meta_path) / f"{rollback_time}.rollback.inflight").read_bytes() == b""


def test_rollback_plan_lists_the_file_and_metadata_names_the_instant(tmp_path):
    ctx = new_table(tmp_path)
    failed, data = fail_write(ctx, "p=1")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    hoodie = Path(ctx.meta_path)
    (requested,) = hoodie.glob("*.rollback.requested")
    plan = read_avro(requested, "HoodieRollbackPlan")
    assert plan["instantToRollback"] == {"commitTime": failed.time, "action": "commit"}
    assert plan["version"] == 1
    (request,) = plan["RollbackRequests"]
    assert request["partitionPath"] == "p=1"
    assert request["filesToBeDeleted"] == [str(data)]
    assert request["logBlocksToBeDeleted"] == {}
    (completed,) = hoodie.glob("*.rollback")
    metadata = read_avro(completed, "HoodieRollbackMetadata")
    assert metadata["commitsRollback"] == [failed.time]
    assert metadata["instantsRollback"] == [{"commitTime": failed.time, "action": "commit"}]
    assert metadata["startRollbackTime"] == completed.name.split(".")[0]
    assert metadata["totalFilesDeleted"] == 1
    assert metadata["partitionMetadata"]["p=1"]["successDeleteFiles"] == [str(data)]
    assert metadata["partitionMetadata"]["p=1"]["failedDeleteFiles"] == []


def test_rolled_back_table_has_only_the_rollback_on_its_timeline(tmp_path):
    ctx = new_table(tmp_path)
    fail_write(ctx, "p=1")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    reopened = TableContext.open(str(tmp_path))
    assert [(i.action, i.state) for i in reopened.active.timeline] == [
        (Action.ROLLBACK, State.COMPLETED)
    ]
    assert reopened.view().latest_file_slices() == []


def test_committed_files_survive_a_rollback(tmp_path):
    ctx = new_table(tmp_path)
    time = ctx.new_instant_time()
    done = ctx.active.complete(
        ctx.active.transition_to_inflight(ctx.active.create_requested(time, Action.COMMIT))
    )
    kept = tmp_path / "p=1" / base_file_name("keep-0", "0-0-0", done.time)
    kept.parent.mkdir()
    kept.write_bytes(b"PAR1")
    fail_write(ctx, "p=1", file_id="f2-0")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert kept.exists()
    assert [p.name for p in (tmp_path / "p=1").iterdir()] == [kept.name]


def test_rollback_without_markers_lists_files_named_with_the_instant(tmp_path):
    ctx = new_table(tmp_path)
    failed, data = fail_write(ctx, "p=2", with_marker=False)
    (request,) = plan_rollback(ctx, failed)
    assert request.files_to_delete == [str(data)]
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert not data.exists()


def test_rollback_of_non_partitioned_failed_write(tmp_path):
    ctx = new_table(tmp_path)
    _, data = fail_write(ctx, "")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert not data.exists()
    (completed,) = Path(ctx.meta_path).glob("*.rollback")
    assert read_avro(completed, "HoodieRollbackMetadata")["partitionMetadata"][""][
        "successDeleteFiles"
    ] == [str(data)]


def test_requested_only_instant_is_rolled_back_too(tmp_path):
    ctx = new_table(tmp_path)
    failed, data = fail_write(ctx, "p=1", inflight=False)
    assert failed_write_instants(ctx) == [failed]
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert not data.exists() and not [n for n in hoodie_names(ctx) if n.startswith(failed.time)]


def test_several_failed_writes_are_rolled_back_newest_first(tmp_path):
    ctx = new_table(tmp_path)
    first, first_data = fail_write(ctx, "p=1", file_id="a-0")
    second, second_data = fail_write(ctx, "p=2", file_id="b-0")
    assert rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table) == [
        second.time,
        first.time,
    ]
    assert not first_data.exists() and not second_data.exists()
    assert len(list(Path(ctx.meta_path).glob("*.rollback"))) == 2


def test_nothing_to_roll_back_writes_nothing(tmp_path):
    ctx = new_table(tmp_path)
    before = hoodie_names(ctx)
    assert rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table) == []
    assert hoodie_names(ctx) == before


def test_pending_compaction_is_not_a_failed_write(tmp_path):
    ctx = new_table(tmp_path, "MERGE_ON_READ")
    ctx.active.create_requested(ctx.new_instant_time(), Action.COMPACTION, b"")
    assert failed_write_instants(ctx) == []


def test_pending_clustering_is_not_a_failed_write_but_insert_overwrite_is(tmp_path):
    ctx = new_table(tmp_path)
    clustering = avro_schemas.encode_container(
        "HoodieRequestedReplaceMetadata",
        {"operationType": "CLUSTER", "clusteringPlan": None, "extraMetadata": None, "version": 1},
    )
    ctx.active.create_requested(ctx.new_instant_time(), Action.REPLACE_COMMIT, clustering)
    overwrite = avro_schemas.encode_container(
        "HoodieRequestedReplaceMetadata",
        {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None},
    )
    failed = ctx.active.create_requested(ctx.new_instant_time(), Action.REPLACE_COMMIT, overwrite)
    assert failed_write_instants(ctx) == [failed]


def test_failed_deltacommit_that_created_a_log_only_file_group_deletes_the_log(tmp_path):
    ctx = new_table(tmp_path, "MERGE_ON_READ")
    time = ctx.new_instant_time()
    failed = ctx.active.transition_to_inflight(
        ctx.active.create_requested(time, Action.DELTA_COMMIT)
    )
    log = tmp_path / "p=1" / log_file_name("g-0", time, 1, "0-1-2")
    log.parent.mkdir()
    log.write_bytes(b"#HUDI#")
    marker = (
        Path(ctx.marker_folder(time))
        / "p=1"
        / marker_name(base_file_name("g-0", "0-1-2", time), IOType.APPEND)
    )
    marker.parent.mkdir(parents=True)
    marker.write_bytes(b"")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert not log.exists()
    (requested,) = Path(ctx.meta_path).glob("*.rollback.requested")
    (request,) = read_avro(requested, "HoodieRollbackPlan")["RollbackRequests"]
    assert (request["fileId"], request["latestBaseInstant"]) == ("g-0", failed.time)
    assert list(request["logBlocksToBeDeleted"].values()) == [6]


def test_rollback_reads_timeline_server_based_markers(tmp_path):
    ctx = new_table(tmp_path)
    failed, data = fail_write(ctx, "p=1", with_marker=False)
    markers = Path(ctx.marker_folder(failed.time))
    markers.mkdir(parents=True)
    (markers / "MARKERS.type").write_text("TIMELINE_SERVER_BASED")
    (markers / "MARKERS0").write_text(f"p=1/{marker_name(data.name, IOType.CREATE)}\n")
    rollback_failed_writes(ctx, record=commit_rollback_to_metadata_table)
    assert not data.exists()
