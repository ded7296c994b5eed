"""One write operation's job (session, table, settings, task spec, records) and its outcome."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from pyhudi.file_group.merge import MergeSpec
from pyhudi.file_group.spec import WriteTaskSpec
from pyhudi.model.enums import WriteOperationType
from pyhudi.spark_env import default_parallelism
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
    #: New file groups planned for inserts, in write tasks: a group counts its planned records over
    #: `TASK_RECORDS`, at most 1 (sizes the write stage, see `write_tasks`).
    new_file_units: float = 0.0
    #: Records per partition path, when counted: before the instant began (the records then are
    #: checkpointed), or by the upsert for its index lookup.
    incoming_counts: dict[str, int] | None = None


@dataclass
class Outcome:
    stats: list[dict] = field(default_factory=list)
    replaced: dict[str, list[str]] = field(default_factory=dict)


#: Upper bound of the write stage's task count chosen from the file groups it may touch.
MAX_WRITE_TASKS = 2000
#: Records of a new file group worth a write task of its own (~0.2 s of Python work, against the
#: ~30-40 ms of JVM-side set-up a Python task costs); smaller groups share tasks.
TASK_RECORDS = 50_000


def write_tasks(job: WriteJob, rewritten_groups: int) -> int:
    """Tasks of the file-group write stage: the configured shuffle parallelism, else one per base
    file the write may rewrite plus the new file groups' units (never fewer than the cores).

    Rewriting a base file costs the same however few records reach it, so the stage must not be
    sized (and coalesced by adaptive execution) by its shuffle bytes: a 1,000-row upsert touching
    20 file groups would merge all 20 in one task. New file groups and log appends cost what their
    records cost: a new group of `TASK_RECORDS` or more gets a task, smaller ones a share of one
    (ten groups of a few thousand inserts are one task: each Python task costs ~30-40 ms of
    JVM-side set-up)."""
    if job.cfg.parallelism > 0:
        return job.cfg.parallelism
    units = rewritten_groups + math.ceil(job.new_file_units - 1e-9)
    return max(default_parallelism(job.spark), min(units, MAX_WRITE_TASKS))


def in_task_combine(cfg: WriteConfig) -> bool:
    """Pre-combining happens in the file-group tasks (no extra shuffle) for upserts with a non-global index."""
    return (
        cfg.combine_before_write
        and cfg.operation is WriteOperationType.UPSERT
        and not cfg.is_global_index
    )


def merge_spec(cfg: WriteConfig) -> MergeSpec:
    """How the file-group tasks merge a write's records into stored ones."""
    return MergeSpec(
        cfg.merge_mode,
        cfg.ordering_field,
        combine=in_task_combine(cfg),
        deletes_always_apply=cfg.operation is WriteOperationType.DELETE,
    )
