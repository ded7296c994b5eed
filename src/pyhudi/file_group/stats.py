"""Per-file write results: the small rows tasks return to the driver, and their WriteStats."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.file import join_partition

#: What every write task returns, one row per file it wrote (never records).
STATS_SCHEMA = pa.schema(
    [
        ("partition_path", pa.string()),
        ("file_id", pa.string()),
        ("file_name", pa.string()),
        ("io_type", pa.string()),
        ("prev_commit", pa.string()),
        ("num_writes", pa.int64()),
        ("num_inserts", pa.int64()),
        ("num_updates", pa.int64()),
        ("num_deletes", pa.int64()),
        ("file_size_bytes", pa.int64()),
        ("write_bytes", pa.int64()),
        ("runtime_ms", pa.int64()),
        ("log_version", pa.int32()),
        ("log_offset", pa.int64()),
        ("base_file", pa.string()),
        ("log_files", pa.string()),
        ("total_log_blocks", pa.int64()),
        ("total_log_records", pa.int64()),
        ("total_log_files_compacted", pa.int64()),
        ("total_log_size_compacted", pa.int64()),
        ("total_updated_records_compacted", pa.int64()),
        ("total_rollback_blocks", pa.int64()),
        ("total_corrupt_log_blocks", pa.int64()),
        # The CDC log written beside the file (`pyhudi.file_group.cdc_log`): name and size.
        ("cdc_file", pa.string()),
        ("cdc_size_bytes", pa.int64()),
        # Side results for the metadata writer (`pyhudi.file_group.index_results`), never in the
        # commit metadata; null unless the task spec asks for them.
        ("inserted_keys", pa.list_(pa.string())),
        ("deleted_keys", pa.list_(pa.string())),
        ("column_ranges", pa.binary()),
    ]
)
STATS_DDL = ", ".join(
    f"{f.name} {_t}"
    for f, _t in zip(
        STATS_SCHEMA,
        ["string"] * 5
        + ["bigint"] * 7
        + ["int", "bigint", "string", "string"]
        + ["bigint"] * 7
        + ["string", "bigint"]
        + ["array<string>", "array<string>", "binary"],
    )
)


#: The `io_type` of a row a task returns for a partition path it refused to write
#: (`WriteTaskSpec.check_partitions`): no file, the write must fail.
REFUSED = "REFUSED"


def refused_row(partition: str) -> dict[str, Any]:
    return {"partition_path": partition, "io_type": REFUSED}


def written_files(row: Mapping[str, Any]) -> list[str]:
    """The files a stats row names, relative to the partition: the data file, then its CDC log."""
    return [name for name in (row.get("file_name"), row.get("cdc_file")) if name]


def refused_partitions(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The partition paths the tasks refused (`REFUSED` rows)."""
    return sorted({row["partition_path"] for row in rows if row.get("io_type") == REFUSED})


def stats_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    columns: dict[str, list[Any]] = {f.name: [] for f in STATS_SCHEMA}
    for row in rows:
        for name in columns:
            columns[name].append(row.get(name))
    return pa.table(columns, schema=STATS_SCHEMA)


def to_write_stat(row: Mapping[str, Any]) -> WriteStat:
    partition = row["partition_path"] or ""
    io_type = row["io_type"]
    runtime_key = {
        "CREATE": "totalCreateTime",
        "MERGE": "totalUpsertTime",
        "APPEND": "totalUpsertTime",
    }.get(io_type, "totalCreateTime")
    runtime = {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0}
    runtime[runtime_key] = int(row.get("runtime_ms") or 0)
    stat = WriteStat(
        file_id=row["file_id"],
        path=join_partition(partition, row["file_name"]),
        partition_path=partition,
        prev_commit=row.get("prev_commit") or "null",
        num_writes=int(row.get("num_writes") or 0),
        num_deletes=int(row.get("num_deletes") or 0),
        num_update_writes=int(row.get("num_updates") or 0),
        num_inserts=int(row.get("num_inserts") or 0),
        total_write_bytes=int(row.get("write_bytes") or 0),
        file_size_bytes=int(row.get("file_size_bytes") or 0),
        total_log_records=int(row.get("total_log_records") or 0),
        total_log_files_compacted=int(row.get("total_log_files_compacted") or 0),
        total_log_size_compacted=int(row.get("total_log_size_compacted") or 0),
        total_updated_records_compacted=int(row.get("total_updated_records_compacted") or 0),
        total_log_blocks=int(row.get("total_log_blocks") or 0),
        total_rollback_blocks=int(row.get("total_rollback_blocks") or 0),
        total_corrupt_log_blocks=int(row.get("total_corrupt_log_blocks") or 0),
        runtime_stats=runtime,
    )
    if row.get("cdc_file"):
        cdc_path = join_partition(partition, row["cdc_file"])
        stat = stat.with_changes(cdc_stats={cdc_path: int(row.get("cdc_size_bytes") or 0)})
    if row.get("log_version") is not None:
        log_files = tuple(f for f in (row.get("log_files") or "").split(",") if f)
        stat = stat.with_changes(
            log_version=int(row["log_version"]),
            log_offset=int(row.get("log_offset") or 0),
            base_file=row.get("base_file") or "",
            log_files=log_files,
        )
    return stat


def commit_metadata_of(
    rows: Iterable[Mapping[str, Any]],
    operation: WriteOperationType,
    extra_metadata: Mapping[str, str],
    *,
    replaced: Mapping[str, Iterable[str]] | None = None,
    compacted: bool = False,
) -> CommitMetadata:
    """The commit metadata of the stats rows tasks returned (grouped by partition, in row order).

    The one place every writer (write pipeline, bootstrap, compaction, clustering) turns its task
    results into `HoodieCommitMetadata`; `replaced` makes it `HoodieReplaceCommitMetadata`.
    """
    by_partition: dict[str, list[WriteStat]] = {}
    for row in rows:
        stat = to_write_stat(row)
        by_partition.setdefault(stat.partition_path or "", []).append(stat)
    return CommitMetadata(
        partition_to_write_stats={p: tuple(stats) for p, stats in by_partition.items()},
        operation_type=operation,
        extra_metadata=dict(extra_metadata),
        compacted=compacted,
        partition_to_replace_file_ids=None
        if replaced is None
        else {p: tuple(ids) for p, ids in replaced.items()},
    )
