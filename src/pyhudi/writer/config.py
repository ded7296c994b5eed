"""A write's resolved configuration: user options, checked against the table's own config."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyhudi.codec.avro_names import check_table_name
from pyhudi.config import archival as archival_keys
from pyhudi.config import clustering as clustering_keys
from pyhudi.config import index as index_keys
from pyhudi.config import keygen as keygen_keys
from pyhudi.config import merge as merge_keys
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.config.index import IndexType
from pyhudi.config.unknown import check_write_options
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.keygen.spec import KeyGenKind, KeyGenSpec, kind_of_class, spec_from_options
from pyhudi.merge.config import (
    DEFAULT_PAYLOAD,
    OVERWRITE_WITH_LATEST,
    PARTIAL_UPDATE_PAYLOAD,
    MergeMode,
    merge_mode_of,
    resolve_merge_config,
)
from pyhudi.model.enums import TableType, WriteOperationType
from pyhudi.table.config import TableConfig
from pyhudi.table.write_defaults import with_table_defaults

log = logging.getLogger(__name__)

_OPERATION_TYPES = {
    "upsert": WriteOperationType.UPSERT,
    "insert": WriteOperationType.INSERT,
    "bulk_insert": WriteOperationType.BULK_INSERT,
    "delete": WriteOperationType.DELETE,
    "insert_overwrite": WriteOperationType.INSERT_OVERWRITE,
    "insert_overwrite_table": WriteOperationType.INSERT_OVERWRITE_TABLE,
    "delete_partition": WriteOperationType.DELETE_PARTITION,
    "bootstrap": WriteOperationType.BOOTSTRAP,
    "compact": WriteOperationType.COMPACT,
    "log_compact": WriteOperationType.LOG_COMPACT,
}


@dataclass(frozen=True)
class SizingConfig:
    max_file_size_bytes: int
    small_file_limit_bytes: int
    insert_split_size: int
    auto_split: bool
    record_size_estimate_bytes: int
    compression: str
    row_group_size_bytes: int
    page_size_bytes: int
    dictionary: bool
    #: Merge-on-read: small file groups per partition that may take inserts (smallest first).
    small_file_candidates: int = 1


@dataclass(frozen=True)
class BloomConfig:
    enabled: bool
    num_entries: int
    fpp: float
    type_code: str
    max_entries: int


@dataclass(frozen=True)
class WriteConfig:
    options: Mapping[str, str]
    operation: WriteOperationType
    table_type: TableType
    table_name: str
    keygen: KeyGenSpec
    precombine_field: str | None
    merge_mode: MergeMode
    payload_class: str
    index_type: IndexType
    sizing: SizingConfig
    bloom: BloomConfig
    populate_meta_fields: bool
    combine_before_write: bool
    drop_duplicates: bool
    partitions_to_delete: tuple[str, ...] | None
    parallelism: int
    reconcile_schema: bool
    extra_metadata: Mapping[str, str] = field(default_factory=dict)
    #: The table version written: the table's own, or `hoodie.write.table.version` for a new one.
    table_version: int = write_keys.WRITTEN_TABLE_VERSION

    @property
    def is_merge_on_read(self) -> bool:
        return self.table_type is TableType.MERGE_ON_READ

    @property
    def ordering_field(self) -> str | None:
        return write_keys.PAYLOAD_ORDERING_FIELD.get(self.options) or self.precombine_field

    @property
    def is_global_index(self) -> bool:
        return self.index_type.is_global

    def table_properties(self) -> dict[str, str]:
        """`hoodie.properties` entries for a table this write creates (§1.2, §9), at its version."""
        o = self.options
        props = {
            table_keys.NAME.key: self.table_name,
            table_keys.TYPE.key: self.table_type.value,
            **self._layout_properties(),
            table_keys.BASE_FILE_FORMAT.key: "PARQUET",
            table_keys.RECORD_KEY_FIELDS.key: ",".join(self.keygen.record_key_fields),
            **self._merge_properties(),
            table_keys.HIVE_STYLE_PARTITIONING.key: _bool(self.keygen.hive_style),
            table_keys.URL_ENCODE_PARTITIONING.key: _bool(self.keygen.url_encode),
            table_keys.DROP_PARTITION_COLUMNS.key: "false",
            table_keys.POPULATE_META_FIELDS.key: _bool(self.populate_meta_fields),
            table_keys.TIMELINE_TIMEZONE.key: (
                write_keys.TIMELINE_TIMEZONE.get(o)
                if write_keys.TIMELINE_TIMEZONE.is_set(o)
                else write_keys.NEW_TABLE_TIMEZONE
            ),
            table_keys.PARTITION_METAFILE_USE_BASE_FORMAT.key: "false",
            table_keys.CDC_ENABLED.key: _bool(table_keys.CDC_ENABLED.get(o)),
        }
        if table_keys.CDC_ENABLED.get(o):
            mode = table_keys.CDC_SUPPLEMENTAL_LOGGING_MODE
            props[mode.key] = mode.get(o)
        database = write_keys.DATABASE_NAME.get(o)
        if database:
            props[table_keys.DATABASE.key] = database
        if self.precombine_field:
            ordering = (
                table_keys.PRECOMBINE_FIELD
                if self.table_version < 8
                else merge_keys.ORDERING_FIELDS
            )
            props[ordering.key] = self.precombine_field
        if self.keygen.is_partitioned:
            props[table_keys.PARTITION_FIELDS.key] = self.keygen.partition_fields_property
        if self.keygen.kind in (KeyGenKind.TIMESTAMP, KeyGenKind.CUSTOM):
            for option in keygen_keys.PERSISTED:
                if option.is_set(o):
                    props[option.key] = str(option.raw(o))
        return props

    def _layout_properties(self) -> dict[str, str]:
        """Version 6: timeline layout 1, archive logs in `.hoodie/archived`. Versions 8 and 9 (as
        Hudi 1.2 writes them): layout 2 under `.hoodie/timeline` with its LSM history, the version
        the table was created at, the table format."""
        if self.table_version < 8:
            return {
                table_keys.VERSION.key: "6",
                table_keys.TIMELINE_LAYOUT_VERSION.key: "1",
                table_keys.ARCHIVELOG_FOLDER.key: "archived",
            }
        version = str(self.table_version)
        return {
            table_keys.VERSION.key: version,
            table_keys.INITIAL_VERSION.key: version,
            table_keys.TIMELINE_LAYOUT_VERSION.key: "2",
            archival_keys.TIMELINE_PATH.key: "timeline",
            archival_keys.TIMELINE_HISTORY_PATH.key: "history",
            table_keys.ARCHIVELOG_FOLDER.key: "history",
            table_keys.TABLE_FORMAT.key: "native",
            table_keys.MULTIPLE_BASE_FILE_FORMATS.key: "false",
        }

    def _merge_properties(self) -> dict[str, str]:
        """Version 6: the key generator class, and on merge-on-read the payload class. Versions 8
        and 9: the key generator type and the merge mode; version 8 also the payload class and the
        merger's strategy id."""
        if self.table_version < 8:
            props = {table_keys.KEY_GENERATOR_CLASS.key: self.keygen.kind.class_name}
            if self.is_merge_on_read:
                props[table_keys.PAYLOAD_CLASS.key] = self.payload_class
                props[table_keys.RECORD_MERGER_STRATEGY.key] = (
                    table_keys.RECORD_MERGER_STRATEGY.default or ""
                )
            return props
        props = {
            merge_keys.KEY_GENERATOR_TYPE.key: self.keygen.kind.value,
            merge_keys.RECORD_MERGE_MODE.key: self.merge_mode.value,
        }
        if self.table_version == 8:
            event_time = self.merge_mode is MergeMode.EVENT_TIME_ORDERING
            props[table_keys.PAYLOAD_CLASS.key] = self.payload_class
            props[merge_keys.RECORD_MERGE_STRATEGY_ID.key] = (
                merge_keys.EVENT_TIME_STRATEGY_ID
                if event_time
                else merge_keys.COMMIT_TIME_STRATEGY_ID
            )
        return props


