"""Meta sync: Hudi's table names for copy-on-write and merge-on-read, and option checks."""

from __future__ import annotations

import pytest
from tests.helpers.timeline_builder import table_props

from pyhudi.exceptions import ConfigError
from pyhudi.spark.sync import check_sync_options, synced_tables
from pyhudi.table.context import TableContext


def _table(tmp_path, table_type: str) -> TableContext:
    props = {**table_props(table_type), "hoodie.table.name": "trips"}
    return TableContext.create(str(tmp_path / table_type), props)


def test_copy_on_write_syncs_one_table_merge_on_read_ro_and_rt(tmp_path):
    cow = synced_tables(_table(tmp_path, "COPY_ON_WRITE"), {})
    assert [(t.database, t.name, t.query_type) for t in cow] == [("default", "trips", "snapshot")]
    mor = _table(tmp_path, "MERGE_ON_READ")
    options = {"hoodie.datasource.hive_sync.database": "lake"}
    assert [(t.qualified, t.query_type) for t in synced_tables(mor, options)] == [
        ("`lake`.`trips_ro`", "read_optimized"),
        ("`lake`.`trips_rt`", "snapshot"),
    ]
    skip = {
        "hoodie.datasource.hive_sync.skip_ro_suffix": "true",
        "hoodie.datasource.hive_sync.table": "t",
    }
    assert [t.name for t in synced_tables(mor, skip)] == ["t", "t_rt"]


def test_partition_fields_and_metastore_uris_must_match_the_session(tmp_path):
    ctx = _table(tmp_path, "COPY_ON_WRITE")
    fields = {"hoodie.datasource.hive_sync.partition_fields": "p"}
    check_sync_options(ctx, fields, None)
    with pytest.raises(ConfigError, match=r"partition_fields=dt differs .*\(p\)"):
        check_sync_options(ctx, {"hoodie.datasource.hive_sync.partition_fields": "dt"}, None)
    uris = {"hoodie.datasource.hive_sync.metastore.uris": "thrift://m:9083"}
    check_sync_options(ctx, uris, "thrift://m:9083")
    with pytest.raises(ConfigError, match=r"metastore.uris=thrift://m:9083.*hive.metastore.uris"):
        check_sync_options(ctx, uris, None)
