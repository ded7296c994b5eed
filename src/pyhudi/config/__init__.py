"""Typed option registry: Hudi's own keys, defaults and docs (layer 1)."""

from pyhudi.config import index, keygen, read, table, write
from pyhudi.config.options import REGISTRY, ConfigOption, all_options

__all__ = ["REGISTRY", "ConfigOption", "all_options", "index", "keygen", "read", "table", "write"]