def resolve_write_config(options: Mapping[str, str], table: TableConfig | None) -> WriteConfig:
    """Merge user options with the table's config; conflicting table settings are a `ConfigError`."""
    o = dict(options)
    check_write_options(o)
    if table is not None:
        _check_against_table(o, table)
        o = with_table_defaults(o, table)
    operation = _OPERATION_TYPES[write_keys.OPERATION.get(o)]
    if write_keys.INSERT_DROP_DUPLICATES.get(o) and operation is WriteOperationType.UPSERT:
        # Hudi 0.14 (HoodieSparkSqlWriter): an upsert that drops the records whose key the table
        # holds is an insert of the others, committed as one.
        log.warning(
            "upsert is not applicable with %s=true: the write is an insert",
            write_keys.INSERT_DROP_DUPLICATES.key,
        )
        operation = WriteOperationType.INSERT
        o = {**o, write_keys.OPERATION.key: "insert"}
    table_type = TableType(write_keys.TABLE_TYPE.get(o))
    table_name = write_keys.TABLE_NAME.get(o) or (table.name if table else None)
    if not table_name:
        raise ConfigError(f"{write_keys.TABLE_NAME.key} is required to create a table")
    if table is None:
        check_table_name(table_name)  # before a table with a path-like name is created
    if write_keys.DROP_PARTITION_COLUMNS.get(o):
        raise UnsupportedOperationError(
            f"{write_keys.DROP_PARTITION_COLUMNS.key}=true is not supported (hudi-rs and other readers refuse it)"
        )
    index = index_keys.index_type(o)
    if write_keys.INSERT_DROP_DUPLICATES.get(o):
        _check_drop_duplicates(operation, index)
    clustering = clustering_keys.enabled_service_keys(o)
    if index.routes_by_bucket and clustering:
        raise UnsupportedOperationError(
            f"clustering ({', '.join(f'{k}=true' for k in clustering)}) "
            f"{clustering_keys.BUCKET_REFUSAL}; turn it off"
        )
    table_version = _table_version(o, table)
    ordering = _ordering_fields(options, o, table, table_version)
    payload_class = _payload_class(o, table, table_version, ordering)
    return WriteConfig(
        options=o,
        operation=operation,
        table_type=table_type,
        table_name=table_name,
        keygen=spec_from_options(o),
        precombine_field=",".join(ordering) or None,
        merge_mode=merge_mode_of(payload_class),
        payload_class=payload_class,
        index_type=index,
        sizing=_sizing(o),
        bloom=_bloom(o),
        populate_meta_fields=write_keys.POPULATE_META_FIELDS.get(o),
        combine_before_write=_combine(o, operation),
        drop_duplicates=write_keys.INSERT_DROP_DUPLICATES.get(o),
        partitions_to_delete=write_keys.PARTITIONS_TO_DELETE.get(o),
        parallelism=_parallelism(o, operation),
        reconcile_schema=write_keys.RECONCILE_SCHEMA.get(o),
        extra_metadata=_extra_metadata(o),
        table_version=table_version,
    )


