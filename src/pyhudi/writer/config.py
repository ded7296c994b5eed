"""A write's resolved configuration: user options, checked against the table's own config."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyhudi.config import index as ikeys
from pyhudi.config import keygen as tskeys
from pyhudi.config import table as tkeys
from pyhudi.config import write as wkeys
from pyhudi.config.options import ConfigOption
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.model.enums import TableType, WriteOperationType
from pyhudi.table.config import TableConfig
from pyhudi.table.keygen import KeyGenKind, KeyGenSpec, build_spec
from pyhudi.table.payload import MergeMode, merge_mode_of

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
    index_type: str
    sizing: SizingConfig
    bloom: BloomConfig
    populate_meta_fields: bool
    combine_before_write: bool
    drop_duplicates: bool
    partitions_to_delete: tuple[str, ...] | None
    parallelism: int
    reconcile_schema: bool
    extra_metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_merge_on_read(self) -> bool:
        return self.table_type is TableType.MERGE_ON_READ

    @property
    def ordering_field(self) -> str | None:
        return wkeys.PAYLOAD_ORDERING_FIELD.get(self.options) or self.precombine_field

    @property
    def is_global_index(self) -> bool:
        return self.index_type in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM")

    def table_properties(self) -> dict[str, str]:
        """`hoodie.properties` entries for a table this write creates (§1.2, §9)."""
        o = self.options
        props = {
            tkeys.NAME.key: self.table_name,
            tkeys.TYPE.key: self.table_type.value,
            tkeys.VERSION.key: "6",
            tkeys.TIMELINE_LAYOUT_VERSION.key: "1",
            tkeys.BASE_FILE_FORMAT.key: "PARQUET",
            tkeys.RECORD_KEY_FIELDS.key: ",".join(self.keygen.record_key_fields),
            tkeys.KEY_GENERATOR_CLASS.key: self.keygen.kind.class_name,
            tkeys.HIVE_STYLE_PARTITIONING.key: _bool(self.keygen.hive_style),
            tkeys.URL_ENCODE_PARTITIONING.key: _bool(self.keygen.url_encode),
            tkeys.DROP_PARTITION_COLUMNS.key: "false",
            tkeys.POPULATE_META_FIELDS.key: _bool(self.populate_meta_fields),
            tkeys.ARCHIVELOG_FOLDER.key: "archived",
            tkeys.TIMELINE_TIMEZONE.key: (
                wkeys.TIMELINE_TIMEZONE.get(o)
                if wkeys.TIMELINE_TIMEZONE.is_set(o)
                else wkeys.NEW_TABLE_TIMEZONE
            ),
            tkeys.PARTITION_METAFILE_USE_BASE_FORMAT.key: "false",
            tkeys.CDC_ENABLED.key: "false",
        }
        database = wkeys.DATABASE_NAME.get(o)
        if database:
            props[tkeys.DATABASE.key] = database
        if self.precombine_field:
            props[tkeys.PRECOMBINE_FIELD.key] = self.precombine_field
        if self.keygen.is_partitioned:
            props[tkeys.PARTITION_FIELDS.key] = self.keygen.partition_fields_property
        if self.keygen.kind in (KeyGenKind.TIMESTAMP, KeyGenKind.CUSTOM):
            for option in tskeys.PERSISTED:
                if option.is_set(o):
                    props[option.key] = str(option.raw(o))
        if self.is_merge_on_read:
            props[tkeys.PAYLOAD_CLASS.key] = self.payload_class
            props[tkeys.RECORD_MERGER_STRATEGY.key] = tkeys.RECORD_MERGER_STRATEGY.default or ""
        return props


def _bool(value: bool) -> str:
    return "true" if value else "false"


def resolve_write_config(options: Mapping[str, str], table: TableConfig | None) -> WriteConfig:
    """Merge user options with the table's config; conflicting table settings are a `ConfigError`."""
    o = dict(options)
    if table is not None:
        _check_against_table(o, table)
        o = _with_table_defaults(o, table)
    operation = _OPERATION_TYPES[wkeys.OPERATION.get(o)]
    table_type = TableType(wkeys.TABLE_TYPE.get(o))
    table_name = wkeys.TABLE_NAME.get(o) or (table.name if table else None)
    if not table_name:
        raise ConfigError(f"{wkeys.TABLE_NAME.key} is required to create a table")
    if wkeys.DROP_PARTITION_COLUMNS.get(o):
        raise UnsupportedOperationError(
            f"{wkeys.DROP_PARTITION_COLUMNS.key}=true is not supported (hudi-rs and other readers refuse it)"
        )
    payload_class = wkeys.PAYLOAD_CLASS.get(o)
    return WriteConfig(
        options=o,
        operation=operation,
        table_type=table_type,
        table_name=table_name,
        keygen=_keygen(o),
        precombine_field=wkeys.PRECOMBINE_FIELD.get(o),
        merge_mode=merge_mode_of(payload_class),
        payload_class=payload_class,
        index_type=ikeys.INDEX_TYPE.get(o),
        sizing=_sizing(o),
        bloom=_bloom(o),
        populate_meta_fields=wkeys.POPULATE_META_FIELDS.get(o),
        combine_before_write=_combine(o, operation),
        drop_duplicates=wkeys.INSERT_DROP_DUPLICATES.get(o),
        partitions_to_delete=wkeys.PARTITIONS_TO_DELETE.get(o),
        parallelism=_parallelism(o, operation),
        reconcile_schema=wkeys.RECONCILE_SCHEMA.get(o),
        extra_metadata=_extra_metadata(o),
    )


