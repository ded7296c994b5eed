"""`pyhudi.codec.commit_metadata`: v6 JSON and v8 Avro commit metadata of the real tables, and round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyhudi.codec.commit_metadata import (
    decode_commit_metadata,
    decode_commit_schema,
    encode_commit_metadata,
    stat_from_json,
    stat_to_json,
)
from pyhudi.codec.file_names import parse_instant_file
from pyhudi.exceptions import CorruptFileError
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action, Instant

WRITE_ACTIONS = (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)


def timeline_files(root: Path) -> list[tuple[Path, Instant]]:
    """(file, instant) for every instant file of a table's own timeline (v6 `.hoodie/`, v8 `.hoodie/timeline/`)."""
    folder = root / ".hoodie" / "timeline"
    if not folder.is_dir():
        folder = root / ".hoodie"
    found = []
    for path in sorted(folder.iterdir()):
        instant = parse_instant_file(path.name) if path.is_file() else None
        if instant is not None:
            found.append((path, instant))
    return found


def write_files(tables: dict[str, Path], *, completed: bool) -> list[tuple[str, Path, Instant]]:
    out = []
    for name, root in sorted(tables.items()):
        for path, instant in timeline_files(root):
            wanted = instant.is_completed if completed else instant.is_inflight
            if instant.action in WRITE_ACTIONS and wanted:
                out.append((name, path, instant))
    return out


def base_stat(**changes) -> WriteStat:
    stat = WriteStat(
        file_id="f1-0",
        path="p=1/f1-0_0-1-2_20240101000000000.parquet",
        partition_path="p=1",
        num_writes=10,
        num_inserts=10,
        total_write_bytes=4096,
        file_size_bytes=4096,
        runtime_stats={"totalScanTime": 0, "totalUpsertTime": 5, "totalCreateTime": 7},
    )
    return stat.with_changes(**changes)


def delta_stat() -> WriteStat:
    log = ".f1-0_20240101000000000.log.1_0-1-2"
    return base_stat(
        path=f"p=1/{log}",
        prev_commit="20240101000000000",
        num_update_writes=3,
        num_inserts=0,
        log_version=1,
        log_offset=0,
        base_file="f1-0_0-1-2_20240101000000000.parquet",
        log_files=(log,),
    )


# ---- real tables ------------------------------------------------------------------------------


def test_every_completed_write_instant_of_the_real_tables_decodes(hudi_tables):
    files = write_files(hudi_tables, completed=True)
    assert len(files) >= 40
    for name, path, instant in files:
        metadata = decode_commit_metadata(path.read_bytes(), what=str(path))
        assert metadata.operation_type is not WriteOperationType.UNKNOWN, path
        assert metadata.write_stats(), path
        assert metadata.schema and json.loads(metadata.schema)["type"] == "record", path
        assert metadata.is_replace is (instant.action is Action.REPLACE_COMMIT), path
        assert metadata.compacted is (metadata.operation_type is WriteOperationType.COMPACT), path
        for stat in metadata.write_stats():
            assert stat.path and (hudi_tables[name] / stat.path).is_file(), (path, stat.path)
            assert stat.file_id and stat.path.rsplit("/", 1)[-1].lstrip(".").startswith(
                stat.file_id
            )


def test_the_schema_alone_is_the_schema_of_the_whole_commit_metadata(hudi_tables):
    files = write_files(hudi_tables, completed=True)
    for _, path, _ in files:
        data = path.read_bytes()
        assert decode_commit_schema(data) == decode_commit_metadata(data).schema, path
    assert decode_commit_schema(b"") is None
    with pytest.raises(CorruptFileError, match="the commit"):
        decode_commit_schema(b"[1]", what="the commit")


def test_the_schema_alone_does_not_decode_write_stats():
    data = json.dumps({"partitionToWriteStats": {"p": [5]}, "extraMetadata": {"schema": "S"}})
    with pytest.raises(TypeError):  # a stat that is not an object: only a full decode sees it
        decode_commit_metadata(data.encode())
    assert decode_commit_schema(data.encode()) == "S"


