"""`HudiTable.compaction`, `.clustering`, `.clean` and `.archive`: one namespace per table service,
all of one shape: `run(...)` (also the namespace called: `table.clean(options)`), and for the
services that write a plan first, `schedule(...)` and `pending()`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyhudi.config.archival import ArchivalConfig
from pyhudi.config.clean import CleanConfig
from pyhudi.config.unknown import check_service_options
from pyhudi.model.instant import Instant
from pyhudi.model.results import ArchiveResult, CleanResult
from pyhudi.services.archival.execute import archive
from pyhudi.services.clean.execute import pending_cleans, run_clean, schedule_clean_locked
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
from pyhudi.timeline.archived import read_archived_instants

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

    __call__ = run

    def pending(self) -> list[Instant]:
        """Compaction plans written and not yet completed, oldest first."""
        return pending_compactions(self.ctx)

    def plan(self, instant: Instant | str) -> Any:
        """The compaction plan of a pending instant (its `HoodieCompactionPlan` record)."""
        return read_plan(self.ctx, _pending(self.ctx.reload(), instant))


@dataclass(frozen=True)
class ClusteringService:
    """Clustering of a table: `schedule()`, `run(spark)`, `pending()`."""

    ctx: TableContext

    def schedule(self, options: Mapping[str, str] | None = None) -> Instant | None:
        """Write a clustering plan now (Hudi's `hoodie.clustering.*` options); None: nothing to do."""
        check_service_options(options)
        return schedule_clustering(self.ctx, options)

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
            return [execute_clustering(spark, self.ctx, instant, options)]
        return run_clustering(spark, self.ctx, options, schedule=not pending_clusterings(self.ctx))

    __call__ = run

    def pending(self) -> list[Instant]:
        """Clustering plans written and not yet completed, oldest first."""
        return pending_clusterings(self.ctx)


@dataclass(frozen=True)
class CleanService:
    """The cleaner: `run()` (or the namespace called: `table.clean(options)`), `schedule()`,
    `pending()`. Hudi's clean options (`hoodie.clean.*`, `hoodie.cleaner.*`)."""

    ctx: TableContext

    def schedule(self, options: Mapping[str, str] | None = None) -> Instant | None:
        """Write a clean plan (`.clean.requested`) when the trigger allows and there is something
        to delete; None otherwise. `run()` executes it."""
        check_service_options(options)
        config = CleanConfig.from_options(options or {})
        return schedule_clean_locked(self.ctx.reload(), config, options)

    def run(self, options: Mapping[str, str] | None = None) -> CleanResult | None:
        """Complete pending cleans, roll back expired failed writes (LAZY), then clean if due;
        returns what the last clean deleted, or None when none ran."""
        check_service_options(options)
        config = CleanConfig.from_options(options or {})
        return run_clean(self.ctx.reload(), config, lock_options=options)

    __call__ = run

    def pending(self) -> list[Instant]:
        """Clean plans written and not yet completed, oldest first."""
        return pending_cleans(self.ctx.reload())


@dataclass(frozen=True)
class ArchivalService:
    """Archival of old instants into the archived timeline (`.hoodie/archived`, or the LSM history
    `.hoodie/timeline/history` of versions 8 and 9): `run()` (or the namespace called:
    `table.archive(options)`), `archived()`. Archival writes no plan, so it has no `schedule()`."""

    ctx: TableContext

    def run(self, options: Mapping[str, str] | None = None) -> ArchiveResult:
        """Archive the instants beyond `hoodie.keep.max.commits` down to `hoodie.keep.min.commits`."""
        check_service_options(options)
        config = ArchivalConfig.from_options(options or {})
        return archive(self.ctx.reload(), config, lock_options=options)

    __call__ = run

    def archived(self) -> list[Instant]:
        """Instants moved to the archived timeline, oldest first."""
        return read_archived_instants(self.ctx)
