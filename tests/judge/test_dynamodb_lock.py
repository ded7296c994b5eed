"""pyhudi and Apache Hudi 0.15 (with `hudi-aws`, the only release of it Maven Central serves here)
share one table on S3 under `DynamoDBBasedLockProvider`, the lock table served by moto at the
tests' endpoint: each waits while the other holds the lock, each reads the other's lock item, and
both commit when they write at once. Hudi writes through `s3a://`, pyhudi through `s3://`."""

from __future__ import annotations

import uuid
from typing import Any

import boto3
import pytest
from pyspark.sql import functions as F

import pyhudi
from pyhudi.exceptions import LockError
from pyhudi.table.context import TableContext
from pyhudi.table.lock import table_transaction
from tests.conftest import S3_URL
from tests.judge.agreement import assert_readers_agree, completed_commits
from tests.judge.client import JudgeError
from tests.judge.tables import all_types_frame, base_options

#: The lease is `hoodie.write.lock.wait_time_ms` for both (Hudi passes it to the lock client).
LEASE_MS = 2_000
#: Give up quickly when the other writer holds the lock on purpose.
IMPATIENT = {
    "hoodie.write.lock.num_retries": "1",
    "hoodie.write.lock.wait_time_ms_between_retry": "200",
    "hoodie.write.lock.client.num_retries": "1",
    "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
}

#: Hudi 0.15's DynamoDBBasedLockProvider taken in the judge's JVM (kept in its namespace until
#: `HUDI_RELEASES_THE_LOCK`), as a Hudi writer's LockManager takes it around a commit.
HUDI_TAKES_THE_LOCK = """
jvm = spark._jvm
props = jvm.java.util.Properties()
for key, value in options.items():
    props.setProperty(key, value)
config = jvm.org.apache.hudi.common.config.LockConfiguration(props)
provider = jvm.org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider(
    config,
    jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration()),
)
judge.namespace["hudi_lock"] = provider
result = provider.tryLock(1000, jvm.java.util.concurrent.TimeUnit.MILLISECONDS)
"""
HUDI_RELEASES_THE_LOCK = "judge.namespace.pop('hudi_lock').close()"


def _s3a(path: str) -> str:
    return "s3a://" + path.removeprefix("s3://")


def _op(options: dict[str, str], operation: str, **extra: str) -> dict[str, str]:
    return {**options, "hoodie.datasource.write.operation": operation, **extra}