def test_every_inflight_workload_profile_of_the_real_tables_decodes(hudi_tables):
    files = write_files(hudi_tables, completed=False)
    assert len(files) >= 40
    for _, path, _ in files:
        metadata = decode_commit_metadata(path.read_bytes(), what=str(path))
        assert metadata.operation_type is not WriteOperationType.UNKNOWN, path
        assert metadata.partition_to_write_stats, path


def test_v6_json_commits_re_encode_to_the_identical_json_document(hudi_tables):
    checked = 0
    for _, path, _ in write_files(hudi_tables, completed=True) + write_files(
        hudi_tables, completed=False
    ):
        data = path.read_bytes()
        if data.startswith(b"Obj\x01"):
            continue
        original = json.loads(data)
        again = json.loads(encode_commit_metadata(decode_commit_metadata(data)))
        assert again == original, path
        assert list(again) == list(original), path  # Jackson field order
        checked += 1
    assert checked >= 30


def test_v8_commits_are_avro_and_decode_to_the_same_model_as_after_re_encoding(hudi_tables):
    checked = 0
    for _, path, _ in write_files(hudi_tables, completed=True):
        data = path.read_bytes()
        if not data.startswith(b"Obj\x01"):
            continue
        metadata = decode_commit_metadata(data)
        assert decode_commit_metadata(encode_commit_metadata(metadata)) == metadata, path
        checked += 1
    assert checked >= 10


def test_real_log_append_stat_keeps_delta_fields(hudi_tables):
    path = hudi_tables["mor_avro__v6_trips_8i1u"] / ".hoodie" / "20250331030645735.deltacommit"
    metadata = decode_commit_metadata(path.read_bytes())
    (stat,) = metadata.write_stats()
    assert stat.is_delta
    assert (stat.log_version, stat.log_offset, stat.num_update_writes) == (1, 0, 1)
    assert stat.prev_commit == "20250331030642808"
    assert (
        stat.base_file == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_0-13-60_20250331030642808.parquet"
    )
    assert stat.log_files == (
        ".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85",
    )
    assert metadata.operation_type is WriteOperationType.UPSERT_PREPPED


def test_real_insert_overwrite_table_lists_replaced_file_groups(hudi_tables):
    root = hudi_tables["cow__v6_simplekeygen_nonhivestyle_overwritetable"]
    metadata = decode_commit_metadata(
        (root / ".hoodie" / "20240707001303088.replacecommit").read_bytes()
    )
    assert metadata.operation_type is WriteOperationType.INSERT_OVERWRITE_TABLE
    assert metadata.replaced_file_ids() == {
        ("10", "4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0"),
        ("20", "88163884-fef0-4aab-865d-c72327a8a1d5-0"),
        ("30", "d398fae1-c0e6-4098-8124-f55f7098bdba-0"),
    }
    assert metadata.written_file_names() == {
        "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet"
    }


def test_real_workload_profile_has_insert_bucket_with_empty_file_id(hudi_tables):
    path = (
        hudi_tables["mor_avro__v6_trips_8i1u"]
        / ".hoodie"
        / "20250331030645735.deltacommit.inflight"
    )
    stats = decode_commit_metadata(path.read_bytes()).write_stats()
    assert [s.file_id for s in stats] == ["", "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"]
    assert all(s.path is None and s.prev_commit for s in stats)


# ---- encode / decode ---------------------------------------------------------------------------


def test_commit_metadata_round_trips_plain_and_delta_stats():
    metadata = CommitMetadata(
        partition_to_write_stats={
            "p=1": (base_stat(), delta_stat()),
            "": (base_stat(partition_path=""),),
        },
        operation_type=WriteOperationType.UPSERT,
        extra_metadata={"schema": '{"type":"record"}', "checkpoint": "7"},
    )
    assert decode_commit_metadata(encode_commit_metadata(metadata)) == metadata


def test_encoded_commit_metadata_is_pretty_jackson_json_with_upper_case_operation():
    text = encode_commit_metadata(
        CommitMetadata(operation_type=WriteOperationType.BULK_INSERT)
    ).decode()
    doc = json.loads(text)
    assert list(doc) == ["partitionToWriteStats", "compacted", "extraMetadata", "operationType"]
    assert doc["operationType"] == "BULK_INSERT"
    assert '"compacted" : false' in text


