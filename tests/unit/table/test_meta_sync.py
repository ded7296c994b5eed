"""Meta sync bookkeeping without Spark: Hudi's partition value extractors, their defaults, and the
option checks that refuse what pyhudi does not do before anything is registered."""

from __future__ import annotations

import pytest
from tests.helpers.timeline_builder import Base, TimelineBuilder, table_props

from pyhudi.exceptions import ConfigError
from pyhudi.model.enums import WriteOperationType
from pyhudi.model.instant import Action
from pyhudi.spark.sync import check_sync_options
from pyhudi.table.context import TableContext
from pyhudi.table.meta_sync import (
    dropped_partitions_since,
    extractor_class,
    latest_commit_time,
    needs_full_listing,
    partition_events,
    partition_values,
    same_location,
    written_partitions_since,
)

HIVE = "org.apache.hudi.hive."
KEY = "hoodie.datasource.hive_sync.partition_extractor_class"


def _table(tmp_path, fields: str | None, **props: str) -> TableContext:
    base = table_props(partitioned=False)
    if fields:
        base["hoodie.table.partition.fields"] = fields
    return TableContext.create(str(tmp_path / "t"), {**base, **props})


@pytest.mark.parametrize(
    ("fields", "props", "expected"),
    [
        (None, {}, "NonPartitionedExtractor"),
        (
            "p",
            {"hoodie.datasource.write.hive_style_partitioning": "true"},
            "HiveStylePartitionValueExtractor",
        ),
        ("p", {}, "MultiPartKeysValueExtractor"),
        (
            "a,b",
            {"hoodie.datasource.write.hive_style_partitioning": "true"},
            "MultiPartKeysValueExtractor",
        ),
    ],
)
def test_default_extractor_is_the_one_hudi_infers(tmp_path, fields, props, expected):
    assert extractor_class(_table(tmp_path, fields, **props), {}) == HIVE + expected


@pytest.mark.parametrize(
    ("extractor", "fields", "path", "values"),
    [
        ("MultiPartKeysValueExtractor", "a,b", "a=1/b=x", ("1", "x")),
        ("MultiPartKeysValueExtractor", "a,b", "2024/x", ("2024", "x")),
        ("HiveStylePartitionValueExtractor", "p", "p=sf", ("sf",)),
        ("SinglePartPartitionValueExtractor", "p", "2024/01/02", ("2024/01/02",)),
        ("SlashEncodedDayPartitionValueExtractor", "d", "2024/1/2", ("2024-01-02",)),
        ("SlashEncodedHourPartitionValueExtractor", "h", "2024/01/02/3", ("2024-01-02-03",)),
    ],
)
def test_partition_values_follow_hudis_extractors(tmp_path, extractor, fields, path, values):
    ctx = _table(tmp_path, fields)
    assert partition_values(ctx, HIVE + extractor, path) == values


def test_values_that_do_not_match_the_partition_fields_are_an_error_naming_the_extractor(tmp_path):
    ctx = _table(tmp_path, "d")
    with pytest.raises(ConfigError, match=r"MultiPartKeysValueExtractor.*'2024/01/02'.*3 values"):
        partition_values(ctx, HIVE + "MultiPartKeysValueExtractor", "2024/01/02")
    with pytest.raises(ConfigError, match=r"HiveStylePartitionValueExtractor.*partition_key="):
        partition_values(ctx, HIVE + "HiveStylePartitionValueExtractor", "2024")


def test_unknown_extractor_and_managed_tables_are_refused_before_any_sync(tmp_path):
    ctx = _table(tmp_path, "p")
    with pytest.raises(ConfigError, match=r"partition_extractor_class=com.acme.X.*standard"):
        check_sync_options(ctx, {KEY: "com.acme.X"}, None)
    managed = {"hoodie.datasource.hive_sync.create_managed_table": "true"}
    with pytest.raises(ConfigError, match=r"create_managed_table=true.*EXTERNAL"):
        check_sync_options(ctx, managed, None)
    check_sync_options(ctx, {KEY: HIVE + "SlashEncodedDayPartitionValueExtractor"}, None)


def test_locations_compare_without_scheme_and_authority():
    assert same_location("file:/data/t/p=1", "file:///data/t/p=1/")
    assert not same_location("file:/data/t/p=1", "file:///data/t/p=2")


def test_a_table_without_commits_lists_storage_and_drops_what_the_metastore_has_extra(tmp_path):
    ctx = _table(tmp_path, "p")
    events = partition_events(ctx, HIVE + "MultiPartKeysValueExtractor", {("x",): "file:/x"}, None)
    assert [(e.kind.value, e.values) for e in events] == [("DROP", ("x",))]
    unpartitioned = _table(tmp_path / "u", None)
    assert partition_events(unpartitioned, HIVE + "NonPartitionedExtractor", {}, None) == []


MULTI = HIVE + "MultiPartKeysValueExtractor"


def test_incremental_events_add_written_partitions_and_drop_replaced_ones(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    first = tb.write(Base("a", "f1"), Base("b", "f2"))
    tb.write(Base("c", "f3"))
    overwrite = WriteOperationType.INSERT_OVERWRITE_TABLE
    tb.write(
        Base("c", "f4"),
        action=Action.REPLACE_COMMIT,
        operation=overwrite,
        replaced={"a": ["f1"], "c": ["f3"]},
    )
    ctx = TableContext.open(tb.ctx.uri)
    assert written_partitions_since(ctx, first) == ["c", "a"]
    # a is replaced and not written again; c is replaced and written by the same instant
    assert dropped_partitions_since(ctx, first) == {"a"}
    base = ctx.uri.rstrip("/")
    metastore = {("a",): f"{base}/a", ("b",): f"{base}/b"}
    events = partition_events(ctx, MULTI, metastore, first)
    assert [(e.kind.value, e.values) for e in events] == [("ADD", ("c",)), ("DROP", ("a",))]


def test_a_moved_partition_is_updated_and_a_full_listing_runs_without_a_synced_commit(tmp_path):
    tb = TimelineBuilder.create(tmp_path / "t")
    tb.write(Base("a", "f1"))
    ctx = TableContext.open(tb.ctx.uri)
    moved = {("a",): "file:/elsewhere/a", ("gone",): "file:/x/gone"}
    events = partition_events(ctx, MULTI, moved, None)
    assert [(e.kind.value, e.values) for e in events] == [("UPDATE", ("a",)), ("DROP", ("gone",))]
    # a last synced commit older than the active timeline (archived) also lists everything
    assert needs_full_listing(ctx, "00000000000000") and not needs_full_listing(
        ctx, latest_commit_time(ctx)
    )
