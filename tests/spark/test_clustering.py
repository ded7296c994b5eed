"""Clustering: plans, sorted rewrites, replaced file groups, pending-clustering update rules."""

from __future__ import annotations

import os

import pyarrow.parquet as pq
import pytest
from tests.helpers.builders import df_of, trips, trips_options
from tests.helpers.oracle import hudi_rs_table, rows

import pyhudi
from pyhudi.codec import avro_schemas
from pyhudi.exceptions import PendingServiceError, UnsupportedOperationError, WriteConflictError
from pyhudi.metadata import validate
from pyhudi.services.clustering.execute import (
    execute_clustering,
    pending_clusterings,
    schedule_clustering,
)
from pyhudi.table.context import TableContext
from pyhudi.table.guard import rollbacks_naming

COLUMNS = ["_hoodie_commit_time", "_hoodie_record_key", "uuid", "ts", "fare"]
BASE = {**trips_options(), "hoodie.parquet.small.file.limit": "0"}


def _small_files_table(spark, tmp_path, extra=None, batches=4):
    path = str(tmp_path / "t")
    options = {**BASE, **(extra or {})}
    for i in range(batches):
        pyhudi.write(
            df_of(spark, trips(i * 10, 10, city="sf")),
            path,
            {**options, "hoodie.datasource.write.operation": "insert"},
        )
    return path, options


def _both(spark, path, as_of=None):
    ours = rows(
        pyhudi.read(spark, path, {"as.of.instant": as_of} if as_of else None).toArrow(),
        columns=COLUMNS,
    )
    assert ours == rows(hudi_rs_table(path, as_of=as_of), columns=COLUMNS)
    return ours


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clustering_rewrites_small_files_sorted_and_replaces_them(spark, tmp_path, table_type):
    extra = {
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.clustering.plan.strategy.sort.columns": "fare",
    }
    path, options = _small_files_table(spark, tmp_path, extra)
    if table_type == "MERGE_ON_READ":  # logs in the inputs: clustering reads merged slices
        pyhudi.write(
            df_of(spark, trips(0, 5, ts=7, city="sf")),
            path,
            {**options, "hoodie.datasource.write.operation": "upsert"},
        )
    before = _both(spark, path)
    table = pyhudi.HudiTable(path)
    inputs = {s.file_id for s in table.latest_file_slices()}
    options = {
        **options,
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "1",
    }
    result = pyhudi.write(
        df_of(spark, []), path, {**options, "hoodie.datasource.write.operation": "insert"}
    )
    assert any(s.startswith("clustering") for s in result.services)
    clustering = table.refresh().commits()[-1]
    metadata = table.commit_metadata(clustering)
    assert (
        metadata.operation_type.value == "CLUSTER"
        and {fid for _, fid in metadata.replaced_file_ids()} == inputs
    )
    with open(
        os.path.join(path, ".hoodie", f"{clustering.time}.replacecommit.requested"), "rb"
    ) as handle:
        requested = avro_schemas.decode_container(handle.read())
    assert requested["operationType"] == "CLUSTER" and requested["clusteringPlan"]["inputGroups"]
    (new_slice,) = table.latest_file_slices()
    fares = (
        pq.read_table(os.path.join(path, new_slice.base_file.relative_path))
        .column("fare")
        .to_pylist()
    )
    assert fares == sorted(fares)
    assert _both(spark, path) == before  # same records, commit times kept
    assert (
        _both(spark, path, as_of=table.commits()[-2].time) == before
    )  # replaced groups visible before


def test_updates_to_file_groups_under_pending_clustering_are_rejected(spark, tmp_path):
    path, options = _small_files_table(spark, tmp_path, batches=2)
    pending = schedule_clustering(TableContext.open(path), options)
    assert pending is not None
    with pytest.raises(PendingServiceError, match=pending.time):
        pyhudi.write(
            df_of(spark, trips(0, 2, ts=5, city="sf")),
            path,
            {**options, "hoodie.datasource.write.operation": "upsert"},
        )
    # Inserts do not touch the clustered groups and go on.
    pyhudi.write(
        df_of(spark, trips(50, 2, city="sf")),
        path,
        {**options, "hoodie.datasource.write.operation": "insert"},
    )
    execute_clustering(spark, TableContext.open(path), pending.time, options)
    assert len(_both(spark, path)) == 22