def _table_version(o: Mapping[str, str], table: TableConfig | None) -> int:
    """The version this write writes: the table's; for a new table `hoodie.write.table.version`.
    A higher version asked of an existing table is an upgrade, which `pyhudi.write` runs before
    the write; with `hoodie.write.auto.upgrade=false` the write is at the table's version, as
    Hudi 1.2 writes it. A lower one is a downgrade: not a write."""
    option = write_keys.WRITE_TABLE_VERSION
    asked = option.get(o)
    if asked not in write_keys.WRITABLE_TABLE_VERSIONS:
        raise ConfigError(
            f"{option.key}={asked}: pyhudi writes table versions "
            f"{', '.join(map(str, write_keys.WRITABLE_TABLE_VERSIONS))}"
        )
    if table is None:
        return int(asked)
    if option.is_set(o) and asked > table.version and not write_keys.AUTO_UPGRADE.get(o):
        log.warning(
            "%s=false: the table stays at version %s and this write writes it (not %s=%s)",
            write_keys.AUTO_UPGRADE.key,
            table.version,
            option.key,
            asked,
        )
    elif option.is_set(o) and asked > table.version:
        raise UnsupportedOperationError(
            f"{option.key}={asked} but the table is at version {table.version}: this write path "
            "does not upgrade tables; upgrade with pyhudi.write (a SparkSession at hand) or "
            f"pyhudi.upgrade_table, or set {write_keys.AUTO_UPGRADE.key}=false to write version "
            f"{table.version}"
        )
    elif option.is_set(o) and asked < table.version:
        raise UnsupportedOperationError(
            f"{option.key}={asked} but the table is at version {table.version}: a write does not "
            f"downgrade a table; downgrade it first (`pyhudi table downgrade --to {asked}` or "
            f"pyhudi.downgrade_table), or leave {option.key} unset to write version {table.version}"
        )
    return table.version


