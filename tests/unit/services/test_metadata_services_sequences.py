"""Seeded random sequences of data commits (some replacing a file), failed writes (their metadata
deltacommit pending or completed) and their rollbacks, with the metadata table's services run
after every step: the metadata listing equals storage and `validate` is clean after each step,
and the metadata table compacts, cleans and archives along the way."""

from __future__ import annotations

import os
import random

import pytest
from tests.helpers.mdt_builder import MdtBuilder, disk_files

from pyhudi.metadata import MetadataTable, validate
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.instant import Action
from pyhudi.services.metadata_table import run_metadata_table_services
from pyhudi.table.rollback import rollback_failed_writes
from pyhudi.timeline.archived import read_archived_instants

OPTIONS = {"hoodie.keep.min.commits": "20", "hoodie.keep.max.commits": "25"}


def _step(builder: MdtBuilder, rng: random.Random, time: str) -> None:
    data = builder.data()
    if data.active.timeline.pending():
        assert rollback_failed_writes(data, record=commit_rollback_to_metadata_table)
        return
    partition = rng.choice(["10", "20", "30"])
    roll = rng.random()
    if roll < 0.15:  # a write that dies before its metadata deltacommit completes
        name = builder.write_data(time, partition, complete=False)
        builder.deltacommit(time, {partition: {name: 1}}, complete=rng.random() < 0.5)
        return
    listed = sorted(n for n in os.listdir(builder.root / partition) if n.endswith(".parquet"))
    replaces = rng.choice(listed) if roll > 0.8 and len(listed) > 1 else None
    builder.commit(time, partition, replaces=replaces)


def _check(builder: MdtBuilder) -> None:
    data = builder.data()
    committed = set(data.active.timeline.completed().times())
    committed |= {i.time for i in read_archived_instants(data)}
    assert MetadataTable.open(data).all_files() == disk_files(builder.root, committed)
    report = validate(data)
    assert report.ok, [str(d) for d in report.differences]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_sequences_keep_the_metadata_table_exact(hudi_tables, tmp_path, seed):
    rng = random.Random(seed)
    builder = MdtBuilder(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], tmp_path / "t")
    for _ in range(70):
        _step(builder, rng, builder.data().new_instant_time())  # after every earlier one
        run_metadata_table_services(builder.data(), OPTIONS)
        _check(builder)
    timeline = builder.mdt().active.timeline
    assert timeline.completed().with_actions(Action.COMMIT)  # compacted
    assert timeline.completed().with_actions(Action.CLEAN)  # cleaned
    assert timeline.completed().with_actions(Action.ROLLBACK)  # rolled back failed writes
