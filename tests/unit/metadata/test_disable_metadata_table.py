"""A pyhudi write into a table with a metadata table drops it, never silently: one WARNING names
every metadata partition it disables (issue 13: `hoodie.metadata.enable=false`)."""

from __future__ import annotations

import logging
import shutil

from pyhudi.config import table as keys
from pyhudi.metadata import has_metadata_table, metadata_partition_names, metadata_table_path
from pyhudi.metadata.writer import disable_metadata_table
from pyhudi.table.context import TableContext


def _table_with_metadata(hudi_tables, tmp_path) -> TableContext:
    root = tmp_path / "table"
    shutil.copytree(hudi_tables["cow__v6_nonpartitioned"], root)
    ctx = TableContext.open(str(root))
    mdt = metadata_table_path(ctx)
    for folder in (".hoodie", "files", "column_stats", "bloom_filters"):
        ctx.storage.mkdirs(f"{mdt}/{folder}")
    ctx.update_properties(
        {
            keys.METADATA_PARTITIONS.key: "files,column_stats",
            keys.METADATA_PARTITIONS_INFLIGHT.key: "record_index",
        }
    )
    return ctx


def test_disabling_warns_with_every_metadata_partition_and_clears_the_properties(
    hudi_tables, tmp_path, caplog
):
    ctx = _table_with_metadata(hudi_tables, tmp_path)
    assert has_metadata_table(ctx)
    assert metadata_partition_names(ctx) == [
        "bloom_filters",
        "column_stats",
        "files",
        "record_index",
    ]
    with caplog.at_level(logging.WARNING, logger="pyhudi.metadata.writer"):
        disable_metadata_table(ctx)
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = warning.getMessage()
    assert "bloom_filters, column_stats, files, record_index" in message
    assert keys.METADATA_PARTITIONS.key in message and ctx.base_path in message
    reopened = TableContext.open(ctx.base_path)  # the rewritten hoodie.properties verifies
    assert reopened.config.metadata_partitions == ()
    assert not reopened.config.get(keys.METADATA_PARTITIONS_INFLIGHT.key)
    assert not ctx.storage.exists(metadata_table_path(ctx))


def test_a_table_without_metadata_table_is_left_alone_without_warning(
    hudi_tables, tmp_path, caplog
):
    root = tmp_path / "plain"
    shutil.copytree(hudi_tables["cow__v6_nonpartitioned"], root)
    ctx = TableContext.open(str(root))
    before = (root / ".hoodie" / "hoodie.properties").read_bytes()
    with caplog.at_level(logging.WARNING):
        disable_metadata_table(ctx)
    assert not caplog.records
    assert (root / ".hoodie" / "hoodie.properties").read_bytes() == before
