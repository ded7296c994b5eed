"""Hudi's procedures that make or register tables: `run_bootstrap` and `hive_sync`, with Hudi
0.15's parameters and results, run by pyhudi's bootstrap and catalog sync."""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame, SparkSession

from pyhudi.bootstrap import bootstrap
from pyhudi.codec.properties import load_properties
from pyhudi.config import bootstrap as bootstrap_keys
from pyhudi.config import sync as sync_keys
from pyhudi.config import table as table_keys
from pyhudi.config import write as write_keys
from pyhudi.dml.names import procedure_table_path
from pyhudi.dml.procedure_args import Args, flag, text
from pyhudi.exceptions import ConfigError, UnsupportedOperationError
from pyhudi.spark.catalog import binding_of
from pyhudi.spark.sync import sync_to_catalog
from pyhudi.storage import Storage

#: run_bootstrap's defaults that pyhudi runs as Hudi does (other values are refused).
HFILE_BOOTSTRAP_INDEX = "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex"
PARQUET_INPUT_PROVIDER = "org.apache.hudi.bootstrap.SparkParquetBootstrapDataProvider"
METADATA_ONLY_SELECTOR = (
    "org.apache.hudi.client.bootstrap.selector.MetadataOnlyBootstrapModeSelector"
)
SIMPLE_KEYGEN = "org.apache.hudi.keygen.SimpleKeyGenerator"
OWL_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"


def run_bootstrap(spark: SparkSession, args: Args, session: Mapping[str, str]) -> DataFrame:
    """`CALL run_bootstrap(table => 'db.t', table_type => 'COPY_ON_WRITE', bootstrap_path =>
    source, base_path => target, rowKey_field => 'id', ...)`: bootstrap the parquet table at
    `bootstrap_path` into a Hudi table at `base_path` (`HudiTable.bootstrap`); status 0."""
    missing = [
        p
        for p in ("table", "table_type", "bootstrap_path", "base_path", "rowkey_field")
        if not args.get(p)
    ]
    if missing:
        raise ConfigError(f"run_bootstrap needs {', '.join(missing)}")
    refused = {
        "base_file_format": ("PARQUET",),
        "bootstrap_index_class": (HFILE_BOOTSTRAP_INDEX,),
        "full_bootstrap_input_provider": (PARQUET_INPUT_PROVIDER,),
        "schema_provider_class": ("",),
    }
    for name, allowed in refused.items():
        value = args.get(name)
        if value not in (None, *allowed) and str(value).upper() not in allowed:
            raise UnsupportedOperationError(f"run_bootstrap: {name} => {value!r}")
    database, _, name = str(args["table"]).rpartition(".")
    options: dict[str, str] = {}
    props_file = text(args, "props_file_path")
    if props_file:
        storage, path = Storage.for_uri(props_file)
        options.update(load_properties(storage.read_bytes(path)))
    options.update(session)  # Hudi adds the session's settings
    keygen = text(args, "key_generator_class", SIMPLE_KEYGEN)
    if "." in keygen:
        options[write_keys.KEY_GENERATOR_CLASS.key] = keygen
    else:
        options[write_keys.KEY_GENERATOR_TYPE.key] = keygen.upper()
    options.update(
        {
            table_keys.NAME.key: name.strip("`"),
            table_keys.DATABASE.key: (database or spark.catalog.currentDatabase()).strip("`"),
            write_keys.TABLE_TYPE.key: text(args, "table_type").upper(),
            write_keys.RECORD_KEY_FIELD.key: text(args, "rowkey_field"),
            write_keys.PARTITION_PATH_FIELD.key: text(args, "partition_path_field"),
            write_keys.PAYLOAD_CLASS.key: text(args, "payload_class", OWL_PAYLOAD),
            bootstrap_keys.MODE_SELECTOR.key: text(args, "selector_class", METADATA_ONLY_SELECTOR),
            bootstrap_keys.PARALLELISM.key: text(args, "parallelism", "1500"),
            bootstrap_keys.BASE_PATH.key: text(args, "bootstrap_path"),
        }
    )
    if flag(args, "enable_hive_sync"):
        options[sync_keys.HIVE_SYNC_ENABLED.key] = "true"
    mode = "overwrite" if flag(args, "bootstrap_overwrite") else "errorifexists"
    target = text(args, "base_path")
    bootstrap(spark, target, options, mode=mode)
    if flag(args, "enable_hive_sync"):
        sync_to_catalog(spark, target, options)
    return spark.createDataFrame([(0,)], "status int")


def hive_sync(spark: SparkSession, args: Args, session: Mapping[str, str]) -> DataFrame:
    """`CALL hive_sync(table => 'db.t', partition_fields => ..., partition_extractor_class =>
    ..., mode => 'hms')`: bring the catalog table's metastore entry up to date with the Hudi
    table (its columns and partitions), as Hudi's sync after a write does."""
    for remote in ("metastore_uri", "username", "password", "use_jdbc"):
        if text(args, remote):
            raise UnsupportedOperationError(
                f"hive_sync: {remote} => ...; pyhudi syncs the session's own metastore (set "
                "spark.hadoop.hive.metastore.uris on the session instead)"
            )
    if text(args, "mode").lower() not in ("", "hms"):
        raise UnsupportedOperationError(f"hive_sync: mode => {args.get('mode')!r} (pyhudi: hms)")
    table = text(args, "table")
    path = procedure_table_path(spark, table, None)
    database, _, name = table.rpartition(".")
    binding = binding_of(spark.table(table).schema)
    options = {
        **session,
        **(binding.options if binding is not None else {}),
        sync_keys.META_SYNC_ENABLED.key: "true",
        sync_keys.HIVE_SYNC_ENABLED.key: "true",
        sync_keys.DATABASE.key: (database or spark.catalog.currentDatabase()).strip("`"),
        sync_keys.TABLE.key: name.strip("`"),
    }
    if text(args, "partition_fields"):
        options[sync_keys.PARTITION_FIELDS.key] = text(args, "partition_fields")
    if text(args, "partition_extractor_class"):
        options[sync_keys.PARTITION_EXTRACTOR_CLASS.key] = text(args, "partition_extractor_class")
    if text(args, "strategy"):
        raise UnsupportedOperationError(f"hive_sync: strategy => {args.get('strategy')!r}")
    sync_to_catalog(spark, path, options)
    return spark.createDataFrame([("hive sync success.",)], "result string")
