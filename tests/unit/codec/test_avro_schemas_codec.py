"""`pyhudi.codec.avro_schemas`: Hudi's `.avsc` files and single-record Avro containers of the timeline."""

from __future__ import annotations

import io
from pathlib import Path

import fastavro
import fastavro.validation
import pytest

from pyhudi.codec import avro_schemas
from pyhudi.codec.avro_schemas import (
    decode_container,
    decode_record,
    encode_container,
    encode_record,
    schema,
)
from pyhudi.codec.file_names import parse_instant_file
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.instant import Action, State

#: Record schema of each Avro timeline file: (action, state) -> record name (reference §2.3).
TIMELINE_RECORDS = {
    (Action.ROLLBACK, State.REQUESTED): "HoodieRollbackPlan",
    (Action.ROLLBACK, State.COMPLETED): "HoodieRollbackMetadata",
    (Action.REPLACE_COMMIT, State.REQUESTED): "HoodieRequestedReplaceMetadata",
    (Action.COMPACTION, State.REQUESTED): "HoodieCompactionPlan",
    (Action.CLEAN, State.REQUESTED): "HoodieCleanerPlan",
    (Action.CLEAN, State.INFLIGHT): "HoodieCleanerPlan",
    (Action.CLEAN, State.COMPLETED): "HoodieCleanMetadata",
    (Action.INDEXING, State.REQUESTED): "HoodieIndexPlan",
    (Action.INDEXING, State.COMPLETED): "HoodieIndexCommitMetadata",
}


def avro_timeline_files(tables: dict[str, Path]) -> list[tuple[Path, str]]:
    """(file, record name) for every non-empty Avro plan/metadata file of every real timeline."""
    found = []
    for root in tables.values():
        for folder in (root / ".hoodie", root / ".hoodie" / "timeline"):
            if not folder.is_dir():
                continue
            for path in sorted(folder.iterdir()):
                instant = parse_instant_file(path.name) if path.is_file() else None
                record = TIMELINE_RECORDS.get((instant.action, instant.state)) if instant else None
                if record and path.stat().st_size > 0:
                    found.append((path, record))
    return found


def instant_info(time: str = "20240101000000000", action: str = "commit") -> dict:
    return {"commitTime": time, "action": action}


def compaction_operation(file_id: str = "f-0") -> dict:
    return {
        "baseInstantTime": "20240101000000000",
        "deltaFilePaths": [f".{file_id}_20240101000000000.log.1_0-1-2"],
        "dataFilePath": f"{file_id}_0-1-2_20240101000000000.parquet",
        "fileId": file_id,
        "partitionPath": "p=1",
        "metrics": {"TOTAL_LOG_FILES": 1.0},
        "bootstrapFilePath": None,
    }


def clustering_plan() -> dict:
    slice_info = {
        "dataFilePath": "/t/p=1/f-0_0-1-2_20240101000000000.parquet",
        "deltaFilePaths": [],
        "fileId": "f-0",
        "partitionPath": "p=1",
        "bootstrapFilePath": "",
        "version": 1,
    }
    group = {
        "slices": [slice_info],
        "metrics": {},
        "numOutputFileGroups": 1,
        "extraMetadata": None,
        "version": 1,
    }
    strategy = {"strategyClassName": "x.Sort", "strategyParams": {}, "version": 1}
    return {
        "inputGroups": [group],
        "strategy": strategy,
        "extraMetadata": {},
        "version": 1,
        "preserveHoodieMetadata": True,
    }


RECORDS = {
    "HoodieCleanerPlan": {
        "earliestInstantToRetain": {
            "timestamp": "20240101000000000",
            "action": "commit",
            "state": "COMPLETED",
        },
        "lastCompletedCommitTimestamp": "20240102000000000",
        "policy": "KEEP_LATEST_COMMITS",
        "filesToBeDeletedPerPartition": {},
        "version": 2,
        "filePathsToBeDeletedPerPartition": {
            "p=1": [
                {
                    "filePath": "/t/p=1/f-0_0-1-2_20240101000000000.parquet",
                    "isBootstrapBaseFile": False,
                }
            ]
        },
        "partitionsToBeDeleted": [],
    },
    "HoodieRollbackPlan": {
        "instantToRollback": instant_info(),
        "RollbackRequests": [
            {
                "partitionPath": "p=1",
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": ["/t/p=1/f-0_0-1-2_20240101000000000.parquet"],
                "logBlocksToBeDeleted": {"file:/t/p=1/.f-1_20231231000000000.log.1_0-1-2": 512},
            }
        ],
        "version": 1,
    },
    "HoodieRollbackMetadata": {
        "startRollbackTime": "20240101000000001",
        "timeTakenInMillis": 12,
        "totalFilesDeleted": 1,
        "commitsRollback": ["20240101000000000"],
        "partitionMetadata": {
            "p=1": {
                "partitionPath": "p=1",
                "successDeleteFiles": ["/t/p=1/f-0_0-1-2_20240101000000000.parquet"],
                "failedDeleteFiles": [],
                "rollbackLogFiles": {},
                "logFilesFromFailedCommit": {},
            }
        },
        "version": 1,
        "instantsRollback": [instant_info()],
    },
    "HoodieCompactionPlan": {
        "operations": [compaction_operation("f-0"), compaction_operation("f-1")],
        "extraMetadata": None,
        "version": 2,
        "strategy": None,
        "preserveHoodieMetadata": True,
    },
    "HoodieRequestedReplaceMetadata": {
        "operationType": "CLUSTER",
        "clusteringPlan": clustering_plan(),
        "extraMetadata": {},
        "version": 1,
    },
}


