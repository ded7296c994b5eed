"""Concurrency options (`HoodieWriteConfig` concurrency mode, `HoodieLockConfig`, `LockConfiguration`).

Two writers (or a writer and a table service job) may work on one table only under optimistic
concurrency control: each takes the table lock around its conflict check and commit. Under OCC,
failed writes are rolled back lazily (by the cleaner, once their heartbeat expired), as in Hudi.

>>> concurrency_mode({"hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL"})
<ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL: 'optimistic_concurrency_control'>
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from pyhudi.config.options import choice, integer, string
from pyhudi.config.write import FAILED_WRITES_CLEANER_POLICY
from pyhudi.exceptions import ConfigError


class FailedWritesPolicy(str, Enum):
    """`HoodieFailedWritesCleaningPolicy`: when failed writes are rolled back."""

    EAGER = "EAGER"  # by the next writer, before it writes
    LAZY = "LAZY"  # by the cleaner, once the writer's heartbeat expired (multi-writer)
    NEVER = "NEVER"


class ConcurrencyMode(str, Enum):
    """`WriteConcurrencyMode`; the value is Hudi's (lower-case) option spelling."""

    SINGLE_WRITER = "single_writer"
    OPTIMISTIC_CONCURRENCY_CONTROL = "optimistic_concurrency_control"

    @property
    def supports_multi_writer(self) -> bool:
        return self is ConcurrencyMode.OPTIMISTIC_CONCURRENCY_CONTROL


HEARTBEAT_INTERVAL_MS = integer(
    "hoodie.client.heartbeat.interval_in_ms",
    60_000,
    "How often a writer refreshes `.hoodie/.heartbeat/<instant>`.",
)
HEARTBEAT_TOLERABLE_MISSES = integer(
    "hoodie.client.heartbeat.tolerable.misses",
    2,
    "Missed heartbeats after which a pending write counts as failed: EAGER rollback skips it "
    "until then, LAZY cleaning rolls it back after.",
)
WAIT_FOR_ACTIVE_WRITER_MS = integer(
    "pyhudi.write.wait.for.active.writer.ms",
    None,
    "Single-writer mode: how long a write (or a compaction/clustering execution) waits for a "
    "pending one whose heartbeat is fresh and whose writer may be alive (on another host, a "
    "writer that records no owner such as Apache Hudi, or a live process) to finish or its "
    "heartbeat to expire, then rolls that write back; past the wait it fails with "
    "WriteConflictError (0: at once). Default: the heartbeat expiry (interval x tolerable "
    "misses). A pending write whose process died on this machine is rolled back without waiting.",
)

IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
FILE_SYSTEM_LOCK = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
#: Hudi 1.x's lease lock (RFC-91): one JSON object taken, renewed and released by conditional writes.
STORAGE_BASED_LOCK = "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider"
#: pyhudi's earlier name of the storage-based lock: the same lock file and format as Hudi's, with
#: pyhudi's own timing key (`hoodie.write.lock.heartbeat_interval_ms`) still honoured.
STORAGE_LOCK = "pyhudi.StorageBasedLockProvider"
#: hudi-aws's lock: one item of a DynamoDB table (AWS's `dynamodb-lock-client` layout).
DYNAMODB_LOCK = "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
#: Hudi's default provider (ZooKeeper): not available in pyhudi.
ZOOKEEPER_LOCK = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
SIMPLE_CONFLICT_STRATEGY = (
    "org.apache.hudi.client.transaction.SimpleConcurrentFileWritesConflictResolutionStrategy"
)
BUCKET_CONFLICT_STRATEGY = (
    "org.apache.hudi.client.transaction.BucketIndexConcurrentFileWritesConflictResolutionStrategy"
)

