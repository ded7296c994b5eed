"""`HudiTable.compaction` / `HudiTable.clustering`: one small namespace per planned service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyhudi.config.unknown import check_service_options
from pyhudi.model.instant import Instant
from pyhudi.services.clustering.execute import (
    execute_clustering,
    pending_clusterings,
    run_clustering,
    schedule_clustering,
)
from pyhudi.services.compaction.execute import (
    _pending,
    execute_compaction,
    pending_compactions,
    read_plan,
    run_compaction,
    schedule_compaction,
)
from pyhudi.table.context import TableContext

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pyhudi.model.results import ServiceOutcome


@dataclass(frozen=True)
class CompactionService:
    """Merge-on-read compaction of a table: `schedule()`, `run(spark)`, `pending()`, `plan(instant)`."""

    ctx: TableContext

    def schedule(
        self, options: Mapping[str, str] | None = None, *, force: bool = True
    ) -> Instant | None:
        """Write a compaction plan now (`force=False`: only when the configured trigger fires)."""
        check_service_options(options)
        return schedule_compaction(self.ctx, options, force=force)

    def run(
        self,
        spark: SparkSession,
        options: Mapping[str, str] | None = None,
        *,
        instant: str | None = None,
    ) -> list[ServiceOutcome]:
        """Execute one pending plan (`instant`) or all of them, scheduling one first if none is pending."""
        check_service_options(options)
        if instant is not None:
            return [execute_compaction(spark, self.ctx, instant, options)]
        return run_compaction(
            spark, self.ctx, options, schedule=not pending_compactions(self.ctx), force=True
        )

    def pending(self) -> list[Instant]:

        return pending_compactions(self.ctx)

    def plan(self, instant: Instant | str) -> Any:

        return read_plan(self.ctx, _pending(self.ctx.reload(), instant))


@dataclass(frozen=True)
class ClusteringService:
    """Clustering of a table: `schedule()`, `run(spark)`, `pending()`."""

    ctx: TableContext

    def schedule(self, options: Mapping[str, str] | None = None) -> Instant | None:
        check_service_options(options)
        return schedule_clustering(self.ctx, options)

    def run(
        self,
        spark: SparkSession,
        options: Mapping[str, str] | None = None,
        *,
        instant: str | None = None,
    ) -> list[ServiceOutcome]:
        check_service_options(options)
        if instant is not None:
            return [execute_clustering(spark, self.ctx, instant, options)]
        return run_clustering(spark, self.ctx, options, schedule=not pending_clusterings(self.ctx))

    def pending(self) -> list[Instant]:

        return pending_clusterings(self.ctx)
