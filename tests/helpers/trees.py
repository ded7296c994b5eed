"""File trees as data: compare a table (and its surroundings) byte for byte before and after."""

from __future__ import annotations

import os
from pathlib import Path


def tree_bytes(root: str | Path) -> dict[str, bytes]:
    """relative path -> content of every file under `root` (empty when `root` does not exist)."""
    found: dict[str, bytes] = {}
    for folder, _, files in os.walk(root):
        for name in files:
            full = os.path.join(folder, name)
            with open(full, "rb") as handle:
                found[os.path.relpath(full, root)] = handle.read()
    return found


def files_outside(parent: str | Path, table_root: str | Path) -> set[str]:
    """Files under `parent` that are not under `table_root`."""
    inside = os.path.relpath(table_root, parent) + os.sep
    return {p for p in tree_bytes(parent) if not p.startswith(inside)}