CONCURRENCY_MODE = choice(
    "hoodie.write.concurrency.mode",
    ConcurrencyMode.SINGLE_WRITER.value,
    tuple(m.value for m in ConcurrencyMode),
    "single_writer (Hudi's default: one writer, EAGER rollback of failed writes) or "
    "optimistic_concurrency_control (many writers, a table lock around conflict check + commit).",
    upper=False,
)
LOCK_PROVIDER = string(
    "hoodie.write.lock.provider",
    None,
    f"Lock provider class under OCC: {IN_PROCESS_LOCK} (writers in one process), "
    f"{FILE_SYSTEM_LOCK} (Hudi's lock file on a shared file system, shared with JVM writers) or "
    f"{STORAGE_BASED_LOCK} (Hudi 1.x's lease in `.hoodie/.locks/table_lock.json`, taken and "
    "renewed by conditional writes: object stores and local disks; it expires when its holder "
    f"dies), {DYNAMODB_LOCK} (an item of a DynamoDB table, as hudi-aws keeps it; needs boto3, "
    f"the `aws` extra). {STORAGE_LOCK} is pyhudi's earlier name of the storage-based lock.",
)
CONFLICT_RESOLUTION_STRATEGY = string(
    "hoodie.write.lock.conflict.resolution.strategy",
    None,
    "Conflict resolution: Simple (file groups) or, inferred for the bucket index, BucketIndex "
    "(buckets) concurrent file writes strategy.",
)
LOCK_WAIT_TIME_MS = integer(
    "hoodie.write.lock.wait_time_ms",
    60_000,
    "How long one lock attempt of the in-process and storage providers waits.",
)
LOCK_NUM_RETRIES = integer(
    "hoodie.write.lock.num_retries", 15, "Provider-level retries of one lock attempt."
)
LOCK_RETRY_WAIT_MS = integer(
    "hoodie.write.lock.wait_time_ms_between_retry",
    1_000,
    "Wait between provider-level retries (and the storage lock's polling interval).",
)
LOCK_CLIENT_NUM_RETRIES = integer(
    "hoodie.write.lock.client.num_retries",
    50,
    "Times the lock manager retries a failed attempt before giving up.",
)
LOCK_CLIENT_RETRY_WAIT_MS = integer(
    "hoodie.write.lock.client.wait_time_ms_between_retry",
    5_000,
    "Wait of the lock manager between failed attempts.",
)
FILESYSTEM_LOCK_PATH = string(
    "hoodie.write.lock.filesystem.path",
    None,
    "Folder of FileSystemBasedLockProvider's `lock` file (default: the table's `.hoodie`).",
)
FILESYSTEM_LOCK_EXPIRE = integer(
    "hoodie.write.lock.filesystem.expire",
    0,
    "FileSystemBasedLockProvider: minutes after which a lock file counts as abandoned (0: never).",
)
LOCK_HEARTBEAT_INTERVAL_MS = integer(
    "hoodie.write.lock.heartbeat_interval_ms",
    60_000,
    f"{STORAGE_LOCK} only, when set and neither hoodie.write.lock.storage.* key is: the holder "
    "renews its lease this often and each renewal lasts two intervals (pyhudi's earlier timing).",
)
STORAGE_LOCK_VALIDITY_S = integer(
    "hoodie.write.lock.storage.validity.timeout.secs",
    300,
    f"{STORAGE_BASED_LOCK}: seconds each acquisition or renewal keeps the lease valid; a holder "
    "that stops renewing (killed) blocks the table this long (plus 0.5 s for clock drift). At "
    "least 10 and at least 10 renew intervals, as Hudi checks.",
)
STORAGE_LOCK_RENEW_INTERVAL_S = integer(
    "hoodie.write.lock.storage.renew.interval.secs",
    30,
    f"{STORAGE_BASED_LOCK}: seconds between the holder's renewals of its lease (at least 1).",
    "hoodie.write.lock.storage.heartbeat.poll.secs",
)

KNOWN_LOCK_PROVIDERS = (
    IN_PROCESS_LOCK,
    FILE_SYSTEM_LOCK,
    STORAGE_BASED_LOCK,
    STORAGE_LOCK,
    DYNAMODB_LOCK,
)
#: The two names of the storage-based lock.
STORAGE_LOCKS = (STORAGE_BASED_LOCK, STORAGE_LOCK)
KNOWN_CONFLICT_STRATEGIES = (SIMPLE_CONFLICT_STRATEGY, BUCKET_CONFLICT_STRATEGY)


def concurrency_mode(options: Mapping[str, str]) -> ConcurrencyMode:
    return ConcurrencyMode(CONCURRENCY_MODE.get(options))


def failed_writes_policy(options: Mapping[str, str]) -> FailedWritesPolicy:
    """The failed-writes policy in effect: OCC forces LAZY (Hudi's `HoodieWriteConfig` does too)."""
    if concurrency_mode(options).supports_multi_writer:
        return FailedWritesPolicy.LAZY
    return FailedWritesPolicy(FAILED_WRITES_CLEANER_POLICY.get(options))


