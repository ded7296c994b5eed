"""Real tables with a metadata table, and the committed data files a metadata listing must equal."""

from __future__ import annotations

import os
from pathlib import Path

from pyhudi.codec.file_names import parse_base_file, parse_log_file
from pyhudi.table.context import TableContext

WITH_METADATA = [
    "cow__v9_lance_txns_simple",
    "cow__v9_txns_complex_meta",
    "cow__v9_txns_nonpart_meta",
    "cow__v9_txns_simple_meta",
    "mor_avro__v8_trips_8i3u1d",
    "mor_avro__v9_txns_complex_meta",
    "mor_avro__v9_txns_nonpart_meta",
    "mor_avro__v9_txns_simple_meta",
]


def committed_data_files(root: Path, as_of: str | None = None) -> dict[str, dict[str, int]]:
    """Data files on disk, by partition, whose writing instant is a completed one (<= `as_of`)."""
    ctx = TableContext.open(str(root))
    completed = set(ctx.active.timeline.completed().up_to(as_of).times())
    found: dict[str, dict[str, int]] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        partition = os.path.relpath(folder, root).replace(os.sep, "/")
        partition = "" if partition == "." else partition
        for name in names:
            parsed = parse_log_file(partition, name) if name.startswith(".") else None
            instant = parsed.base_instant_time if parsed else None
            if parsed is None and not name.startswith("."):
                base = parse_base_file(partition, name)
                instant = base.instant_time if base else None
            if instant in completed:
                found.setdefault(partition, {})[name] = os.path.getsize(os.path.join(folder, name))
    return found