def _ordering_fields(
    given: Mapping[str, str], o: Mapping[str, str], table: TableConfig | None, version: int
) -> tuple[str, ...]:
    """The write's ordering fields (compared as a tuple, in order): `hoodie.table.ordering.fields`
    before `hoodie.datasource.write.precombine.field`, as Hudi 1.2 takes them (`given`: the user's
    options, `o`: with the table's defaults). A new table of version 8 or 9 has none unless one
    is given (Hudi 1.x has no default `ts`), and an existing one keeps its own (Hudi 1.2: a
    config conflict). Table version 6 takes one precombine field (default `ts`): Hudi 0.15 has
    no `hoodie.table.ordering.fields` and fails upserts with several."""
    table_key, write_key = merge_keys.ORDERING_FIELDS, write_keys.PRECOMBINE_FIELD
    if version < 8 and table_key.is_set(given):
        raise ConfigError(
            f"{table_key.key} is a table property of versions 8 and 9; this table is at version "
            f"{version} (Hudi 0.15 ignores the key): set {write_key.key} to one field"
        )
    asked = [k for k in (table_key, write_key) if k.is_set(given)]
    if version >= 8 and table is not None and table.ordering_fields:
        stored = table.ordering_fields
        for option in asked:
            value = _split(option.get(given))
            if value != stored:
                raise ConfigError(
                    f"{option.key}={','.join(value)} conflicts with the table's ordering fields "
                    f"({table_key.key}={','.join(stored)}); a table keeps its ordering fields "
                    "(Hudi 1.2 refuses the write too)"
                )
        return stored
    if version >= 8:
        return _split(asked[0].get(given)) if asked else ()
    fields = _split(write_key.get(o))
    if len(fields) > 1:
        raise ConfigError(
            f"{write_key.key}={','.join(fields)}: several ordering fields need table version 8 or "
            f"9 (Hudi 0.15 fails upserts on them); a table of version {version} orders by one field"
        )
    return fields


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(f.strip() for f in (value or "").split(",") if f.strip())


def _payload_class(
    o: Mapping[str, str], table: TableConfig | None, version: int, ordering: tuple[str, ...]
) -> str:
    """The payload class whose merge this write applies. Table version 6 has no merge mode: the
    payload class decides, and a merge mode asked that differs from it is an error (Hudi 0.15
    ignores the key and merges by the payload class). Versions 8 and 9 record a merge mode: an
    existing table's, else `hoodie.write.record.merge.mode`, else the payload class's, else
    event-time ordering when there are ordering fields (Hudi 1.x's `DefaultHoodieRecordPayload`)
    and commit-time ordering when there are none."""
    asked = _asked_merge_modes(o)
    if version < 8:
        payload = write_keys.PAYLOAD_CLASS.get(o)
        mode = merge_mode_of(payload)
        for key, value in asked.items():
            if value != mode.value:
                raise ConfigError(
                    f"{key}={value}: a table of version {version} has no merge mode (Hudi 0.15 "
                    f"ignores the key) and merges by its payload class, {payload} "
                    f"({mode.value}); {_payload_hint(value)}"
                )
        return payload
    given = write_keys.PAYLOAD_CLASS.get(o) if write_keys.PAYLOAD_CLASS.is_set(o) else None
    if table is not None:
        mode = resolve_merge_config(table).mode
        recorded = merge_keys.RECORD_MERGE_MODE.get(table.props) or mode.value
        for key, value in asked.items():
            if value != recorded:
                raise ConfigError(
                    f"{key}={value} conflicts with the table's merge mode "
                    f"({merge_keys.RECORD_MERGE_MODE.key}={recorded}): a table keeps its merge "
                    "mode (Hudi 1.2 refuses the write too)"
                )
    else:
        mode = _new_table_mode(o, asked, given, ordering)
    if mode is MergeMode.PARTIAL_UPDATE:
        raise UnsupportedOperationError(
            f"{PARTIAL_UPDATE_PAYLOAD} merges partially on table version 6 only; Hudi 1.x "
            f"tables (version {version}) use partial update modes, which pyhudi does not write"
        )
    if given is not None and merge_mode_of(given) is not mode:
        raise ConfigError(
            f"{write_keys.PAYLOAD_CLASS.key}={given} conflicts with the table's merge mode "
            f"{mode.value} (table version {version})"
        )
    return DEFAULT_PAYLOAD if mode is MergeMode.EVENT_TIME_ORDERING else OVERWRITE_WITH_LATEST


