"""hudi-aws's `DynamoDBBasedLockProvider`: the table lock as one item of a DynamoDB table, kept
the way AWS's `dynamodb-lock-client` (which Hudi uses) keeps it, so pyhudi and Hudi writers of one
table exclude each other.

| what      | value                                                                              |
|-----------|------------------------------------------------------------------------------------|
| table     | `hoodie.write.lock.dynamodb.table`, hash key `key` (string); created when missing,  |
|           | `PAY_PER_REQUEST` unless `billing_mode` says `PROVISIONED`                           |
| item      | `key` = the partition key (default: the Hudi table's name), `ownerName`,            |
|           | `leaseDuration` (ms, as a string), `recordVersionNumber` (a UUID per write)         |
| lease     | `hoodie.write.lock.wait_time_ms` (Hudi's default 60 s); the holder rewrites         |
|           | `recordVersionNumber` every third of it (a heartbeat)                              |
| take      | no item: put it if still absent; an item with `isReleased`: put it if its version   |
|           | is still the one read; a held item: wait, and put it over the holder's only once   |
|           | its version stayed the same for a whole lease on the waiter's clock                |
| release   | delete the item if its owner and version are still ours                            |

A lease is judged by how long its version has not changed, never by comparing clocks, so hosts
with skewed clocks share the lock safely. A holder killed without releasing blocks the table for
one lease. A failed condition means another writer won; the lock client treats it as a lost race
and keeps trying until the wait is over, and so does this provider.

boto3 (the `aws` extra) talks to DynamoDB; credentials are `hoodie.aws.access.key`,
`hoodie.aws.secret.key` and `hoodie.aws.session.token` when given, else boto3's default chain
(environment, profile, instance role), as Hudi's. No credential is ever put in a message.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyhudi.config import concurrency as ckeys
from pyhudi.config.write import TABLE_NAME
from pyhudi.exceptions import ConfigError, LockError
from pyhudi.table.lock.lease import new_owner_id

log = logging.getLogger(__name__)

#: The hash key attribute of the lock table (Hudi's `DYNAMODB_ATTRIBUTE_NAME`).
KEY = "key"
OWNER = "ownerName"
LEASE = "leaseDuration"
VERSION = "recordVersionNumber"
RELEASED = "isReleased"
#: The lock client's pause between two looks at a held lock (its `DEFAULT_BUFFER_MS`).
REFRESH_MS = 1_000
#: How often a table pyhudi created is asked whether it is active.
TABLE_POLL_S = 0.5


@dataclass(frozen=True)
class DynamoDBLockSettings:
    """The `hoodie.write.lock.dynamodb.*` and `hoodie.aws.*` options of one writer."""

    table: str
    partition_key: str | None
    region: str
    endpoint_url: str | None = None
    billing_mode: str = "PAY_PER_REQUEST"
    read_capacity: int = 20
    write_capacity: int = 10
    creation_timeout_ms: int = 600_000
    credentials: tuple[str, str, str | None] | None = field(default=None, repr=False)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> DynamoDBLockSettings:
        table = ckeys.DYNAMODB_TABLE.get(options)
        if not table:
            raise ConfigError(
                f"{ckeys.DYNAMODB_LOCK} needs {ckeys.DYNAMODB_TABLE.key}: the DynamoDB table "
                "that holds the locks (created when missing)"
            )
        credentials = ckeys.aws_credentials(options)
        settings = cls(
            table=table,
            partition_key=ckeys.DYNAMODB_PARTITION_KEY.get(options) or TABLE_NAME.get(options),
            region=ckeys.DYNAMODB_REGION.get(options)
            or os.environ.get("AWS_REGION")
            or "us-east-1",
            endpoint_url=ckeys.DYNAMODB_ENDPOINT_URL.get(options),
            billing_mode=ckeys.DYNAMODB_BILLING_MODE.get(options),
            read_capacity=ckeys.DYNAMODB_READ_CAPACITY.get(options),
            write_capacity=ckeys.DYNAMODB_WRITE_CAPACITY.get(options),
            creation_timeout_ms=ckeys.DYNAMODB_TABLE_CREATION_TIMEOUT_MS.get(options),
            credentials=credentials,
        )
        _client_module()  # boto3 missing fails at configuration, before anything is written
        return settings

    def for_table(self, table_name: str) -> DynamoDBLockSettings:
        """These settings, the partition key defaulting to the Hudi table's name."""
        if self.partition_key:
            return self
        return dataclasses.replace(self, partition_key=table_name)


