"""Reads keep the listing decoded from a metadata table while it is unchanged, and only then."""

from __future__ import annotations

import os
import shutil

from tests.helpers.metadata import committed_data_files

from pyhudi.metadata import MetadataTable
from pyhudi.metadata.listing import clear_listing_cache, metadata_listing, read_view
from pyhudi.reader.planner import plan_read
from pyhudi.table.context import TableContext

V9 = "mor_avro__v9_txns_simple_meta"


def _listing(root):  # type: ignore[no-untyped-def]
    ctx = TableContext.open(str(root))
    return read_view(ctx, {"hoodie.metadata.enable": "true"}).listing


def test_unchanged_metadata_table_reuses_the_decoded_listing(hudi_tables, tmp_path):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[V9], root)
    clear_listing_cache()
    first = _listing(root)
    assert _listing(root) is first
    fresh = metadata_listing(MetadataTable.open(TableContext.open(str(root))))
    assert fresh is not first and fresh == first
    clear_listing_cache()
    assert _listing(root) is not first


def test_metadata_files_rewritten_under_the_same_names_are_decoded_again(hudi_tables, tmp_path):
    """A table deleted and created again at the same instant times (a save-mode-overwrite
    bootstrap) has metadata files of the same names, maybe the same sizes: their modification
    times tell them apart."""
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[V9], root)
    clear_listing_cache()
    first = _listing(root)
    for file in (root / ".hoodie" / "metadata" / "files").iterdir():
        stat = file.stat()
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = _listing(root)
    assert again is not first and again == first


def test_a_data_instant_that_is_no_longer_complete_is_not_served_from_the_cache(
    hudi_tables, tmp_path
):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[V9], root)
    clear_listing_cache()
    before = _listing(root)
    last_write = sorted((root / ".hoodie" / "timeline").glob("*_*.deltacommit"))[-1]
    last_write.unlink()  # the data write is left inflight: its files must drop out
    after = _listing(root)
    assert after != before
    listed = {p: {s.name: s.size_bytes for s in files} for p, files in after.files.items()}
    assert {p: fs for p, fs in listed.items() if fs} == committed_data_files(root)


def _plan(root, enabled: str = "true"):  # type: ignore[no-untyped-def]
    plan = plan_read(TableContext.open(str(root)), {"hoodie.metadata.enable": enabled})
    return plan.base_only + plan.with_logs


def test_plans_reuse_their_slices_only_while_table_and_timeline_are_unchanged(
    hudi_tables, tmp_path
):
    root = tmp_path / "table"
    shutil.copytree(hudi_tables[V9], root)
    clear_listing_cache()
    first = _plan(root)
    again = _plan(root)
    assert again == first and all(a is b for a, b in zip(again, first, strict=True))
    assert first == _plan(root, "false")
    last_write = sorted((root / ".hoodie" / "timeline").glob("*_*.deltacommit"))[-1]
    last_write.unlink()
    after = _plan(root)
    assert after != first
    assert after == _plan(root, "false")