def test_allowed_updates_make_the_clustering_abort_and_be_planned_again(spark, tmp_path):
    allow = {
        "hoodie.clustering.updates.strategy": "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy"
    }
    path, options = _small_files_table(spark, tmp_path, allow, batches=2)
    pending = schedule_clustering(TableContext.open(path), options)
    assert pending is not None
    pyhudi.write(
        df_of(spark, trips(0, 2, ts=5, city="sf")),
        path,
        {**options, "hoodie.datasource.write.operation": "upsert"},
    )
    before = _both(spark, path)
    with pytest.raises(WriteConflictError, match=f"clustering {pending.time} aborted.*rolled back"):
        execute_clustering(spark, TableContext.open(path), pending.time, options)
    # The plan could never complete (the upsert's log or base file is not in it): rolled back
    # whole, with a rollback instant naming it and none of its files left.
    ctx = TableContext.open(path)
    assert not pending_clusterings(ctx)
    assert not [i for i in ctx.active.timeline if i.time == pending.time]
    assert rollbacks_naming(ctx, pending.time)
    assert not any(pending.time in name for _, _, names in os.walk(path) for name in names)
    assert validate(path).ok  # the metadata table lists what is on storage
    assert _both(spark, path) == before
    assert {r["uuid"]: r["ts"] for r in before}["id-00000"] == 5
    # The next schedule plans the file groups again, with the upsert in them, and completes.
    again = schedule_clustering(TableContext.open(path), options)
    assert again is not None and again.time > pending.time
    execute_clustering(spark, TableContext.open(path), again.time, options)
    assert _both(spark, path) == before and not pending_clusterings(TableContext.open(path))


@pytest.mark.parametrize("operation", ["insert_overwrite", "delete_partition"])
def test_a_clustering_planned_before_an_overwrite_does_not_bring_its_rows_back(
    spark, tmp_path, operation
):
    """The overwrite replaced the plan's input file groups: completing the plan would write their
    old rows again. It is rolled back instead."""
    path, options = _small_files_table(spark, tmp_path, batches=2)
    pending = schedule_clustering(TableContext.open(path), options)
    assert pending is not None
    extra = {"hoodie.datasource.write.partitions.to.delete": "sf"}
    pyhudi.write(
        df_of(spark, trips(100, 3, city="sf")),
        path,
        {**options, **extra, "hoodie.datasource.write.operation": operation},
    )
    before = _both(spark, path)
    assert len(before) == (3 if operation == "insert_overwrite" else 0)
    with pytest.raises(WriteConflictError, match="replaced its input file group"):
        execute_clustering(spark, TableContext.open(path), pending.time, options)
    assert _both(spark, path) == before
    assert not pending_clusterings(TableContext.open(path))
    assert validate(path).ok


def test_a_killed_clustering_is_reset_and_executed_again(spark, tmp_path):
    path, options = _small_files_table(spark, tmp_path, batches=2)
    ctx = TableContext.open(path)
    pending = schedule_clustering(ctx, options)
    ctx.active.transition_to_inflight(pending)
    junk = os.path.join(path, "sf", f"cafe-0_0-1-1_{pending.time}.parquet")
    with open(junk, "wb") as handle:
        handle.write(b"partial")
    marker = os.path.join(
        ctx.marker_folder(pending.time), "sf", f"cafe-0_0-1-1_{pending.time}.parquet.marker.CREATE"
    )
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    open(marker, "wb").close()
    before = _both(spark, path)
    execute_clustering(spark, TableContext.open(path), pending.time, options)
    assert not os.path.exists(junk) and not pending_clusterings(TableContext.open(path))
    assert _both(spark, path) == before


def test_clustering_is_refused_on_a_bucket_index_table(spark, tmp_path):
    """Clustering writes new file groups: records would leave their buckets, and the next upsert
    would write their keys again (it did: 40 rows for 30 keys)."""
    path = str(tmp_path / "t")
    bucket = {**BASE, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    for i in range(2):
        pyhudi.write(
            df_of(spark, trips(i * 10, 10, city="sf")),
            path,
            {**bucket, "hoodie.datasource.write.operation": "upsert"},
        )
    before = sorted(os.listdir(os.path.join(path, ".hoodie")))
    # Known by the option, and without it (a service run) by the bucket-named file groups.
    for options in (bucket, BASE):
        with pytest.raises(UnsupportedOperationError, match="simple bucket index"):
            schedule_clustering(TableContext.open(path), options)
    inline = {**bucket, "hoodie.clustering.inline": "true"}
    with pytest.raises(UnsupportedOperationError, match=r"hoodie.clustering.inline=true\) is not"):
        pyhudi.write(
            df_of(spark, trips(0, 1, city="sf")),
            path,
            {**inline, "hoodie.datasource.write.operation": "upsert"},
        )
    assert sorted(os.listdir(os.path.join(path, ".hoodie"))) == before
    assert len(_both(spark, path)) == 20
