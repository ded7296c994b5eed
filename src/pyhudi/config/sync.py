"""Catalog (meta) sync options: Hudi's `hoodie.datasource.meta.sync.*` / `hive_sync.*` keys."""

from __future__ import annotations

from pyhudi.config.options import boolean, choice, string, string_list

META_SYNC_ENABLED = boolean(
    "hoodie.datasource.meta.sync.enable", False, "Sync the table to the catalog after each commit."
)
HIVE_SYNC_ENABLED = boolean(
    "hoodie.datasource.hive_sync.enable", False, "Sync the table to the Hive metastore (catalog)."
)
DATABASE = string(
    "hoodie.datasource.hive_sync.database", "default", "Catalog database of the synced table."
)
TABLE = string(
    "hoodie.datasource.hive_sync.table", None, "Catalog table name (default: hoodie.table.name)."
)
PARTITION_FIELDS = string_list(
    "hoodie.datasource.hive_sync.partition_fields",
    None,
    "Partition columns of the synced table (default: the table's partition fields).",
)
MODE = choice(
    "hoodie.datasource.hive_sync.mode",
    None,
    ("hms", "jdbc", "hiveql"),
    "How to reach the metastore; pyhudi syncs through the SparkSession's catalog (hms).",
    upper=False,
)
SKIP_RO_SUFFIX = boolean(
    "hoodie.datasource.hive_sync.skip_ro_suffix",
    False,
    "Name the read-optimized table of a merge-on-read table without the `_ro` suffix.",
)
METASTORE_URIS = string(
    "hoodie.datasource.hive_sync.metastore.uris",
    None,
    "Thrift URI of the metastore (must be the SparkSession's `hive.metastore.uris`).",
)
