"""One write operation's job (session, table, settings, task spec, records) and its outcome."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.model.enums import WriteOperationType
from pyhudi.table.context import TableContext
from pyhudi.writer.config import WriteConfig


@dataclass
class WriteJob:
    spark: SparkSession
    ctx: TableContext
    cfg: WriteConfig
    spec: WriteTaskSpec
    records: DataFrame
    #: File groups chosen as small files for inserts (merge-on-read merges them into new base files).
    small_file_ids: set[str] = field(default_factory=set)


@dataclass
class Outcome:
    stats: list[dict] = field(default_factory=list)
    replaced: dict[str, list[str]] = field(default_factory=dict)


def in_task_combine(cfg: WriteConfig) -> bool:
    """Pre-combining happens in the file-group tasks (no extra shuffle) for upserts with a non-global index."""
    return (
        cfg.combine_before_write
        and cfg.operation is WriteOperationType.UPSERT
        and not cfg.is_global_index
    )
