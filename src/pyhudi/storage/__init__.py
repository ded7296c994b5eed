"""Storage over `pyarrow.fs` (layer 2)."""

from pyhudi.storage.base import FileStatus, Storage

__all__ = ["FileStatus", "Storage"]
