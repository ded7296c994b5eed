"""The `record_index` check: the record index (key -> partition, file group) against the record keys
of the latest snapshot, read slice by slice (base file merged with its logs, deletes applied), as
Hudi's validator compares the record index's count and content with the snapshot's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa

from pyhudi.codec.metadata_records import MetadataRecord
from pyhudi.codec.schema import RECORD_KEY, with_meta_fields
from pyhudi.file_group.slice_reader import read_slice
from pyhudi.file_group.slice_task import SliceTask
from pyhudi.merge.config import resolve_merge_config
from pyhudi.metadata.report import Difference
from pyhudi.model.file import FileSlice
from pyhudi.table.context import TableContext
from pyhudi.table.schema import table_arrow_schema

CHECK = "record_index"
Location = tuple[str, str]  # (partition, file id)


def record_index_differences(
    ctx: TableContext,
    records: Iterable[MetadataRecord],
    slices: Sequence[FileSlice],
    as_of: str | None,
) -> list[Difference]:
    """Keys missing on either side, and keys whose file group differs."""
    indexed = {
        r.key: (r.location.partition_path, r.location.file_id)
        for r in records
        if r.location is not None
    }
    snapshot = snapshot_locations(ctx, slices, as_of)
    found: list[Difference] = []
    for key in sorted(set(indexed) | set(snapshot)):
        mine, theirs = indexed.get(key), snapshot.get(key, [])
        if mine is None:
            partition, file_id = theirs[0]
            detail = f"in file group {file_id} of the snapshot, not in the record index"
            found.append(Difference(CHECK, partition, key, detail))
        elif not theirs:
            detail = f"in the record index (file group {mine[1]}), not in the snapshot"
            found.append(Difference(CHECK, mine[0], key, detail))
        elif theirs != [mine]:
            where = ", ".join(f"{p or '(non-partitioned)'}/{f}" for p, f in theirs)
            detail = f"file group {mine[1]} in the record index, {where} in the snapshot"
            found.append(Difference(CHECK, mine[0], key, detail))
    return found


def snapshot_locations(
    ctx: TableContext, slices: Sequence[FileSlice], as_of: str | None
) -> dict[str, list[Location]]:
    """Record key -> the file groups holding it in the snapshot (one, unless keys are duplicated)."""
    schema = with_meta_fields(table_arrow_schema(ctx, as_of) or pa.schema([]))
    merge = resolve_merge_config(ctx.config, ctx.base_path)
    timeline = ctx.active.timeline
    visible = frozenset(timeline.commits().up_to(as_of).times())
    located: dict[str, list[Location]] = {}
    for piece in slices:
        task = SliceTask(
            storage=ctx.storage,
            base_path=ctx.base_path,
            partition_path=piece.partition_path,
            file_id=piece.file_id,
            base_file=piece.base_file.relative_path if piece.base_file else None,
            log_files=tuple(log.relative_path for log in piece.log_files),
            file_schema=schema,
            visible_instants=visible,
            as_of=as_of,
            merge_mode=merge.mode.value,
            ordering_field=",".join(merge.ordering_fields) or None,
            timeline_start=timeline.first.time if timeline.first else None,
            ordered_deletes=ctx.config.version >= 8,
        )
        keys = read_slice(task).column(RECORD_KEY).to_pylist()
        for key in keys:
            located.setdefault(key, []).append((piece.partition_path, piece.file_id))
    return located
