"""Typed option registry: Hudi's own keys, defaults and docs (layer 1)."""

from pyhudi.config import (
    archival,
    clean,
    clustering,
    compaction,
    concurrency,
    index,
    keygen,
    merge,
    metadata,
    metadata_services,
    read,
    sanitize,
    sql,
    sync,
    table,
    write,
)
from pyhudi.config.options import REGISTRY, ConfigOption, all_options

__all__ = [
    "REGISTRY",
    "ConfigOption",
    "all_options",
    "archival",
    "clean",
    "clustering",
    "compaction",
    "concurrency",
    "index",
    "keygen",
    "merge",
    "metadata",
    "metadata_services",
    "read",
    "sanitize",
    "sql",
    "sync",
    "table",
    "write",
]