def test_stat_json_has_hudi_field_order_and_delta_extras():
    plain = stat_to_json(base_stat())
    assert list(plain)[:4] == ["fileId", "path", "cdcStats", "prevCommit"]
    assert plain["prevCommit"] == "null" and plain["tempPath"] is None
    assert "logVersion" not in plain
    delta = stat_to_json(delta_stat())
    assert list(delta)[-5:] == ["logVersion", "logOffset", "baseFile", "logFiles", "recordsStats"]
    assert delta["recordsStats"] == {"val": None}
    assert stat_from_json(delta) == delta_stat()


def test_stat_from_json_fills_missing_counters_and_null_prev_commit():
    stat = stat_from_json({"fileId": "f", "prevCommit": None, "numWrites": None})
    assert (stat.file_id, stat.prev_commit, stat.num_writes, stat.path) == ("f", "null", 0, None)


def test_replace_commit_metadata_round_trips_replaced_file_ids():
    metadata = CommitMetadata(
        partition_to_write_stats={"a": (base_stat(partition_path="a"),)},
        operation_type=WriteOperationType.INSERT_OVERWRITE,
        partition_to_replace_file_ids={"a": ("old-0", "old-1"), "b": ()},
    )
    decoded = decode_commit_metadata(encode_commit_metadata(metadata))
    assert decoded == metadata
    assert decoded.is_replace and decoded.replaced_file_ids() == {("a", "old-0"), ("a", "old-1")}
    assert json.loads(encode_commit_metadata(metadata))["partitionToReplaceFileIds"] == {
        "a": ["old-0", "old-1"],
        "b": [],
    }


def test_plain_commit_has_no_replace_field():
    doc = json.loads(encode_commit_metadata(CommitMetadata()))
    assert "partitionToReplaceFileIds" not in doc


def test_compaction_commit_round_trips_compacted_flag():
    metadata = CommitMetadata(operation_type=WriteOperationType.COMPACT, compacted=True)
    assert decode_commit_metadata(encode_commit_metadata(metadata)).compacted is True


@pytest.mark.parametrize("data", [b"", b"   \n", b"\n"])
def test_empty_file_is_empty_commit_metadata(data):
    assert decode_commit_metadata(data) == CommitMetadata()


def test_decode_tolerates_unknown_operation_and_lower_case_names_and_null_extra_values():
    data = json.dumps(
        {"operationType": "upsert", "extraMetadata": {"a": None, "b": "1"}, "unknown": 1}
    ).encode()
    metadata = decode_commit_metadata(data)
    assert metadata.operation_type is WriteOperationType.UPSERT
    assert metadata.extra_metadata == {"b": "1"}
    assert (
        decode_commit_metadata(b'{"operationType":"SOMETHING_NEW"}').operation_type
        is WriteOperationType.UNKNOWN
    )


@pytest.mark.parametrize(
    "data", [b"{", b'{"partitionToWriteStats": ', b"not json", b"\xff\xfe\x00"]
)
def test_corrupt_json_raises_corrupt_file_error_naming_the_file(data):
    with pytest.raises(CorruptFileError, match=r"20240101000000000\.commit"):
        decode_commit_metadata(data, what="20240101000000000.commit")


def test_truncated_avro_commit_raises_corrupt_file_error(hudi_tables):
    path = next(
        p
        for _, p, _ in write_files(hudi_tables, completed=True)
        if p.read_bytes().startswith(b"Obj\x01")
    )
    data = path.read_bytes()
    with pytest.raises(CorruptFileError):
        decode_commit_metadata(data[: len(data) // 2])
    with pytest.raises(CorruptFileError):
        decode_commit_metadata(b"Obj\x01garbage")


@pytest.mark.parametrize("data", [b"null", b"[]", b"42", b'"text"'])
def test_json_that_is_not_an_object_raises_corrupt_file_error(data):
    with pytest.raises(CorruptFileError):
        decode_commit_metadata(data)
