"""What a write task knows about the file it wrote that the metadata table's indexes need.

Side results for the metadata writer only (Hudi keeps them out of the commit metadata too: its
`WriteStatus` carries the written records' locations, its `HoodieDeltaWriteStat` the log files'
column ranges, neither is serialized into the `.commit` file). They travel with the write stats
rows (`pyhudi.file_group.stats`, columns `inserted_keys`, `deleted_keys`, `column_ranges`) and are
asked for by `WriteTaskSpec.collect_keys` / `collect_column_ranges`:

* record keys (`record_index`): the keys the file has that the file group's previous slice did not
  (every key of a new file group) and the keys of the previous slice the file no longer has. A
  base file's task compares the old and new files' keys (`key_changes`). A task appending a log
  file does not read the slice: its records say whether the index found their key in this file
  group (`control_columns.LOCATED`, set only by an index that knows every group's merged keys),
  so the new keys are its upserts not located there and the removed ones its deletes located
  there (`log_key_changes`). Without that column, or when one key is both upserted and deleted in
  the append (the merge order would decide), it returns None and the metadata writer reads that
  file group on the driver, as for writes that return nothing;
* column ranges (`column_stats`): every top-level column's range of the file, from the footer the
  parquet writer returns or the records appended to a log file (`pyhudi.file_group.column_ranges`).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from pyhudi.codec.metadata_records import ColumnStats

INSERTED_KEYS = "inserted_keys"
DELETED_KEYS = "deleted_keys"
COLUMN_RANGES = "column_ranges"


@dataclass(frozen=True)
class FileIndexResult:
    """One written file's side results; None where the task did not (or could not) compute one."""

    partition_path: str
    file_id: str
    file_name: str
    prev_commit: str
    inserted_keys: frozenset[str] | None
    deleted_keys: frozenset[str] | None
    column_ranges: tuple[ColumnStats, ...] | None


def key_changes(
    written: Sequence[pa.ChunkedArray | pa.Array], previous: pa.ChunkedArray | None
) -> dict[str, list[str]]:
    """The stats-row columns of a base file's key changes against its previous slice's keys."""
    keys = pa.chunked_array([c for k in written for c in _chunks(k)], pa.string())
    unique = pc.unique(keys)
    if previous is None or len(previous) == 0:
        return {INSERTED_KEYS: unique.to_pylist(), DELETED_KEYS: []}
    old = pc.unique(previous)
    inserted = unique.filter(pc.invert(pc.is_in(unique, value_set=old)))
    deleted = old.filter(pc.invert(pc.is_in(old, value_set=unique)))
    return {INSERTED_KEYS: inserted.to_pylist(), DELETED_KEYS: deleted.to_pylist()}


def log_key_changes(
    keys: pa.Array | pa.ChunkedArray,
    deletes: pa.Array | pa.ChunkedArray,
    located: pa.Array | pa.ChunkedArray | None,
) -> dict[str, list[str]]:
    """The stats-row columns of a log append's key changes (`keys` of the appended records,
    `deletes` true for the delete block's, `located` from the index), or {} when not exact."""
    if located is None or located.null_count or len(located) != len(keys):
        return {}
    upserts = pc.invert(deletes)
    written, removed = pc.unique(keys.filter(upserts)), pc.unique(keys.filter(deletes))
    if pc.any(pc.is_in(removed, value_set=written)).as_py():
        return {}  # upserted and deleted in one append: the slice's merge decides, read it
    new = pc.and_(upserts, pc.invert(located))
    return {
        INSERTED_KEYS: pc.unique(keys.filter(new)).to_pylist(),
        DELETED_KEYS: pc.unique(keys.filter(pc.and_(deletes, located))).to_pylist(),
    }


def _chunks(column: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def encode_column_ranges(ranges: Iterable[ColumnStats]) -> bytes:
    """The `column_ranges` cell (pickled: the values are Python objects of several types)."""
    return pickle.dumps(tuple(ranges), protocol=pickle.HIGHEST_PROTOCOL)


def index_results_of(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], FileIndexResult]:
    """(partition, file name) -> the side results of the stats rows that carry any."""
    results = {}
    for row in rows:
        inserted, deleted, ranges = (
            row.get(INSERTED_KEYS),
            row.get(DELETED_KEYS),
            row.get(COLUMN_RANGES),
        )
        if inserted is None and deleted is None and ranges is None:
            continue
        partition = row["partition_path"] or ""
        results[(partition, row["file_name"])] = FileIndexResult(
            partition_path=partition,
            file_id=row["file_id"],
            file_name=row["file_name"],
            prev_commit=row.get("prev_commit") or "null",
            inserted_keys=None if inserted is None else frozenset(inserted),
            deleted_keys=None if deleted is None else frozenset(deleted),
            column_ranges=None if ranges is None else pickle.loads(bytes(ranges)),
        )
    return results
