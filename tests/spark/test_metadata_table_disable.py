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
