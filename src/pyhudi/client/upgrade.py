"""Table upgrades and downgrades as Apache Hudi 1.2 runs them: an upgrade by a write asking a
higher `hoodie.write.table.version` (with `hoodie.write.auto.upgrade`, Hudi's default) or by
`pyhudi.upgrade_table`, a downgrade by `pyhudi.downgrade_table` / `pyhudi table downgrade`. The
steps and how pyhudi keeps them crash-safe: `pyhudi.table.upgrade`, `pyhudi.table.downgrade`."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pyspark.sql import SparkSession

from pyhudi.config import write as write_keys
from pyhudi.config.archival import ArchivalConfig
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.services.archival.migrate import downgrade_lsm_history, migrate_archived_timeline
from pyhudi.services.compaction.execute import execute_compaction, schedule_compaction
from pyhudi.table.context import TableContext
from pyhudi.table.downgrade import (
    check_downgrade,
    delete_archive_marker,
    delete_layout_2_timeline,
    finish_downgrade,
    leftover_layout_2_files,
)
from pyhudi.table.faults import fault_point
from pyhudi.table.guard import await_live_writers, rollback_failed_writes_eager
from pyhudi.table.lock import write_scope_lock
from pyhudi.table.lock.manager import table_transaction
from pyhudi.table.upgrade import (
    UpgradeResult,
    check_upgrade,
    delete_layout_1_timeline,
    eight_to_nine,
    finish_upgrade,
    leftover_layout_1_files,
    upgraded_config,
)
from pyhudi.writer.config import resolve_write_config

log = logging.getLogger(__name__)

#: Hudi's upgrade compacts with UnBoundedCompactionStrategy: no IO budget.
_UNBOUNDED_IO = {"hoodie.compaction.target.io": str(2**62)}


def upgrade_table(
    spark: SparkSession | None,
    path: str,
    to_version: int = 9,
    options: Mapping[str, str] | None = None,
) -> UpgradeResult:
    """Upgrade the Hudi table at `path` to table version `to_version` (8 or 9) as Hudi 1.2's
    `CALL upgrade_table` does. `options`: write options (locks, concurrency). A merge-on-read
    table is compacted first, so `spark` is needed for one with log files."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    ctx = TableContext.open(path)
    if ctx.config.version == to_version:
        if leftover_layout_1_files(ctx):
            delete_layout_1_timeline(ctx)
        return UpgradeResult(to_version, to_version)
    check_upgrade(ctx, to_version)
    with write_scope_lock(ctx.uri, options):
        return _upgrade_locked(spark, ctx.reload(), to_version, options)


def upgrade_for_write(
    spark: SparkSession, ctx: TableContext, options: Mapping[str, str]
) -> UpgradeResult | None:
    """Before a write: upgrade the table when the write asks a higher `hoodie.write.table.version`
    and `hoodie.write.auto.upgrade` is on (Hudi's `tryUpgrade`); None when nothing was to do."""
    option = write_keys.WRITE_TABLE_VERSION
    if leftover_layout_1_files(ctx):
        delete_layout_1_timeline(ctx)
    if not option.is_set(options) or not write_keys.AUTO_UPGRADE.get(options):
        return None
    asked = option.get(options)
    if asked <= ctx.config.version:
        return None
    check_upgrade(ctx, asked)
    # The write's options must suit the upgraded table before anything changes.
    resolve_write_config(options, upgraded_config(ctx.config, asked))
    with write_scope_lock(ctx.uri, options):
        result = _upgrade_locked(spark, ctx.reload(), asked, options)
    log.warning("%s: %s before this write (%s=%s)", ctx.uri, result, option.key, asked)
    return result


def downgrade_table(
    spark: SparkSession | None,
    path: str,
    to_version: int,
    options: Mapping[str, str] | None = None,
) -> UpgradeResult:
    """Downgrade the Hudi table at `path` to table version `to_version` (8 or 6) as Hudi 1.2's
    `CALL downgrade_table` does. A merge-on-read table is compacted first (`spark` needed when
    it has log files)."""
    options = {str(k): str(v) for k, v in (options or {}).items()}
    ctx = TableContext.open(path)
    if ctx.config.version == to_version:
        if leftover_layout_2_files(ctx):
            delete_layout_2_timeline(ctx)
        if to_version == 6:
            delete_archive_marker(ctx)
        return UpgradeResult(to_version, to_version)
    check_downgrade(ctx, to_version)
    from_version = ctx.config.version
    archival = ArchivalConfig.from_options(options)
    with write_scope_lock(ctx.uri, options):
        rolled, compaction = _roll_back_and_compact(spark, ctx.reload(), options)
        with table_transaction(ctx, options):
            deleted, moved, archived = finish_downgrade(
                ctx.reload(), to_version, lambda c: downgrade_lsm_history(c, archival)
            )
    return UpgradeResult(from_version, to_version, rolled, compaction, deleted, moved, archived)


def _roll_back_and_compact(
    spark: SparkSession | None, ctx: TableContext, options: Mapping[str, str]
) -> tuple[tuple[str, ...], str | None]:
    """Hudi's `rollbackFailedWritesAndCompact`, at the table's own version."""
    options = {k: v for k, v in options.items() if k != write_keys.WRITE_TABLE_VERSION.key}
    await_live_writers(ctx, options)
    with table_transaction(ctx, options):
        rolled = rollback_failed_writes_eager(
            ctx, options, record=commit_rollback_to_metadata_table
        )
    ctx.reload()
    compaction = _compact_log_files(spark, ctx, options) if ctx.config.is_merge_on_read else None
    fault_point("upgrade.after_compaction")
    return tuple(rolled), compaction


def _upgrade_locked(
    spark: SparkSession | None, ctx: TableContext, to_version: int, options: Mapping[str, str]
) -> UpgradeResult:
    from_version = ctx.config.version
    rolled, compaction = _roll_back_and_compact(spark, ctx, options)
    if from_version == 8:
        with table_transaction(ctx, options):
            eight_to_nine(ctx.reload())
        return UpgradeResult(8, to_version, rolled, compaction)
    archival = ArchivalConfig.from_options(options)
    with table_transaction(ctx, options):
        deleted, moved, archived = finish_upgrade(
            ctx.reload(), to_version, lambda c: migrate_archived_timeline(c, archival)
        )
    return UpgradeResult(from_version, to_version, rolled, compaction, deleted, moved, archived)


def _compact_log_files(
    spark: SparkSession | None, ctx: TableContext, options: Mapping[str, str]
) -> str | None:
    """Hudi's `rollbackFailedWritesAndCompact`: one compaction of every file slice with log files
    (scheduled, then executed); compactions pending before it stay pending."""
    if not any(s.has_log_files for s in ctx.view().latest_file_slices()):
        return None
    if spark is None:
        raise UnsupportedOperationError(
            f"upgrading {ctx.uri} first compacts its log files, a Spark job: pass a SparkSession"
        )
    compaction_options = {**options, **_UNBOUNDED_IO}
    requested = schedule_compaction(ctx, compaction_options, force=True)
    if requested is None:
        return None
    execute_compaction(spark, ctx, requested, compaction_options)
    ctx.reload()
    return requested.time