def _keygen(o: Mapping[str, str]) -> KeyGenSpec:
    class_name = wkeys.KEY_GENERATOR_CLASS.get(o)
    key_type = wkeys.KEY_GENERATOR_TYPE.get(o)
    if not class_name and key_type:
        class_name = KeyGenKind(key_type).class_name
    record_keys = tuple(f.strip() for f in wkeys.RECORD_KEY_FIELD.get(o).split(",") if f.strip())
    return build_spec(
        class_name=class_name,
        record_key_fields=record_keys,
        partition_spec=wkeys.PARTITION_PATH_FIELD.get(o),
        hive_style=wkeys.HIVE_STYLE_PARTITIONING.get(o),
        url_encode=wkeys.URL_ENCODE_PARTITIONING.get(o),
        options=o,
    )


def _sizing(o: Mapping[str, str]) -> SizingConfig:
    compression = wkeys.PARQUET_COMPRESSION_CODEC.get(o)
    return SizingConfig(
        max_file_size_bytes=wkeys.PARQUET_MAX_FILE_SIZE.get(o),
        small_file_limit_bytes=wkeys.PARQUET_SMALL_FILE_LIMIT.get(o),
        insert_split_size=wkeys.INSERT_SPLIT_SIZE.get(o),
        auto_split=wkeys.INSERT_AUTO_SPLIT.get(o),
        record_size_estimate_bytes=wkeys.RECORD_SIZE_ESTIMATE.get(o),
        compression="none" if compression in ("uncompressed", "none") else compression,
        row_group_size_bytes=wkeys.PARQUET_BLOCK_SIZE.get(o),
        page_size_bytes=wkeys.PARQUET_PAGE_SIZE.get(o),
        dictionary=wkeys.PARQUET_DICTIONARY_ENABLED.get(o),
    )


def _bloom(o: Mapping[str, str]) -> BloomConfig:
    return BloomConfig(
        enabled=ikeys.PARQUET_BLOOM_FILTER_ENABLED.get(o),
        num_entries=ikeys.BLOOM_NUM_ENTRIES.get(o),
        fpp=ikeys.BLOOM_FPP.get(o),
        type_code=ikeys.BLOOM_FILTER_TYPE.get(o),
        max_entries=ikeys.BLOOM_DYNAMIC_MAX_ENTRIES.get(o),
    )


def _combine(o: Mapping[str, str], operation: WriteOperationType) -> bool:
    if operation is WriteOperationType.UPSERT:
        return wkeys.COMBINE_BEFORE_UPSERT.get(o)
    if operation is WriteOperationType.DELETE:
        return wkeys.COMBINE_BEFORE_DELETE.get(o)
    return wkeys.COMBINE_BEFORE_INSERT.get(o)


def _parallelism(o: Mapping[str, str], operation: WriteOperationType) -> int:
    if operation is WriteOperationType.BULK_INSERT:
        return wkeys.BULK_INSERT_PARALLELISM.get(o)
    if operation is WriteOperationType.DELETE:
        return wkeys.DELETE_PARALLELISM.get(o)
    if operation is WriteOperationType.UPSERT:
        return wkeys.UPSERT_PARALLELISM.get(o)
    return wkeys.INSERT_PARALLELISM.get(o)


def _extra_metadata(o: Mapping[str, str]) -> dict[str, str]:
    prefix = wkeys.COMMIT_METADATA_KEYPREFIX.get(o)
    return {k: v for k, v in o.items() if prefix and k.startswith(prefix)}


