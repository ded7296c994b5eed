"""A pyhudi write with `hoodie.metadata.enable=false` into a table that has a metadata table (as
Hudi 0.14+ writes by default) drops it with one WARNING naming every metadata partition, and the
data stays readable by hudi-rs."""

from __future__ import annotations

import logging

from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.config import table as keys
from pyhudi.metadata import has_metadata_table, metadata_table_path
from pyhudi.table.context import TableContext


def test_upsert_into_a_table_with_a_metadata_table_warns_with_its_partitions(
    spark, tmp_path, caplog
):
    path = str(tmp_path / "t")
    options = {**trips_options(), "hoodie.datasource.write.operation": "insert"}
    pyhudi.write(df_of(spark, trips(0, 6)), path, options)
    ctx = TableContext.open(path)
    for folder in (".hoodie", "files", "record_index"):
        ctx.storage.mkdirs(f"{metadata_table_path(ctx)}/{folder}")
    ctx.update_properties({keys.METADATA_PARTITIONS.key: "files,record_index"})

    with caplog.at_level(logging.WARNING, logger="pyhudi"):
        pyhudi.write(
            df_of(spark, trips(3, 6, ts=2)),
            path,
            {
                **options,
                "hoodie.datasource.write.operation": "upsert",
                "hoodie.metadata.enable": "false",
            },
        )

    warnings = [r.getMessage() for r in caplog.records if "metadata table" in r.getMessage()]
    assert len(warnings) == 1 and "files, record_index" in warnings[0]
    reopened = TableContext.open(path)
    assert not has_metadata_table(reopened) and reopened.config.metadata_partitions == ()
    assert hudi_rs_table(path).num_rows == 9


def test_clean_and_archive_with_the_metadata_table_disabled_delete_it(spark, tmp_path, caplog):
    """Hudi's table service client applies `hoodie.metadata.enable=false` before it runs a
    service (`maybeDeleteMetadataTable`), so a standalone clean or archive deletes the metadata
    table as a write does; with the key unset they keep maintaining it."""
    path = str(tmp_path / "t")
    options = trips_options()
    for ts in range(1, 4):
        pyhudi.write(df_of(spark, trips(0, 6, ts=ts)), path, options)
    table = pyhudi.HudiTable(path)
    retain_one = {"hoodie.cleaner.commits.retained": "1"}
    assert table.clean(retain_one) is not None
    assert has_metadata_table(TableContext.open(path)), "unset: the clean keeps maintaining it"

    pyhudi.write(df_of(spark, trips(0, 6, ts=4)), path, options)
    with caplog.at_level(logging.WARNING, logger="pyhudi"):
        assert table.clean({**retain_one, "hoodie.metadata.enable": "false"}) is not None
    assert any("files" in r.getMessage() for r in caplog.records if "metadata" in r.getMessage())
    reopened = TableContext.open(path)
    assert not has_metadata_table(reopened) and reopened.config.metadata_partitions == ()
    assert hudi_rs_table(path).num_rows == 6

    pyhudi.write(df_of(spark, trips(0, 6, ts=5)), path, options)  # the default rebuilds it
    assert has_metadata_table(TableContext.open(path))
    table.archive({"hoodie.metadata.enable": "false"})
    reopened = TableContext.open(path)
    assert not has_metadata_table(reopened) and reopened.config.metadata_partitions == ()
    assert pyhudi.read(spark, path).count() == 6 == hudi_rs_table(path).num_rows
