"""Apache Hudi and pyhudi share tables on S3 (moto's server; the judges run S3A at its endpoint):
Hudi 0.15 and 1.2 read pyhudi's copy-on-write and merge-on-read tables exactly as pyhudi and
hudi-rs do, Hudi 0.15 continues one of them (upsert, clean, compaction), and pyhudi continues a
table Hudi 0.15 created. Hudi reads through the metadata table, so pyhudi's is judged too.

Hudi creates its table through `s3a://`, pyhudi continues it through `s3a://` too, and every
reader reads it through `s3://` (the same objects).
"""

from __future__ import annotations

import io
import uuid
from typing import Any

import fastavro
import pytest

import pyhudi
from pyhudi.model.instant import Action
from tests.judge.agreement import assert_readers_agree
from tests.judge.tables import all_types_frame, base_options

METADATA = {"hoodie.metadata.enable": "true"}
#: The queries judged: snapshot, and read-optimized on merge-on-read tables.
QUERIES = ("snapshot", "read optimized")
#: pyhudi's writes: a bulk insert, an upsert (updates and inserts: log files on merge-on-read) and
#: a delete; the copy-on-write table cleans after the delete (one commit retained).
PYHUDI_STEPS = [
    ("bulk_insert", range(30), "a"),
    ("upsert", range(20, 40), "b"),
    ("delete", range(4), "x"),
]
CLEAN_ONE = {"hoodie.cleaner.commits.retained": "1"}
#: Hudi's upsert into pyhudi's merge-on-read table: it cleans and compacts inline.
HUDI_CONTINUES = {
    **base_options("merge_on_read", "MERGE_ON_READ", **METADATA, **CLEAN_ONE),
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "1",
    "hoodie.datasource.write.operation": "upsert",
}
#: Hudi's own table. `insert`, not `bulk_insert`: Hudi 0.15's bulk insert (its row writer)
#: annotates tinyint and smallint columns INT_8/INT_16 under an Avro `int` schema, and its own
#: reader then fails on them (NullPointerException in OnHeapColumnVector.getInt; local too).
HUDI_CREATES = {
    **base_options("hudi_created", "COPY_ON_WRITE", **METADATA),
    "hoodie.datasource.write.operation": "insert",
}


def _client(s3_server):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client("s3", endpoint_url=s3_server.url)


@pytest.fixture(scope="module")
def bucket(s3_server, hudi_0_15, hudi_1_2) -> str:  # type: ignore[no-untyped-def]
    """A fresh bucket, `s3://<name>`, on the endpoint both judges' S3A use."""
    assert hudi_0_15.s3_endpoint == hudi_1_2.s3_endpoint == s3_server.url
    name = f"judge-{uuid.uuid4().hex[:12]}"
    _client(s3_server).create_bucket(Bucket=name)
    return f"s3://{name}"