def _asked_merge_modes(o: Mapping[str, str]) -> dict[str, str]:
    """The merge modes the write names: `hoodie.write.record.merge.mode` (Hudi 1.2's write
    option) and `hoodie.record.merge.mode` (the table property, which Hudi 1.2 checks against an
    existing table's). CUSTOM is refused: pyhudi merges by no custom merger."""
    asked = {
        option.key: option.get(o)
        for option in (write_keys.RECORD_MERGE_MODE, merge_keys.RECORD_MERGE_MODE)
        if option.is_set(o)
    }
    custom = [key for key, value in asked.items() if value == "CUSTOM"]
    if custom:
        raise UnsupportedOperationError(
            f"{custom[0]}=CUSTOM: pyhudi merges records by COMMIT_TIME_ORDERING or "
            "EVENT_TIME_ORDERING only (a custom merger is Java code); use Apache Hudi"
        )
    return asked


def _new_table_mode(
    o: Mapping[str, str], asked: Mapping[str, str], given: str | None, ordering: tuple[str, ...]
) -> MergeMode:
    """The merge mode of a new table of version 8 or 9."""
    write_option = write_keys.RECORD_MERGE_MODE
    if write_option.key in asked:
        mode = MergeMode(asked[write_option.key])
    elif given is not None:
        mode = merge_mode_of(given)
    else:
        mode = MergeMode.EVENT_TIME_ORDERING if ordering else MergeMode.COMMIT_TIME_ORDERING
    table_key = merge_keys.RECORD_MERGE_MODE.key
    if table_key in asked and asked[table_key] != mode.value:
        # Hudi 1.2 ignores the table property on a new table and records the mode it infers.
        raise ConfigError(
            f"{table_key}={asked[table_key]} but the new table's merge mode is {mode.value}: "
            f"choose a new table's merge mode with {write_option.key} (Hudi 1.2 ignores "
            f"{table_key} when it creates a table)"
        )
    return mode


def _payload_hint(mode: str) -> str:
    payload = (
        DEFAULT_PAYLOAD if mode == MergeMode.EVENT_TIME_ORDERING.value else OVERWRITE_WITH_LATEST
    )
    return f"set {write_keys.PAYLOAD_CLASS.key}={payload} to merge by {mode}"


def _sizing(o: Mapping[str, str]) -> SizingConfig:
    compression = write_keys.PARQUET_COMPRESSION_CODEC.get(o)
    return SizingConfig(
        max_file_size_bytes=write_keys.PARQUET_MAX_FILE_SIZE.get(o),
        small_file_limit_bytes=write_keys.PARQUET_SMALL_FILE_LIMIT.get(o),
        insert_split_size=write_keys.INSERT_SPLIT_SIZE.get(o),
        auto_split=write_keys.INSERT_AUTO_SPLIT.get(o),
        record_size_estimate_bytes=write_keys.RECORD_SIZE_ESTIMATE.get(o),
        compression="none" if compression in ("uncompressed", "none") else compression,
        row_group_size_bytes=write_keys.PARQUET_BLOCK_SIZE.get(o),
        page_size_bytes=write_keys.PARQUET_PAGE_SIZE.get(o),
        dictionary=write_keys.PARQUET_DICTIONARY_ENABLED.get(o),
        small_file_candidates=write_keys.SMALL_FILE_GROUP_CANDIDATES_LIMIT.get(o),
    )


def _bloom(o: Mapping[str, str]) -> BloomConfig:
    return BloomConfig(
        enabled=index_keys.PARQUET_BLOOM_FILTER_ENABLED.get(o),
        num_entries=index_keys.BLOOM_NUM_ENTRIES.get(o),
        fpp=index_keys.BLOOM_FPP.get(o),
        type_code=index_keys.BLOOM_FILTER_TYPE.get(o),
        max_entries=index_keys.BLOOM_DYNAMIC_MAX_ENTRIES.get(o),
    )


def _combine(o: Mapping[str, str], operation: WriteOperationType) -> bool:
    if operation is WriteOperationType.UPSERT:
        return write_keys.COMBINE_BEFORE_UPSERT.get(o)
    if operation is WriteOperationType.DELETE:
        return write_keys.COMBINE_BEFORE_DELETE.get(o)
    return write_keys.COMBINE_BEFORE_INSERT.get(o)


def _parallelism(o: Mapping[str, str], operation: WriteOperationType) -> int:
    if operation is WriteOperationType.BULK_INSERT:
        return write_keys.BULK_INSERT_PARALLELISM.get(o)
    if operation is WriteOperationType.DELETE:
        return write_keys.DELETE_PARALLELISM.get(o)
    if operation is WriteOperationType.UPSERT:
        return write_keys.UPSERT_PARALLELISM.get(o)
    return write_keys.INSERT_PARALLELISM.get(o)