def heartbeat_interval_ms(options: Mapping[str, str]) -> int:
    return HEARTBEAT_INTERVAL_MS.get(options)


def heartbeat_expiry_ms(options: Mapping[str, str]) -> int:
    """A heartbeat older than this means its writer is gone (interval x tolerable misses)."""
    return HEARTBEAT_INTERVAL_MS.get(options) * HEARTBEAT_TOLERABLE_MISSES.get(options)


def wait_for_active_writer_ms(options: Mapping[str, str]) -> int:
    """How long a single writer waits for a live-looking one (default: the heartbeat expiry)."""
    wait_ms = WAIT_FOR_ACTIVE_WRITER_MS.get(options)
    return heartbeat_expiry_ms(options) if wait_ms is None else max(0, wait_ms)


DYNAMODB_TABLE = string(
    "hoodie.write.lock.dynamodb.table",
    None,
    f"{DYNAMODB_LOCK}: the DynamoDB table holding the locks (required; created when missing, "
    "with one string hash key `key`).",
)
DYNAMODB_PARTITION_KEY = string(
    "hoodie.write.lock.dynamodb.partition_key",
    None,
    f"{DYNAMODB_LOCK}: the lock's item key; every writer of one Hudi table must use the same "
    "one. Default: the table name (`hoodie.table.name`), as Hudi infers it.",
)
DYNAMODB_REGION = string(
    "hoodie.write.lock.dynamodb.region",
    None,
    f"{DYNAMODB_LOCK}: the AWS region of the lock table. Default: `AWS_REGION`, else us-east-1.",
)
DYNAMODB_ENDPOINT_URL = string(
    "hoodie.write.lock.dynamodb.endpoint_url",
    None,
    f"{DYNAMODB_LOCK}: the DynamoDB endpoint (a local DynamoDB or a VPC endpoint). Default: the "
    "region's public endpoint.",
)
DYNAMODB_BILLING_MODE = choice(
    "hoodie.write.lock.dynamodb.billing_mode",
    "PAY_PER_REQUEST",
    ("PAY_PER_REQUEST", "PROVISIONED"),
    f"{DYNAMODB_LOCK}: billing mode of a lock table pyhudi creates.",
)
DYNAMODB_READ_CAPACITY = integer(
    "hoodie.write.lock.dynamodb.read_capacity",
    20,
    f"{DYNAMODB_LOCK}: read capacity units of a PROVISIONED lock table pyhudi creates.",
)
DYNAMODB_WRITE_CAPACITY = integer(
    "hoodie.write.lock.dynamodb.write_capacity",
    10,
    f"{DYNAMODB_LOCK}: write capacity units of a PROVISIONED lock table pyhudi creates.",
)
DYNAMODB_TABLE_CREATION_TIMEOUT_MS = integer(
    "hoodie.write.lock.dynamodb.table_creation_timeout",
    600_000,
    f"{DYNAMODB_LOCK}: how long to wait for a lock table pyhudi created to become active (ms).",
)
AWS_ACCESS_KEY = string(
    "hoodie.aws.access.key",
    None,
    "AWS access key for the AWS services Hudi calls itself (the DynamoDB lock, the Glue sync); "
    "default: the AWS SDK's chain (environment, profile, instance role). Never printed.",
)
AWS_SECRET_KEY = string(
    "hoodie.aws.secret.key",
    None,
    "AWS secret key going with hoodie.aws.access.key. Never printed.",
)
AWS_SESSION_TOKEN = string(
    "hoodie.aws.session.token",
    None,
    "AWS session token going with hoodie.aws.access.key. Never printed.",
)


def aws_credentials(options: Mapping[str, str]) -> tuple[str, str, str | None] | None:
    """The `hoodie.aws.*` credentials (access key, secret key, session token), or None for the
    AWS SDK's own chain; an access key without its secret (or the reverse) is a ConfigError."""
    access, secret = AWS_ACCESS_KEY.get(options), AWS_SECRET_KEY.get(options)
    if (access is None) != (secret is None):
        raise ConfigError(
            f"{AWS_ACCESS_KEY.key} and {AWS_SECRET_KEY.key} go together: give both or neither"
        )
    if access is None or secret is None:
        return None
    return access, secret, AWS_SESSION_TOKEN.get(options)