@pytest.fixture(scope="module")
def tables(spark, bucket, hudi_0_15) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The module's tables on S3, by name: pyhudi's `copy_on_write` and `merge_on_read` (keys
    4..39), and `hudi_created`, Hudi 0.15's copy-on-write table, created through `s3a://` (keys
    0..29) while pyhudi writes (Hudi has answered before a test asks it anything)."""
    found = {name: f"{bucket}/{name}" for name in ("copy_on_write", "merge_on_read")}
    found["hudi_created"] = f"{bucket}/hudi_created"
    s3a = "s3a://" + found["hudi_created"].removeprefix("s3://")
    hudi_0_15.write(s3a, all_types_frame(spark, range(30), 1, "a"), HUDI_CREATES, wait=False)
    try:
        _pyhudi_writes(spark, found["copy_on_write"], "COPY_ON_WRITE", **CLEAN_ONE)
        _pyhudi_writes(spark, found["merge_on_read"], "MERGE_ON_READ")
    finally:
        hudi_0_15.receive()
    return found


@pytest.mark.parametrize("version", ["hudi_0_15", "hudi_1_2"])
def test_hudi_reads_pyhudi_tables_on_s3(spark, tables, version, request) -> None:  # type: ignore[no-untyped-def]
    judge = request.getfixturevalue(version)
    hudi_rs = version == "hudi_0_15"  # hudi-rs's read is the same whichever judge asks
    for name in ("copy_on_write", "merge_on_read"):
        what = f"pyhudi's {name} on S3"
        count = assert_readers_agree(
            spark, judge, tables[name], what, only=QUERIES, hudi_rs=hudi_rs
        )
        assert count == 36
    cow = pyhudi.HudiTable(tables["copy_on_write"])
    assert Action.CLEAN in {i.action for i in cow.timeline}, "pyhudi did not clean"
    mor = pyhudi.HudiTable(tables["merge_on_read"])
    assert any(s.has_log_files for s in mor.latest_file_slices()), "pyhudi wrote no log files"


def test_hudi_continues_pyhudi_table_on_s3(spark, s3_server, bucket, tables, hudi_0_15) -> None:  # type: ignore[no-untyped-def]
    """Hudi 0.15 upserts into a copy of pyhudi's merge-on-read table, cleaning and compacting
    inline; pyhudi and hudi-rs read exactly what Hudi reads. Both writers' clean plans name the
    files to delete by the full `s3://` URI the table was written through."""
    path = f"{bucket}/mor_continued"
    _copy_table(s3_server, tables["merge_on_read"], path)
    hudi_0_15.write(path, all_types_frame(spark, range(35, 45), 5, "h"), HUDI_CONTINUES)

    actions = [i.action for i in pyhudi.HudiTable(path).timeline]
    assert {Action.CLEAN, Action.COMMIT} <= set(actions), (
        f"Hudi did not clean and compact: {actions}"
    )
    count = assert_readers_agree(
        spark, hudi_0_15, path, "pyhudi's MOR continued by Hudi", only=QUERIES
    )
    assert count == 41  # keys 4..44

    cow = tables["copy_on_write"]
    for written_by, table in [("Hudi", path), ("pyhudi", cow)]:
        deleted = _clean_plan_paths(s3_server, table)
        assert deleted, f"{written_by}'s clean plan deletes nothing"
        assert all(p.startswith(f"{table}/") for p in deleted), (written_by, deleted)


def test_pyhudi_continues_hudi_table_on_s3(spark, tables, hudi_0_15) -> None:  # type: ignore[no-untyped-def]
    """Hudi 0.15 created a copy-on-write table (with its metadata table) through `s3a://`;
    pyhudi reads it, upserts into it through the same `s3a://` URI (updating Hudi's metadata
    table), and Hudi reads it again."""
    path = tables["hudi_created"]
    assert assert_readers_agree(spark, hudi_0_15, path, "Hudi's table on S3", only=QUERIES) == 30

    options = {**HUDI_CREATES, **_operation("upsert")}
    s3a = "s3a://" + path.removeprefix("s3://")
    pyhudi.write(all_types_frame(spark, range(20, 40), 2, "p"), s3a, options)
    assert [i.action for i in pyhudi.HudiTable(s3a).commits()] == [Action.COMMIT] * 2
    what = "Hudi's table on S3 continued by pyhudi"
    assert assert_readers_agree(spark, hudi_0_15, path, what, only=QUERIES) == 40


def _pyhudi_writes(spark, path: str, table_type: str, **extra: str) -> None:  # type: ignore[no-untyped-def]
    options = base_options(path.rsplit("/", 1)[1], table_type, **METADATA, **extra)
    for ts, (operation, keys, tag) in enumerate(PYHUDI_STEPS, start=1):
        frame = all_types_frame(spark, keys, ts, tag)
        pyhudi.write(frame, path, {**options, **_operation(operation)})


def _operation(name: str) -> dict[str, str]:
    return {"hoodie.datasource.write.operation": name}


def _copy_table(s3_server, source: str, target: str) -> None:  # type: ignore[no-untyped-def]
    """Copy every object of the table at `source` to `target` (same bucket), server-side."""
    client = _client(s3_server)
    bucket, source_key = source.removeprefix("s3://").split("/", 1)
    target_key = target.removeprefix("s3://").split("/", 1)[1]
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{source_key}/")
    for page in pages:
        for item in page.get("Contents", []):
            key = target_key + item["Key"][len(source_key) :]
            client.copy_object(
                Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": item["Key"]}
            )


def _clean_plan_paths(s3_server, table: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The `filePath` of every file the table's clean plans (`.clean.requested`) delete."""
    client = _client(s3_server)
    bucket, prefix = table.removeprefix("s3://").split("/", 1)
    listed = client.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/.hoodie/")
    paths = []
    for item in listed.get("Contents", []):
        if item["Key"].endswith(".clean.requested") and "/.hoodie/metadata/" not in item["Key"]:
            body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            plan: Any
            for plan in fastavro.reader(io.BytesIO(body)):
                for files in (plan["filePathsToBeDeletedPerPartition"] or {}).values():
                    paths += [f["filePath"] for f in files]
    return paths