def _extra_metadata(o: Mapping[str, str]) -> dict[str, str]:
    prefix = write_keys.COMMIT_METADATA_KEYPREFIX.get(o)
    return {k: v for k, v in o.items() if prefix and k.startswith(prefix)}


# ---- consistency with an existing table --------------------------------------------------------

_CHECKED = (
    (write_keys.RECORD_KEY_FIELD, table_keys.RECORD_KEY_FIELDS, "record key fields"),
    (write_keys.PARTITION_PATH_FIELD, table_keys.PARTITION_FIELDS, "partition path fields"),
    (write_keys.KEY_GENERATOR_CLASS, table_keys.KEY_GENERATOR_CLASS, "key generator"),
    (
        write_keys.HIVE_STYLE_PARTITIONING,
        table_keys.HIVE_STYLE_PARTITIONING,
        "hive-style partitioning",
    ),
    (
        write_keys.URL_ENCODE_PARTITIONING,
        table_keys.URL_ENCODE_PARTITIONING,
        "partition path URL encoding",
    ),
    (write_keys.TABLE_TYPE, table_keys.TYPE, "table type"),
)


def _check_against_table(o: Mapping[str, str], table: TableConfig) -> None:
    conflicts = []
    for write_option, table_option, what in _CHECKED:
        if not write_option.is_set(o) or not table_option.is_set(table.props):
            continue
        given, stored = str(write_option.raw(o)), str(table_option.raw(table.props))
        if _normalise(write_option, given) != _normalise(table_option, stored):
            conflicts.append(f"{what}: {write_option.key}={given!r} but the table has {stored!r}")
    if (
        table.name
        and write_keys.TABLE_NAME.is_set(o)
        and write_keys.TABLE_NAME.raw(o) != table.name
    ):
        conflicts.append(
            f"table name: {write_keys.TABLE_NAME.raw(o)!r} but the table is {table.name!r}"
        )
    conflicts.extend(_cdc_conflicts(o, table))
    if conflicts:
        raise ConfigError(
            "options conflict with the existing table's hoodie.properties: " + "; ".join(conflicts)
        )


def _cdc_conflicts(o: Mapping[str, str], table: TableConfig) -> list[str]:
    """Change data capture is the table's (set when it is created): Hudi 0.15 and 1.2 go by
    hoodie.properties and ignore a write's different setting; pyhudi refuses it."""
    enabled, mode = table_keys.CDC_ENABLED, table_keys.CDC_SUPPLEMENTAL_LOGGING_MODE
    found = []
    stored = enabled.get(table.props)
    if enabled.is_set(o) and enabled.get(o) != stored:
        found.append(
            f"change data capture: {enabled.key}={enabled.raw(o)!r} but the table has "
            f"{_bool(stored)!r} (a table keeps the setting it was created with)"
        )
    elif stored and mode.is_set(o) and mode.get(o) != mode.get(table.props):
        found.append(
            f"CDC logging mode: {mode.key}={mode.raw(o)!r} but the table has "
            f"{mode.get(table.props)!r}"
        )
    return found


def _normalise(option: object, value: str) -> str:
    text = value.strip()
    if option in (write_keys.PARTITION_PATH_FIELD,):
        return ",".join(p.split(":")[0].strip() for p in text.split(","))
    if option in (write_keys.KEY_GENERATOR_CLASS, table_keys.KEY_GENERATOR_CLASS):
        return kind_of_class(text).value
    return ",".join(p.strip() for p in text.split(",")).lower()


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _check_drop_duplicates(operation: WriteOperationType, index_type: IndexType) -> None:
    """`hoodie.datasource.write.insert.drop.duplicates` drops the incoming records whose key the
    table holds (inserts and upserts). A `bulk_insert` refuses it, as Hudi's row writer does;
    the bucket index routes keys without looking them up, so it has nothing to drop them by."""
    key = write_keys.INSERT_DROP_DUPLICATES.key
    if operation is WriteOperationType.BULK_INSERT:
        raise UnsupportedOperationError(
            f"{key}=true with bulk_insert is not supported (as in Hudi's row writer); use insert"
        )
    if index_type.routes_by_bucket and operation in (
        WriteOperationType.INSERT,
        WriteOperationType.UPSERT,
    ):
        raise UnsupportedOperationError(
            f"{key}=true with hoodie.index.type=BUCKET is not supported: the bucket index does not "
            "look keys up, so it cannot tell which incoming keys the table holds"
        )
