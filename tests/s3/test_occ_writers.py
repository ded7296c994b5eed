"""Many writers, one table on S3: two real writer processes (each its own Spark, S3A and pyarrow)
upsert the same keys at once under OCC, once through Hudi 1.x's storage-based lock and once
through the DynamoDB lock (moto serves both). Every write that returned success is visible to
hudi-rs and pyhudi, every failure is a `WriteConflictError`, nothing is lost or duplicated."""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

import pyhudi
from pyhudi.config.concurrency import DYNAMODB_LOCK, STORAGE_BASED_LOCK
from tests.helpers.builders import trips_options
from tests.helpers.processes import (
    S3A_ENV,
    SparkProcess,
    StepResult,
    expected_rows,
    meet,
    row_spec,
    rows_frame,
)
from tests.process.checks import apply_writes, table_state, timeline_summary

pytestmark = [pytest.mark.process, pytest.mark.spark]

ROUNDS = 2  # upserts per writer and lock
SEED = row_spec(0, 90, tag=1)  # 30 keys in each of sf, chennai, sao_paulo
WRITERS = ("w0", "w1")
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
    "hoodie.datasource.write.operation": "upsert",
    "hoodie.write.lock.client.wait_time_ms_between_retry": "200",
}
LOCKS: dict[str, dict[str, str]] = {
    "storage": {
        "hoodie.write.lock.provider": STORAGE_BASED_LOCK,
        "hoodie.write.lock.storage.validity.timeout.secs": "10",
        "hoodie.write.lock.storage.renew.interval.secs": "1",
    },
    "dynamodb": {
        "hoodie.write.lock.provider": DYNAMODB_LOCK,
        "hoodie.write.lock.dynamodb.table": f"locks-{uuid.uuid4().hex[:8]}",
        "hoodie.write.lock.dynamodb.endpoint_url": os.environ["AWS_ENDPOINT_URL"],
        "hoodie.write.lock.wait_time_ms": "2000",
    },
}

Outcome = tuple[dict[str, Any], StepResult]


def _rows(w: int, k: int) -> dict[str, Any]:
    """Writer w's k-th upsert: every seed key (each pair of concurrent writes overlaps)."""
    return row_spec(0, 90, tag=10 + 10 * w + k)


@pytest.fixture(scope="module")
def outcomes(spark, s3_server, tmp_path_factory) -> dict[str, tuple[str, list[Outcome]]]:  # type: ignore[no-untyped-def]
    """Both processes take every lock in turn, starting each together: 2 upserts each."""
    import boto3

    bucket = f"occ-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=s3_server.url).create_bucket(Bucket=bucket)
    root = tmp_path_factory.mktemp("s3-occ")
    tables = {lock: f"s3://{bucket}/{lock}" for lock in LOCKS}
    options = {lock: {**trips_options(f"occ_{lock}"), **OCC, **LOCKS[lock]} for lock in LOCKS}
    for lock, table in tables.items():
        pyhudi.write(rows_frame(spark, SEED), table, options[lock])
    steps: dict[str, list[dict[str, Any]]] = {me: [] for me in WRITERS}
    for w, me in enumerate(WRITERS):
        for lock, table in tables.items():
            steps[me] += meet(root, lock, me, [p for p in WRITERS if p != me])
            steps[me] += [
                {"op": "write", "path": table, "options": options[lock], "rows": _rows(w, k)}
                for k in range(ROUNDS)
            ]
    processes = [SparkProcess(steps[me], root, me, {S3A_ENV: "1"}).start() for me in WRITERS]
    try:
        results = [p.wait(timeout_s=900) for p in processes]
    finally:
        for process in processes:
            process.kill()
    found = {}
    for index, (lock, table) in enumerate(tables.items()):
        found[lock] = (
            table,
            [
                (_rows(w, k), results[w][index * ROUNDS + k])
                for w in range(len(WRITERS))
                for k in range(ROUNDS)
            ],
        )
    return found


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_occ_writers_on_s3_lose_nothing_and_raise_every_conflict(spark, outcomes, lock) -> None:  # type: ignore[no-untyped-def]
    table, written = outcomes[lock]
    successes = [r for _, r in written if r.ok]
    failures = [r for _, r in written if not r.ok]
    assert successes, "no write committed"
    assert all(r.error == "WriteConflictError" for r in failures), failures
    assert len({r.instant for r in successes}) == len(successes)
    done = sorted((r.instant or "", spec) for spec, r in written if r.ok)
    expected = apply_writes(expected_rows(SEED), [expected_rows(spec) for _, spec in done])
    assert table_state(spark, table) == expected, timeline_summary(table)