@pytest.fixture
def locked_table(spark, s3_server, hudi_0_15) -> tuple[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """A copy-on-write table on S3 written by pyhudi (keys 0..11), and the OCC options of its
    writers: the DynamoDB lock in a lock table of its own, keyed by the table's name."""
    assert hudi_0_15.s3_endpoint == s3_server.url
    bucket = f"dyn-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_server.url).create_bucket(Bucket=bucket)
    path = f"s3://{bucket}/shared"
    options = base_options(
        "shared",
        "COPY_ON_WRITE",
        **{
            "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
            "hoodie.cleaner.policy.failed.writes": "LAZY",
            "hoodie.write.lock.provider": (
                "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
            ),
            "hoodie.write.lock.dynamodb.table": f"locks-{uuid.uuid4().hex[:8]}",
            "hoodie.write.lock.dynamodb.endpoint_url": S3_URL,
            "hoodie.write.lock.dynamodb.region": "us-east-1",
            "hoodie.write.lock.wait_time_ms": str(LEASE_MS),
        },
    )
    pyhudi.write(all_types_frame(spark, range(12), 1, "a"), path, _op(options, "bulk_insert"))
    return path, options


def _item(options: dict[str, str]) -> dict[str, str] | None:
    client = boto3.client("dynamodb", endpoint_url=S3_URL)
    answer = client.get_item(
        TableName=options["hoodie.write.lock.dynamodb.table"],
        Key={"key": {"S": options["hoodie.table.name"]}},
        ConsistentRead=True,
    )
    item: dict[str, Any] | None = answer.get("Item")
    return None if item is None else {name: value["S"] for name, value in item.items()}


def _tags(spark, path: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    rows = pyhudi.read(spark, path).select("id", "raw").collect()
    return {r["id"]: bytes(r["raw"]).decode().rstrip("0123456789") for r in rows}


def test_pyhudi_waits_for_the_dynamodb_lock_hudi_holds(spark, hudi_0_15, locked_table) -> None:  # type: ignore[no-untyped-def]
    path, options = locked_table
    hudi_lock = {**options, "hoodie.write.lock.dynamodb.partition_key": "shared"}
    assert hudi_0_15.run(HUDI_TAKES_THE_LOCK, options=hudi_lock) is True
    try:
        theirs = _item(options)  # the lock client's item, as pyhudi writes it
        assert theirs is not None
        assert set(theirs) == {"key", "ownerName", "leaseDuration", "recordVersionNumber"}
        assert (theirs["key"], theirs["leaseDuration"]) == ("shared", str(LEASE_MS))
        with pytest.raises(LockError, match="could not acquire the table lock") as failure:
            pyhudi.write(
                all_types_frame(spark, range(0, 2), 2, "p"),
                path,
                _op(options | IMPATIENT, "upsert"),
            )
        assert theirs["ownerName"] in str(failure.value)  # names Hudi's lock client as holder
        assert (_item(options) or {}).get("ownerName") == theirs["ownerName"]  # never taken
    finally:
        hudi_0_15.run(HUDI_RELEASES_THE_LOCK)
    assert _item(options) is None  # Hudi deletes its item on release
    pyhudi.write(all_types_frame(spark, range(0, 2), 3, "p"), path, _op(options, "upsert"))
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(3)] == ["p", "p", "a"]


def test_hudi_waits_for_the_dynamodb_lock_pyhudi_holds(spark, hudi_0_15, locked_table) -> None:  # type: ignore[no-untyped-def]
    path, options = locked_table
    before = completed_commits(path)
    with table_transaction(TableContext.open(path), options):
        ours = _item(options)
        assert ours is not None and ours["ownerName"].startswith("pyhudi-")
        with pytest.raises(JudgeError, match="Unable to acquire lock"):
            hudi_0_15.write(
                _s3a(path),
                all_types_frame(spark, range(0, 2), 2, "h"),
                _op(options | IMPATIENT, "upsert"),
            )
        assert (_item(options) or {}).get("ownerName") == ours["ownerName"]  # never taken
    assert _item(options) is None  # pyhudi deletes its item on release
    assert completed_commits(path) == before
    hudi_0_15.write(_s3a(path), all_types_frame(spark, range(0, 2), 3, "h"), _op(options, "upsert"))
    tags = _tags(spark, path)
    assert [tags[f"k{i:04d}"] for i in range(3)] == ["h", "h", "a"]


def test_pyhudi_and_hudi_write_at_once_under_the_dynamodb_lock(
    spark, hudi_0_15, locked_table
) -> None:  # type: ignore[no-untyped-def]
    path, options = locked_table
    # Disjoint partitions: new rows of one partition may go into its small files, a conflict.
    hudi_rows = all_types_frame(spark, range(100, 110), 2, "h").withColumn("part", F.lit("hudi"))
    hudi_0_15.write(_s3a(path), hudi_rows, _op(options, "upsert"), wait=False)
    try:
        for start in (200, 210):
            ours = all_types_frame(spark, range(start, start + 5), 2, "p")
            ours = ours.withColumn("part", F.lit("pyhudi"))
            pyhudi.write(ours, path, _op(options, "upsert"))
    finally:
        hudi_0_15.receive()
    assert len(completed_commits(path)) == 4
    tags = _tags(spark, path)
    assert {tags[f"k{i:04d}"] for i in range(100, 110)} == {"h"}
    assert {tags[f"k{i:04d}"] for i in (*range(200, 205), *range(210, 215))} == {"p"}
    assert _item(options) is None
    count = assert_readers_agree(
        spark, hudi_0_15, path, "OCC under the DynamoDB lock", only=("snapshot",)
    )
    assert count == 32
