"""Listing a table's data files by partition (Hudi's file-listing mode; no metadata table)."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass

from pyhudi.codec.file_names import is_partition_metafile
from pyhudi.storage import FileStatus, Storage

_SKIPPED_TOP_LEVEL = (".hoodie",)


@dataclass(frozen=True)
class PartitionListing:
    """Files per relative partition path ("" for a non-partitioned table)."""

    files: dict[str, tuple[FileStatus, ...]]

    @property
    def partition_paths(self) -> list[str]:
        return sorted(self.files)

    @classmethod
    def scan(cls, storage: Storage, base_path: str) -> PartitionListing:
        """One recursive listing: every folder holding data files or a partition marker is a partition."""
        grouped: dict[str, list[FileStatus]] = defaultdict(list)
        marked: set[str] = set()
        prefix = base_path.rstrip("/") + "/"
        for status in storage.walk_files(base_path):
            relative = status.path[len(prefix) :] if status.path.startswith(prefix) else status.path
            folder, name = posixpath.split(relative)
            if _is_hidden_folder(folder):
                continue
            if is_partition_metafile(name):
                marked.add(folder)
            elif name.endswith((".crc", ".tmp", ".creating")) or name in (".DS_Store",):
                continue
            else:
                grouped[folder].append(status)
        for folder in marked:
            grouped.setdefault(folder, [])
        return cls({p: tuple(sorted(fs, key=lambda s: s.path)) for p, fs in grouped.items()})


def _is_hidden_folder(folder: str) -> bool:
    if not folder:
        return False
    parts = folder.split("/")
    return parts[0] in _SKIPPED_TOP_LEVEL or any(p.startswith(".") for p in parts)
