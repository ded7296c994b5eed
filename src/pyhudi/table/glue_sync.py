"""Hudi's AWS Glue Data Catalog sync (hudi-aws 0.15 `AwsGlueCatalogSyncTool` over
`AWSGlueCatalogSyncClient`), engine-free, through boto3 (the `glue` extra).

The tool is Hudi's Hive sync (`HiveSyncTool.syncHoodieTable`) with Glue calls in place of the
metastore's; the table it registers is the one Hudi's Hive sync registers (`MetastoreTable`):

| step        | Glue calls                      | what                                            |
|-------------|---------------------------------|-------------------------------------------------|
| database    | GetDatabase, CreateDatabase     | created when missing                            |
| first sync  | CreateTable                     | the spec; + `hudi.metadata-listing-enabled`,    |
|             |                                 | columns with comment `""`, `s3a://` as `s3://`  |
| new columns | UpdateTable                     | the table's columns only (no cascade)           |
| parameters  | UpdateTable                     | merged in when one differs                      |
| partitions  | GetPartitions, BatchCreate/     | the table's storage descriptor at the folder;   |
|             | Update (100) / Delete (25)      | events since `last_commit_time_sync`            |
| last sync   | UpdateTable                     | `last_commit_time_sync` = the latest commit     |

Every UpdateTable carries `SkipArchive` (`hoodie.datasource.meta.sync.glue.skip_table_archive`).
Region and endpoint are boto3's own (`AWS_REGION`, `AWS_ENDPOINT_URL_GLUE`, `AWS_ENDPOINT_URL`,
profiles) unless `hoodie.aws.glue.region` / `hoodie.aws.glue.endpoint` say otherwise; credentials
are `hoodie.aws.access.key` / `secret.key` / `session.token` when given, else boto3's chain. No
credential is ever put in a message.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pyhudi.config import concurrency as ckeys
from pyhudi.config import sync as skeys
from pyhudi.exceptions import ConfigError, HudiError, MissingDependencyError, SchemaMismatchError
from pyhudi.table.context import TableContext
from pyhudi.table.meta_sync import (
    MetastoreTable,
    PartitionEvent,
    PartitionEventType,
    latest_commit_time,
    partition_events,
)

log = logging.getLogger(__name__)

GLUE_EXTRA = "pip install 'pyhudi[glue]' (or pip install boto3)"
#: Athena's table parameter: list files through the metadata table.
METADATA_LISTING = "hudi.metadata-listing-enabled"
#: Glue's limits per batch call (Hudi's `MAX_PARTITIONS_PER_REQUEST` and its delete limit).
PARTITIONS_PER_CALL = 100
DELETES_PER_CALL = 25
#: The fields of a Glue `Table` that UpdateTable takes back, as Hudi passes them.
_TABLE_INPUT_FIELDS = ("Name", "TableType", "Parameters", "PartitionKeys", "StorageDescriptor")
_SPARK_SOURCE_PREFIX = "spark.sql.sources."


class GlueSyncError(HudiError):
    """A Glue call of the catalog sync failed (Hudi's `HoodieGlueSyncException`)."""


@dataclass(frozen=True)
class GlueSettings:
    """The Glue options of one sync."""

    database: str | None = None
    table: str | None = None
    region: str | None = None
    endpoint_url: str | None = None
    skip_archive: bool = True
    metadata_listing: bool = False
    recreate_on_error: bool = False
    credentials: tuple[str, str, str | None] | None = field(default=None, repr=False)

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> GlueSettings:
        credentials = ckeys.aws_credentials(options)
        return cls(
            database=skeys.GLUE_DATABASE_NAME.get(options),
            table=skeys.GLUE_TABLE_NAME.get(options),
            region=skeys.AWS_GLUE_REGION.get(options),
            endpoint_url=skeys.AWS_GLUE_ENDPOINT.get(options),
            skip_archive=bool(skeys.GLUE_SKIP_TABLE_ARCHIVE.get(options)),
            metadata_listing=bool(skeys.GLUE_METADATA_FILE_LISTING.get(options)),
            recreate_on_error=bool(skeys.GLUE_RECREATE_TABLE_ON_ERROR.get(options)),
            credentials=credentials,
        )


def boto3_module() -> Any:
    """boto3, or a `MissingDependencyError` naming the extra to install."""
    try:
        import boto3
    except ImportError as err:
        raise MissingDependencyError(
            f"{skeys.GLUE_SYNC_TOOL} (AWS Glue Data Catalog sync) needs boto3: {GLUE_EXTRA}"
        ) from err
    return boto3


def glue_client(settings: GlueSettings) -> Any:
    """A boto3 Glue client for `settings` (region, endpoint and credentials as boto3 finds them
    unless the options give them)."""
    boto3 = boto3_module()
    from botocore.exceptions import NoRegionError

    kwargs: dict[str, Any] = {}
    if settings.region:
        kwargs["region_name"] = settings.region
    if settings.endpoint_url:
        endpoint = settings.endpoint_url
        kwargs["endpoint_url"] = endpoint if "://" in endpoint else f"https://{endpoint}"
    if settings.credentials is not None:
        access, secret, token = settings.credentials
        kwargs.update(aws_access_key_id=access, aws_secret_access_key=secret)
        kwargs["aws_session_token"] = token
    try:
        return boto3.session.Session().client("glue", **kwargs)
    except NoRegionError as err:
        raise ConfigError(
            f"Glue sync needs an AWS region: set {skeys.AWS_GLUE_REGION.key} or AWS_REGION"
        ) from err


def s3_location(uri: str) -> str:
    """Hudi's `S3Utils.s3aToS3`: Glue (Athena) tables name S3 locations `s3://`."""
    return re.sub(r"(?i)^s3a://", "s3://", uri)


NOT_FOUND = "EntityNotFoundException"
ALREADY_EXISTS = "AlreadyExistsException"


def _call(what: str, call: Callable[..., Any], *tolerated: str, **kwargs: Any) -> Any:
    """`call(**kwargs)`, or None when Glue answers one of the `tolerated` error codes; any other
    failure is a `GlueSyncError` naming `what`."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return call(**kwargs)
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in tolerated:
            return None
        raise GlueSyncError(f"Glue sync: {what} failed: {err}") from err
    except BotoCoreError as err:
        raise GlueSyncError(f"Glue sync: {what} failed: {err}") from err


def _batches(items: Sequence[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def _failures(response: Mapping[str, Any], tolerated: str | None = None) -> list[Any]:
    """The entries of a batch call's `Errors` other than `tolerated` ones."""
    errors = response.get("Errors") or []
    return [e for e in errors if e.get("ErrorDetail", {}).get("ErrorCode") != tolerated]


class GlueCatalog:
    """Databases, tables and partitions of one Glue Data Catalog, as Hudi's Glue sync changes
    them."""

    def __init__(self, client: Any, settings: GlueSettings) -> None:
        self._client, self.settings = client, settings

    @classmethod
    def connect(cls, settings: GlueSettings) -> GlueCatalog:
        return cls(glue_client(settings), settings)

    # ---- databases and tables ----------------------------------------------------------------
    def ensure_database(self, database: str) -> None:
        glue = self._client
        if _call(f"GetDatabase {database}", glue.get_database, NOT_FOUND, Name=database):
            return
        description = f"Automatically created by pyhudi ({skeys.GLUE_SYNC_TOOL})"
        database_input = {"Name": database, "Description": description}
        # another writer may have created it meanwhile
        _call(
            f"CreateDatabase {database}",
            glue.create_database,
            ALREADY_EXISTS,
            DatabaseInput=database_input,
        )

    def get_table(self, database: str, name: str) -> dict[str, Any] | None:
        what = f"GetTable {database}.{name}"
        found = _call(what, self._client.get_table, NOT_FOUND, DatabaseName=database, Name=name)
        return dict(found["Table"]) if found else None

    def create_table(self, spec: MetastoreTable) -> None:
        now = datetime.now(timezone.utc)
        table_input = {
            "Name": spec.name,
            "TableType": spec.table_type,
            "Parameters": {**spec.parameters, METADATA_LISTING: self._metadata_listing},
            "PartitionKeys": _columns(spec.partition_keys),
            "StorageDescriptor": _storage_descriptor(spec),
            "LastAccessTime": now,
            "LastAnalyzedTime": now,
        }
        what = f"CreateTable {spec.database}.{spec.name}"
        create = self._client.create_table
        _call(what, create, ALREADY_EXISTS, DatabaseName=spec.database, TableInput=table_input)

    @property
    def _metadata_listing(self) -> str:
        return str(self.settings.metadata_listing).upper()

    def update_table(self, database: str, table: Mapping[str, Any], **changes: Any) -> None:
        """UpdateTable with `table` (as GetTable returned it) and `changes` to its fields."""
        now = datetime.now(timezone.utc)
        table_input = {k: table[k] for k in _TABLE_INPUT_FIELDS if k in table}
        table_input.update(changes, LastAccessTime=now, LastAnalyzedTime=now)
        _call(
            f"UpdateTable {database}.{table['Name']}",
            self._client.update_table,
            DatabaseName=database,
            TableInput=table_input,
            SkipArchive=self.settings.skip_archive,
        )

    def delete_table(self, database: str, name: str) -> None:
        what = f"DeleteTable {database}.{name}"
        _call(what, self._client.delete_table, DatabaseName=database, Name=name)

    # ---- partitions --------------------------------------------------------------------------
    def partitions(self, database: str, name: str) -> dict[tuple[str, ...], str]:
        """Partition values -> location, every page of GetPartitions."""
        paginator = self._client.get_paginator("get_partitions")
        pages = _call(
            f"GetPartitions {database}.{name}",
            lambda: list(paginator.paginate(DatabaseName=database, TableName=name)),
        )
        return {
            tuple(p["Values"]): p.get("StorageDescriptor", {}).get("Location", "")
            for page in pages
            for p in page["Partitions"]
        }

    def add_partitions(
        self, database: str, table: Mapping[str, Any], events: Sequence[PartitionEvent]
    ) -> None:
        name = table["Name"]
        for batch in _batches([_partition_input(table, e) for e in events], PARTITIONS_PER_CALL):
            response = _call(
                f"BatchCreatePartition {database}.{name}",
                self._client.batch_create_partition,
                DatabaseName=database,
                TableName=name,
                PartitionInputList=batch,
            )
            # Hudi's too: partitions another writer added meanwhile are fine
            if _failures(response, ALREADY_EXISTS):
                raise GlueSyncError(
                    f"Glue sync: adding partitions to {database}.{name} failed: "
                    f"{response['Errors']}"
                )

    def update_partitions(
        self, database: str, table: Mapping[str, Any], events: Sequence[PartitionEvent]
    ) -> None:
        name = table["Name"]
        entries = [
            {"PartitionValueList": list(e.values), "PartitionInput": _partition_input(table, e)}
            for e in events
        ]
        for batch in _batches(entries, PARTITIONS_PER_CALL):
            response = _call(
                f"BatchUpdatePartition {database}.{name}",
                self._client.batch_update_partition,
                DatabaseName=database,
                TableName=name,
                Entries=batch,
            )
            if _failures(response):
                raise GlueSyncError(
                    f"Glue sync: updating partitions of {database}.{name} "
                    f"failed: {response['Errors']}"
                )

    def drop_partitions(self, database: str, name: str, events: Sequence[PartitionEvent]) -> None:
        values = [{"Values": list(e.values)} for e in events]
        for batch in _batches(values, DELETES_PER_CALL):
            response = _call(
                f"BatchDeletePartition {database}.{name}",
                self._client.batch_delete_partition,
                DatabaseName=database,
                TableName=name,
                PartitionsToDelete=batch,
            )
            if _failures(response):
                raise GlueSyncError(
                    f"Glue sync: dropping partitions of {database}.{name} "
                    f"failed: {response['Errors']}"
                )


def _columns(columns: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """Glue columns as Hudi writes them: lower-case Hive types, an empty comment."""
    return [{"Name": name, "Type": hive_type.lower(), "Comment": ""} for name, hive_type in columns]


def _storage_descriptor(spec: MetastoreTable) -> dict[str, Any]:
    return {
        "Columns": _columns(spec.columns),
        "Location": s3_location(spec.location),
        "InputFormat": spec.input_format,
        "OutputFormat": spec.output_format,
        "SerdeInfo": {
            "SerializationLibrary": spec.serde,
            "Parameters": dict(spec.serde_properties),
        },
    }


def _partition_input(table: Mapping[str, Any], event: PartitionEvent) -> dict[str, Any]:
    """The table's storage descriptor at the partition's folder (Hudi copies it so)."""
    descriptor = {**table["StorageDescriptor"], "Location": event.location}
    return {"Values": list(event.values), "StorageDescriptor": descriptor}


# ---- the sync of one table (`HiveSyncTool.syncHoodieTable`) ------------------------------------
def sync_glue_table(
    catalog: GlueCatalog, ctx: TableContext, spec: MetastoreTable, extractor: str
) -> None:
    """Create or bring up to date the Glue table `spec` of the Hudi table `ctx`, its partitions
    and its `last_commit_time_sync`."""
    catalog.ensure_database(spec.database)
    existing = catalog.get_table(spec.database, spec.name)
    if existing is not None and not _same_partition_keys(existing, spec):
        if not catalog.settings.recreate_on_error:
            raise SchemaMismatchError(
                f"Glue table {spec.database}.{spec.name} has partition keys "
                f"{_key_names(existing.get('PartitionKeys', []))}, the Hudi table at {ctx.uri} "
                f"{[n for n, _ in spec.partition_keys]}: set "
                f"{skeys.GLUE_RECREATE_TABLE_ON_ERROR.key}=true to create it again"
            )
        log.warning(
            "re-creating Glue table %s.%s: its partition keys changed", spec.database, spec.name
        )
        catalog.delete_table(spec.database, spec.name)
        existing = None
    last_synced = None
    if existing is None:
        catalog.create_table(spec)
    else:
        last_synced = (existing.get("Parameters") or {}).get(skeys.LAST_COMMIT_TIME_SYNC)
        _sync_columns(catalog, existing, spec)
        _sync_parameters(catalog, spec)
    _sync_partitions(catalog, ctx, spec, extractor, last_synced)
    latest = latest_commit_time(ctx)
    if latest is not None:
        _update_parameters(catalog, spec, {skeys.LAST_COMMIT_TIME_SYNC: latest})


def _key_names(columns: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(c["Name"]).lower() for c in columns]


def _same_partition_keys(existing: Mapping[str, Any], spec: MetastoreTable) -> bool:
    return _key_names(existing.get("PartitionKeys", [])) == [
        n.lower() for n, _ in spec.partition_keys
    ]


def _typed(columns: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(str(c["Name"]).lower(), str(c["Type"]).lower()) for c in columns]


def _sync_columns(catalog: GlueCatalog, existing: Mapping[str, Any], spec: MetastoreTable) -> None:
    """`updateTableSchema`: the storage descriptor's columns replaced when they differ."""
    wanted = _columns(spec.columns)
    descriptor = existing.get("StorageDescriptor") or {}
    if _typed(descriptor.get("Columns", [])) == _typed(wanted):
        return
    log.info("Glue table %s.%s: columns changed", spec.database, spec.name)
    catalog.update_table(
        spec.database, existing, StorageDescriptor={**descriptor, "Columns": wanted}
    )


def _sync_parameters(catalog: GlueCatalog, spec: MetastoreTable) -> None:
    """`updateTableProperties`: Hudi's parameters merged in (stale Spark schema parts dropped)."""
    listing = str(catalog.settings.metadata_listing).upper()
    wanted = {**spec.parameters, METADATA_LISTING: listing}
    _update_parameters(catalog, spec, wanted)


def _update_parameters(
    catalog: GlueCatalog, spec: MetastoreTable, wanted: Mapping[str, str]
) -> None:
    table = catalog.get_table(spec.database, spec.name)
    if table is None:
        raise GlueSyncError(f"Glue sync: table {spec.database}.{spec.name} disappeared")
    current = dict(table.get("Parameters") or {})
    merged = {**current, **wanted}
    if any(k.startswith(_SPARK_SOURCE_PREFIX) for k in wanted):
        merged = {
            k: v for k, v in merged.items() if not k.startswith(_SPARK_SOURCE_PREFIX) or k in wanted
        }
    if merged != current:
        catalog.update_table(spec.database, table, Parameters=merged)


def _sync_partitions(
    catalog: GlueCatalog,
    ctx: TableContext,
    spec: MetastoreTable,
    extractor: str,
    last_synced: str | None,
) -> None:
    if not spec.partition_keys:
        return
    current = catalog.partitions(spec.database, spec.name)
    events = partition_events(ctx, extractor, current, last_synced)
    if not events:
        return
    table = catalog.get_table(spec.database, spec.name)
    if table is None:
        raise GlueSyncError(f"Glue sync: table {spec.database}.{spec.name} disappeared")
    by_kind = {kind: [e for e in events if e.kind is kind] for kind in PartitionEventType}
    catalog.add_partitions(spec.database, table, by_kind[PartitionEventType.ADD])
    catalog.update_partitions(spec.database, table, by_kind[PartitionEventType.UPDATE])
    catalog.drop_partitions(spec.database, spec.name, by_kind[PartitionEventType.DROP])