def _client_module() -> Any:
    try:
        import boto3
    except ImportError as err:
        raise ConfigError(f"{ckeys.DYNAMODB_LOCK} needs boto3: pip install 'pyhudi[aws]'") from err
    return boto3


def _error_code(err: Exception) -> str | None:
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code is not None else None
    return None


def _is_service_or_network_error(err: Exception) -> bool:
    from botocore.exceptions import BotoCoreError, ClientError

    return isinstance(err, (BotoCoreError, ClientError))


@dataclass(frozen=True)
class _Seen:
    """A held lock as a waiter saw it: its version, when it was first seen so, its lease."""

    version: str
    since: float
    lease_ms: int
    owner: str


class DynamoDBBasedLockProvider:
    """One writer's handle on the lock item (the lock manager makes one per transaction).
    `try_lock` starts a daemon thread sending heartbeats; `unlock` stops it and deletes the item,
    raising `LockError` when the lock had been taken over meanwhile."""

    def __init__(self, settings: DynamoDBLockSettings, lease_ms: int) -> None:
        if not settings.partition_key:
            raise ConfigError(
                f"{ckeys.DYNAMODB_LOCK} needs {ckeys.DYNAMODB_PARTITION_KEY.key} (or the table "
                f"name, {TABLE_NAME.key}, which it defaults to)"
            )
        if lease_ms < 3:
            raise ConfigError(
                f"{ckeys.LOCK_WAIT_TIME_MS.key} is the DynamoDB lock's lease and must be at least "
                f"3 ms, got {lease_ms}"
            )
        self.settings = settings
        self.key = settings.partition_key
        self.lease_ms = lease_ms
        self.owner = new_owner_id()
        self.current_owner = ""
        self._client: Any = None
        self._version: str | None = None
        self._renewed_at = 0.0
        self._lost_to: str | None = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @property
    def lock_uri(self) -> str:
        where = self.settings.endpoint_url or self.settings.region
        return f"dynamodb://{self.settings.table}/{self.key} ({where})"

    # ---- the client and the table ------------------------------------------------------------
    def _dynamodb(self) -> Any:
        if self._client is None:
            boto3 = _client_module()
            kwargs: dict[str, Any] = {"region_name": self.settings.region}
            endpoint = self.settings.endpoint_url
            if endpoint:
                kwargs["endpoint_url"] = endpoint if "://" in endpoint else f"https://{endpoint}"
            if self.settings.credentials is not None:
                access, secret, token = self.settings.credentials
                kwargs.update(
                    aws_access_key_id=access, aws_secret_access_key=secret, aws_session_token=token
                )
            client = boto3.session.Session().client("dynamodb", **kwargs)
            self._ensure_table(client)
            self._client = client
        return self._client

    def _ensure_table(self, client: Any) -> None:
        table = self.settings.table
        try:
            status = client.describe_table(TableName=table)["Table"]["TableStatus"]
        except client.exceptions.ResourceNotFoundException:
            status = None
        if status in ("ACTIVE", "UPDATING"):
            return
        if status is None:
            request: dict[str, Any] = {
                "TableName": table,
                "KeySchema": [{"AttributeName": KEY, "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": KEY, "AttributeType": "S"}],
                "BillingMode": self.settings.billing_mode,
            }
            if self.settings.billing_mode == "PROVISIONED":
                request["ProvisionedThroughput"] = {
                    "ReadCapacityUnits": self.settings.read_capacity,
                    "WriteCapacityUnits": self.settings.write_capacity,
                }
            try:
                client.create_table(**request)
                log.info("created the DynamoDB lock table %s", table)
            except client.exceptions.ResourceInUseException:
                pass  # another writer created it at the same moment
        deadline = time.monotonic() + self.settings.creation_timeout_ms / 1000
        while client.describe_table(TableName=table)["Table"]["TableStatus"] != "ACTIVE":
            if time.monotonic() > deadline:
                raise LockError(
                    f"the DynamoDB lock table {table} did not become active within "
                    f"{self.settings.creation_timeout_ms} ms "
                    f"({ckeys.DYNAMODB_TABLE_CREATION_TIMEOUT_MS.key})"
                )
            time.sleep(TABLE_POLL_S)

    # ---- taking ------------------------------------------------------------------------------
    def try_lock(self, timeout_ms: int) -> bool:
        """Try for `timeout_ms`, and one lease longer when the lock is held (the holder may be
        dead: its lease must be seen unrenewed for that long before the lock is taken over)."""
        started = time.monotonic()
        budget_s = timeout_ms / 1000
        waited_a_lease = False
        seen: _Seen | None = None
        while True:
            try:
                taken, seen, extend = self._attempt(seen)
                if taken:
                    return True
                if extend and not waited_a_lease:
                    waited_a_lease = True
                    budget_s += extend / 1000
            except Exception as err:
                if not _is_service_or_network_error(err):
                    raise
                if _error_code(err) == "ConditionalCheckFailedException":
                    self.current_owner = "another writer that took it at the same moment"
                else:
                    self.current_owner = f"unknown: DynamoDB failed ({_brief(err)})"
                    log.warning("taking the lock %s failed: %s", self.lock_uri, _brief(err))
            if time.monotonic() - started > budget_s:
                return False
            time.sleep(REFRESH_MS / 1000)

    def _attempt(self, seen: _Seen | None) -> tuple[bool, _Seen | None, int]:
        """(taken, the held lock being watched, a lease to add to the wait once)."""
        client = self._dynamodb()
        item = client.get_item(
            TableName=self.settings.table, Key={KEY: {"S": self.key}}, ConsistentRead=True
        ).get("Item")
        if item is None:
            self._put(client, "attribute_not_exists(#pk)", {}, {})
            return True, None, 0
        version = item.get(VERSION, {}).get("S", "")
        if RELEASED in item:
            self._put(
                client,
                "attribute_exists(#pk) AND #rvn = :rvn AND #ir = :ir",
                {"#rvn": VERSION, "#ir": RELEASED},
                {":rvn": {"S": version}, ":ir": item[RELEASED]},
            )
            return True, None, 0
        lease_ms = _lease_of(item)
        owner = item.get(OWNER, {}).get("S", "unknown owner")
        self.current_owner = f"{owner} (lease {lease_ms} ms)"
        if seen is None or seen.version != version:
            return False, _Seen(version, time.monotonic(), lease_ms, owner), lease_ms
        if (time.monotonic() - seen.since) * 1000 > seen.lease_ms:
            log.warning(
                "taking over the lock %s from %s: its lease of %d ms went unrenewed",
                self.lock_uri,
                owner,
                seen.lease_ms,
            )
            self._put(
                client,
                "attribute_exists(#pk) AND #rvn = :rvn",
                {"#rvn": VERSION},
                {":rvn": {"S": version}},
            )
            return True, None, 0
        return False, seen, 0

    def _put(
        self,
        client: Any,
        condition: str,
        names: dict[str, str],
        values: dict[str, Any],
    ) -> None:
        version = str(uuid.uuid4())
        request: dict[str, Any] = {
            "TableName": self.settings.table,
            "Item": {
                KEY: {"S": self.key},
                OWNER: {"S": self.owner},
                LEASE: {"S": str(self.lease_ms)},
                VERSION: {"S": version},
            },
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#pk": KEY, **names},
        }
        if values:
            request["ExpressionAttributeValues"] = values
        client.put_item(**request)
        with self._mutex:
            self._version, self._renewed_at, self._lost_to = version, time.monotonic(), None
        self._start_heartbeat()

    # ---- holding -----------------------------------------------------------------------------
    def _start_heartbeat(self) -> None:
        self._stop.set()
        self._stop = threading.Event()
        self._beat = threading.Thread(
            target=self._heartbeat_loop,
            args=(threading.current_thread(), self._stop),
            name="pyhudi-dynamodb-lock-heartbeat",
            daemon=True,
        )
        self._beat.start()

    def _heartbeat_loop(self, holder: threading.Thread, stop: threading.Event) -> None:
        while not stop.wait(self.lease_ms / 3000):
            if not holder.is_alive():
                return  # a lease outliving its thread lapses by itself
            with self._mutex:
                if stop.is_set() or not self._heartbeat():
                    return

    def _heartbeat(self) -> bool:
        """One heartbeat; False when there is nothing left to renew (lost or released)."""
        if self._version is None:
            return False
        new_version = str(uuid.uuid4())
        try:
            self._dynamodb().update_item(
                TableName=self.settings.table,
                Key={KEY: {"S": self.key}},
                UpdateExpression="SET #ld = :ld, #rvn = :newRvn",
                ConditionExpression="attribute_exists(#pk) AND #rvn = :rvn AND #on = :on",
                ExpressionAttributeNames={
                    "#pk": KEY,
                    "#ld": LEASE,
                    "#rvn": VERSION,
                    "#on": OWNER,
                },
                ExpressionAttributeValues={
                    ":ld": {"S": str(self.lease_ms)},
                    ":newRvn": {"S": new_version},
                    ":rvn": {"S": self._version},
                    ":on": {"S": self.owner},
                },
            )
        except Exception as err:
            if not _is_service_or_network_error(err):
                raise
            if _error_code(err) == "ConditionalCheckFailedException":
                return self._lose()
            if (time.monotonic() - self._renewed_at) * 1000 > self.lease_ms:
                return self._lose()  # unrenewed for a lease: others may have taken it over
            log.warning("heartbeat of the lock %s failed, retrying: %s", self.lock_uri, _brief(err))
            return True
        self._version, self._renewed_at = new_version, time.monotonic()
        return True

    def _lose(self) -> bool:
        self._lost_to = self._holder_now()
        log.error("lost the lock %s to %s", self.lock_uri, self._lost_to)
        self._version = None
        return False

    # ---- releasing ---------------------------------------------------------------------------
    def unlock(self) -> None:
        """Stop the heartbeats and delete the item if it is still ours."""
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None
        with self._mutex:
            lost_to, self._lost_to = self._lost_to, None
            if lost_to is not None:
                raise self._lost_error(lost_to)
            version, self._version = self._version, None
            if version is None:
                return
            try:
                self._dynamodb().delete_item(
                    TableName=self.settings.table,
                    Key={KEY: {"S": self.key}},
                    ConditionExpression="attribute_exists(#pk) AND #rvn = :rvn AND #on = :on",
                    ExpressionAttributeNames={"#pk": KEY, "#rvn": VERSION, "#on": OWNER},
                    ExpressionAttributeValues={":rvn": {"S": version}, ":on": {"S": self.owner}},
                )
            except Exception as err:
                if not _is_service_or_network_error(err):
                    raise
                if _error_code(err) == "ConditionalCheckFailedException":
                    raise self._lost_error(self._holder_now()) from err
                raise LockError(
                    f"could not release the table lock {self.lock_uri}: {_brief(err)}; other "
                    f"writers take it over once its lease ({self.lease_ms} ms) went unrenewed"
                ) from err

    def _holder_now(self) -> str:
        try:
            item = (
                self._dynamodb()
                .get_item(
                    TableName=self.settings.table, Key={KEY: {"S": self.key}}, ConsistentRead=True
                )
                .get("Item")
            )
        except Exception as err:
            if not _is_service_or_network_error(err):
                raise
            return "another writer"
        if item is None:
            return "nobody"
        return item.get(OWNER, {}).get("S", "unknown owner")

    def _lost_error(self, holder: str) -> LockError:
        return LockError(
            f"lost the table lock {self.lock_uri} while holding it: its heartbeats (every "
            f"{self.lease_ms // 3} ms, lease {self.lease_ms} ms) failed and now {holder} has it; "
            "what was done under the lock may have overlapped with them"
        )


def _lease_of(item: Mapping[str, Any]) -> int:
    try:
        return int(item.get(LEASE, {}).get("S", "0"))
    except ValueError:
        return 0


def _brief(err: Exception) -> str:
    """The error's class and message (botocore's messages name no credential)."""
    return f"{type(err).__name__}: {err}"