# ---- schemas ---------------------------------------------------------------------------------


def test_every_named_hudi_schema_loads_self_contained():
    names = sorted(avro_schemas._named_schemas())
    assert len(names) >= 40
    for full_name in names:
        parsed = schema(full_name)
        assert parsed["name"] == full_name or parsed.get("namespace") in full_name
        fastavro.parse_schema(parsed, named_schemas={})  # no outside names needed


@pytest.mark.parametrize(
    "name",
    [
        "HoodieCleanerPlan",
        "HoodieCleanMetadata",
        "HoodieRollbackPlan",
        "HoodieRollbackMetadata",
        "HoodieCompactionPlan",
        "HoodieRequestedReplaceMetadata",
        "HoodieReplaceCommitMetadata",
        "HoodieCommitMetadata",
        "HoodieArchivedMetaEntry",
        "HoodieSavepointMetadata",
        "HoodieRestorePlan",
        "HoodieRestoreMetadata",
        "HoodieIndexPlan",
        "HoodieIndexCommitMetadata",
        "HoodieDeleteRecordList",
        "HoodieMetadataRecord",
    ],
)
def test_schema_is_found_by_short_and_full_name(name):
    assert schema(name) is schema(name)
    assert schema(name)["name"] == f"org.apache.hudi.avro.model.{name}"
    assert schema(f"org.apache.hudi.avro.model.{name}")["name"] == schema(name)["name"]


def test_unknown_schema_name_raises_key_error():
    with pytest.raises(KeyError, match="HoodieNoSuchThing"):
        schema("HoodieNoSuchThing")


def test_rollback_plan_schema_keeps_hudi_capitalised_requests_field():
    assert [f["name"] for f in schema("HoodieRollbackPlan")["fields"]] == [
        "instantToRollback",
        "RollbackRequests",
        "version",
    ]


# ---- containers ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_container_round_trips_one_record(name):
    data = encode_container(name, RECORDS[name])
    assert data.startswith(b"Obj\x01")
    assert decode_container(data) == RECORDS[name]


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_container_has_hudi_header_and_one_record(name):
    reader = fastavro.reader(io.BytesIO(encode_container(name, RECORDS[name])))
    assert reader.writer_schema["name"] == f"org.apache.hudi.avro.model.{name}"
    assert reader.metadata.get("avro.codec", "null") == "null"
    assert len(list(reader)) == 1


