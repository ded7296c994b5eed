"""The `files` records of a data rollback (Hudi 0.14 `processRollbackMetadata`), checked on the
rollback Hudi wrote in the real `mor_parquet__v6_nonpartitioned_rollback` table."""

from __future__ import annotations

from pyhudi.codec.avro_schemas import decode_container
from pyhudi.codec.metadata_records import MetadataFileInfo, MetadataRecordType
from pyhudi.metadata.rollback_records import rollback_files_records


def test_rollback_records_add_the_rollback_and_failed_commit_log_files(hudi_tables):
    root = hudi_tables["mor_parquet__v6_nonpartitioned_rollback"]
    (rollback,) = (root / ".hoodie").glob("*.rollback")
    (record,) = rollback_files_records(decode_container(rollback.read_bytes()))
    assert record.type is MetadataRecordType.FILE_LIST and record.key == "."
    on_disk = {name: (root / name).stat().st_size for name in record.files or {}}
    assert set(on_disk) == {
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43",
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1",
    }
    assert record.files == {n: MetadataFileInfo(s, False) for n, s in on_disk.items()}


def test_rollback_records_leave_out_deleted_logs_and_partitions_without_rollback_blocks():
    metadata = {
        "partitionMetadata": {
            "a": {
                "partitionPath": "a",
                "successDeleteFiles": ["file:/t/a/.f2_20240101000000000.log.1_0-1-0"],
                "rollbackLogFiles": {"file:/t/a/.f1_20231231000000000.log.2_1-0-1": 90},
                "logFilesFromFailedCommit": {
                    "file:/t/a/.f1_20231231000000000.log.1_0-1-0": 500,
                    "file:/t/a/.f2_20240101000000000.log.1_0-1-0": 700,
                },
            },
            "b": {"partitionPath": "b", "successDeleteFiles": ["/t/b/x.parquet"]},
        }
    }
    (record,) = rollback_files_records(metadata)
    assert record.key == "a" and record.files == {
        ".f1_20231231000000000.log.2_1-0-1": MetadataFileInfo(90, False),
        ".f1_20231231000000000.log.1_0-1-0": MetadataFileInfo(500, False),
    }