# ---- consistency with an existing table --------------------------------------------------------

_CHECKED = (
    (wkeys.RECORD_KEY_FIELD, tkeys.RECORD_KEY_FIELDS, "record key fields"),
    (wkeys.PARTITION_PATH_FIELD, tkeys.PARTITION_FIELDS, "partition path fields"),
    (wkeys.KEY_GENERATOR_CLASS, tkeys.KEY_GENERATOR_CLASS, "key generator"),
    (wkeys.HIVE_STYLE_PARTITIONING, tkeys.HIVE_STYLE_PARTITIONING, "hive-style partitioning"),
    (wkeys.URL_ENCODE_PARTITIONING, tkeys.URL_ENCODE_PARTITIONING, "partition path URL encoding"),
    (wkeys.TABLE_TYPE, tkeys.TYPE, "table type"),
)


def _check_against_table(o: Mapping[str, str], table: TableConfig) -> None:
    conflicts = []
    for write_option, table_option, what in _CHECKED:
        if not write_option.is_set(o) or not table_option.is_set(table.props):
            continue
        given, stored = str(write_option.raw(o)), str(table_option.raw(table.props))
        if _normalise(write_option, given) != _normalise(table_option, stored):
            conflicts.append(f"{what}: {write_option.key}={given!r} but the table has {stored!r}")
    if table.name and wkeys.TABLE_NAME.is_set(o) and wkeys.TABLE_NAME.raw(o) != table.name:
        conflicts.append(f"table name: {wkeys.TABLE_NAME.raw(o)!r} but the table is {table.name!r}")
    if conflicts:
        raise ConfigError(
            "options conflict with the existing table's hoodie.properties: " + "; ".join(conflicts)
        )


def _normalise(option: object, value: str) -> str:
    text = value.strip()
    if option in (wkeys.PARTITION_PATH_FIELD,):
        return ",".join(p.split(":")[0].strip() for p in text.split(","))
    if option in (wkeys.KEY_GENERATOR_CLASS, tkeys.KEY_GENERATOR_CLASS):
        from pyhudi.table.keygen import kind_of_class

        return kind_of_class(text).value
    return ",".join(p.strip() for p in text.split(",")).lower()


def _with_table_defaults(o: dict[str, str], table: TableConfig) -> dict[str, str]:
    fill: dict[ConfigOption[Any], str | None] = {
        wkeys.RECORD_KEY_FIELD: table.props.get(tkeys.RECORD_KEY_FIELDS.key),
        wkeys.KEY_GENERATOR_CLASS: table.key_generator_class,
        wkeys.HIVE_STYLE_PARTITIONING: _bool(table.hive_style_partitioning),
        wkeys.URL_ENCODE_PARTITIONING: _bool(table.url_encode_partitioning),
        wkeys.TABLE_TYPE: table.table_type.value,
        wkeys.POPULATE_META_FIELDS: _bool(table.populate_meta_fields),
        wkeys.TABLE_NAME: table.name,
    }
    out = dict(o)
    for option, value in fill.items():
        if value is not None and not option.is_set(out):
            out[option.key] = value
    if not wkeys.PARTITION_PATH_FIELD.is_set(out) and table.partition_fields:
        out[wkeys.PARTITION_PATH_FIELD.key] = _partition_spec_from_table(table)
    if not wkeys.PRECOMBINE_FIELD.is_set(out) and table.precombine_field:
        out[wkeys.PRECOMBINE_FIELD.key] = table.precombine_field
    if not wkeys.PAYLOAD_CLASS.is_set(out) and tkeys.PAYLOAD_CLASS.is_set(table.props):
        out[wkeys.PAYLOAD_CLASS.key] = table.payload_class
    for option in tskeys.PERSISTED:
        if not option.is_set(out) and option.is_set(table.props):
            out[option.key] = str(option.raw(table.props))
    return out


def _partition_spec_from_table(table: TableConfig) -> str:
    fields = table.partition_fields
    kind = table.key_generator_class
    if kind and "Custom" in kind and not any(":" in f for f in fields):
        # hoodie.properties of a Custom table records bare names; TIMESTAMP types come from keygen options.
        timestamp = tskeys.TIMESTAMP_TYPE.is_set(table.props)
        return ",".join(f"{f}:{'TIMESTAMP' if timestamp else 'SIMPLE'}" for f in fields)
    return ",".join(fields)
