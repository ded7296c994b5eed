"""How a read merges log records: payload semantics from the table config and read options."""

from __future__ import annotations

from collections.abc import Mapping

from pyhudi.config import read as read_keys
from pyhudi.reader.planner import ReadPlan
from pyhudi.table.context import TableContext
from pyhudi.table.payload import MergeMode, merge_mode_of


def merge_settings(
    ctx: TableContext, plan: ReadPlan, options: Mapping[str, str] | None = None
) -> tuple[str, str | None, bool]:
    """(merge mode, ordering field, skip merge) for a table read."""
    try:
        mode = merge_mode_of(ctx.config.payload_class)
    except Exception:
        mode = MergeMode.COMMIT_TIME_ORDERING
    merge_mode = ctx.config.get("hoodie.record.merge.mode")
    if merge_mode in ("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"):
        mode = MergeMode(merge_mode)
    skip = read_keys.MERGE_TYPE.get(options or {}) == "skip_merge"
    return mode.value, ctx.config.precombine_field, skip
