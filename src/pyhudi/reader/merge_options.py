"""How a read merges log records: the table's merge mode and ordering fields, and read options."""

from __future__ import annotations

from collections.abc import Mapping

from pyhudi.config import read as read_keys
from pyhudi.merge.config import resolve_merge_config
from pyhudi.reader.planner import ReadPlan
from pyhudi.table.context import TableContext


def merge_settings(
    ctx: TableContext, plan: ReadPlan, options: Mapping[str, str] | None = None
) -> tuple[str, str | None, bool]:
    """(merge mode, ordering fields comma-separated, skip merge) for a table read.

    A merge mode pyhudi does not implement (CUSTOM, partial updates) raises `ConfigError`.
    """
    merge = resolve_merge_config(ctx.config, ctx.base_path)
    skip = read_keys.MERGE_TYPE.get(options or {}) == "skip_merge"
    return merge.mode.value, ",".join(merge.ordering_fields) or None, skip