def test_requested_replace_metadata_with_all_nulls_round_trips():
    record = {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": None}
    assert decode_container(encode_container("HoodieRequestedReplaceMetadata", record)) == record


def test_archived_meta_entry_round_trips_a_commit_entry():
    record = {
        "hoodieCommitMetadata": None,
        "hoodieCleanMetadata": None,
        "hoodieCompactionMetadata": None,
        "hoodieRollbackMetadata": RECORDS["HoodieRollbackMetadata"],
        "hoodieSavePointMetadata": None,
        "commitTime": "20240101000000001",
        "actionType": "rollback",
        "version": 1,
        "hoodieCompactionPlan": None,
        "hoodieCleanerPlan": None,
        "actionState": "COMPLETED",
        "hoodieReplaceCommitMetadata": None,
        "hoodieRequestedReplaceMetadata": None,
        "hoodieInflightReplaceMetadata": None,
        "hoodieIndexCommitMetadata": None,
        "hoodieIndexPlan": None,
    }
    names = {f["name"] for f in schema("HoodieArchivedMetaEntry")["fields"]}
    record = {k: v for k, v in record.items() if k in names}
    decoded = decode_container(encode_container("HoodieArchivedMetaEntry", record))
    assert decoded["hoodieRollbackMetadata"] == RECORDS["HoodieRollbackMetadata"]
    assert (decoded["commitTime"], decoded["actionType"]) == ("20240101000000001", "rollback")


def test_encode_container_rejects_a_record_missing_required_fields():
    record = {
        k: v for k, v in RECORDS["HoodieRollbackMetadata"].items() if k != "startRollbackTime"
    }
    with pytest.raises(fastavro.validation.ValidationError, match="startRollbackTime"):
        encode_container("HoodieRollbackMetadata", record)


def test_schemaless_record_round_trips():
    record = RECORDS["HoodieCompactionPlan"]
    assert (
        decode_record("HoodieCompactionPlan", encode_record("HoodieCompactionPlan", record))
        == record
    )


@pytest.mark.parametrize("data", [b"", b"Obj\x01", b"not avro at all"])
def test_decode_container_of_garbage_raises_corrupt_file_error(data):
    with pytest.raises(CorruptFileError, match="the plan"):
        decode_container(data, what="the plan")


def test_decode_container_of_truncated_file_raises_corrupt_file_error():
    data = encode_container("HoodieCompactionPlan", RECORDS["HoodieCompactionPlan"])
    with pytest.raises(CorruptFileError):
        decode_container(data[: len(data) // 2])


# ---- the real timelines --------------------------------------------------------------------


def test_every_avro_timeline_file_of_the_real_tables_decodes(hudi_tables):
    files = avro_timeline_files(hudi_tables)
    names = {record for _, record in files}
    assert {
        "HoodieRollbackPlan",
        "HoodieRollbackMetadata",
        "HoodieRequestedReplaceMetadata",
        "HoodieCompactionPlan",
    } <= names
    for path, _ in files:
        assert isinstance(decode_container(path.read_bytes(), what=str(path)), dict), path


def test_every_avro_timeline_file_resolves_against_hudi_014_schemas(hudi_tables):
    """The 0.14 reader schema reads v6 files exactly and v8 files (extra fields dropped)."""
    files = avro_timeline_files(hudi_tables)
    assert len(files) >= 40  # an empty list would pass the loop below
    for path, record in files:
        data = path.read_bytes()
        (resolved,) = list(fastavro.reader(io.BytesIO(data), reader_schema=schema(record)))
        assert _agree(decode_container(data), resolved), path


def _agree(written, resolved) -> bool:
    """Values agree wherever both the writer's record and the 0.14 reader's record have a field."""
    if isinstance(written, dict) and isinstance(resolved, dict):
        return all(_agree(written[k], resolved[k]) for k in written.keys() & resolved.keys())
    if isinstance(written, list) and isinstance(resolved, list):
        return len(written) == len(resolved) and all(map(_agree, written, resolved))
    return written == resolved


def test_real_rollback_plan_and_metadata_name_the_failed_deltacommit(hudi_tables):
    hoodie = hudi_tables["mor_parquet__v6_nonpartitioned_rollback"] / ".hoodie"
    plan = decode_container((hoodie / "20250126040936578.rollback.requested").read_bytes())
    assert plan["instantToRollback"] == {"commitTime": "20250126040826878", "action": "deltacommit"}
    assert len(plan["RollbackRequests"]) == 2
    log_request = next(r for r in plan["RollbackRequests"] if r["logBlocksToBeDeleted"])
    assert list(log_request["logBlocksToBeDeleted"].values()) == [11828]
    metadata = decode_container((hoodie / "20250126040936578.rollback").read_bytes())
    assert metadata["commitsRollback"] == ["20250126040826878"]
    assert metadata["totalFilesDeleted"] == 1
    assert (hoodie / "20250126040936578.rollback.inflight").stat().st_size == 0


def test_real_insert_overwrite_requested_replace_metadata_is_all_null(hudi_tables):
    hoodie = hudi_tables["cow__v6_simplekeygen_nonhivestyle_overwritetable"] / ".hoodie"
    record = decode_container((hoodie / "20240707001303088.replacecommit.requested").read_bytes())
    assert record == {
        "operationType": None,
        "clusteringPlan": None,
        "extraMetadata": None,
        "version": None,
    }


def test_real_v8_compaction_plan_lists_one_operation_per_file_group(hudi_tables):
    timeline = hudi_tables["mor_avro__v8_trips_8i3u1d"] / ".hoodie" / "timeline"
    plan = decode_container((timeline / "20251220210129235.compaction.requested").read_bytes())
    assert plan["version"] == 2
    assert sorted(op["partitionPath"] for op in plan["operations"]) == [
        "city=chennai",
        "city=san_francisco",
        "city=sao_paulo",
    ]
    assert all(op["baseInstantTime"] == "20251220210108078" for op in plan["operations"])
