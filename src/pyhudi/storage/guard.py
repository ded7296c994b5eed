"""The table-root guard: every path a table operation creates or deletes stays inside the table.

A `Storage` scoped to a table root (`Storage.scoped(root)`, which `TableContext` does for every
table it opens or creates) checks each path given to `mkdirs`, `write_bytes`, `create_new`,
`open_output`, `delete`, `delete_dir` and `rename` with `check_inside` before touching anything.
The check is on the normalised path (`posixpath.normpath`): `root/a/../../x` and `/x` are outside,
`root/a/../b` is inside. Partition values are validated earlier with a precise message
(`pyhudi.storage.segments`); this guard is the last line that holds for every caller
(writes, services, rollback, bootstrap, clean, archival).
"""

from __future__ import annotations

import posixpath

from pyhudi.exceptions import UnsafePathError


def normalize(path: str) -> str:
    """`path` with `.`/`..` segments and repeated separators resolved (leading `/` kept)."""
    return posixpath.normpath(path) if path else path


def is_inside(root: str, path: str) -> bool:
    """True when `path` is `root` itself or below it, after normalisation."""
    base = normalize(root).rstrip("/") or "/"
    target = normalize(path)
    if base == "/":
        return target.startswith("/")
    return target == base or target.startswith(base + "/")


def check_inside(root: str, path: str, *, action: str) -> str:
    """`path` normalised, or `UnsafePathError` naming both when it leaves `root`."""
    if not is_inside(root, path):
        raise UnsafePathError(
            f"refusing to {action} {path!r}: it resolves to {normalize(path)!r}, outside the "
            f"table root {root!r} (a partition value or file name must not leave the table)"
        )
    return normalize(path)
