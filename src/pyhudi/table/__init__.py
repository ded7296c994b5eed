"""Spark-free table handle (layer 4)."""

from pyhudi.table.config import TableConfig
from pyhudi.table.context import TableContext

__all__ = ["TableConfig", "TableContext"]
