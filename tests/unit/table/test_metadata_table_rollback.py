"""Rolling back a data instant also rolls back the metadata table's deltacommit for it (Hudi 0.14:
the metadata write client's rollback at `<data rollback time>006`), on hand-built v6 metadata
tables; a data instant older than the metadata table's latest compaction is refused untouched."""

from __future__ import annotations

import os

import pytest
from tests.helpers.mdt_builder import MdtBuilder, disk_files, instant

from pyhudi.codec import avro_schemas
from pyhudi.codec.log.reader import iter_blocks
from pyhudi.exceptions import UnsupportedOperationError
from pyhudi.metadata import MetadataTable, validate
from pyhudi.metadata.writer import commit_rollback_to_metadata_table
from pyhudi.model.enums import LogBlockType
from pyhudi.model.instant import Action, State
from pyhudi.table.rollback import rollback_failed_writes, rollback_instant

T3, T4 = "20240418172900000", "20240418173000000"


@pytest.fixture
def built(hudi_tables, tmp_path) -> MdtBuilder:
    builder = MdtBuilder(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], tmp_path / "t")
    builder.commit(T3)
    return builder


def _listing_equals_storage(builder: MdtBuilder) -> None:
    data = builder.data()
    completed = set(data.active.timeline.completed().times())
    assert MetadataTable.open(data).all_files() == disk_files(builder.root, completed)
    report = validate(data)
    assert report.ok, [str(d) for d in report.differences]


def test_rollback_of_a_failed_write_rolls_back_its_pending_metadata_deltacommit(built):
    name = built.write_data(T4, complete=False)
    log = built.deltacommit(T4, {"10": {name: 1}}, complete=False)
    rolled = rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    assert len(rolled) == 1
    mdt = built.mdt()
    assert T4 not in mdt.active.timeline.times()
    (rollback,) = mdt.active.timeline.with_actions(Action.ROLLBACK)
    data_rollback = built.data().active.timeline.with_actions(Action.ROLLBACK).last
    assert rollback.state is State.COMPLETED and rollback.time == data_rollback.time + "006"
    # the deltacommit appended to the init slice: a ROLLBACK command block as the next version
    logs = sorted(n for n in os.listdir(built.mdt_root / "files") if n.startswith("."))
    assert log in logs and len(logs) == 3
    with open(built.mdt_root / "files" / logs[-1], "rb") as handle:
        (block,) = list(iter_blocks(handle))
    assert block.block_type is LogBlockType.COMMAND_BLOCK
    assert not os.path.exists(built.mdt().marker_folder(T4))
    assert not (built.root / "10" / name).exists()
    _listing_equals_storage(built)


def test_rollback_removes_a_completed_metadata_deltacommit_of_a_failed_write(built):
    name = built.write_data(T4, complete=False)
    built.deltacommit(T4, {"10": {name: 1}})  # the data commit crashed after the metadata one
    assert MetadataTable.open(built.data()).files_in("10").get(name) is None  # data pending
    rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    mdt = built.mdt()
    assert T4 not in mdt.active.timeline.times()
    assert not (built.mdt_root / ".hoodie" / f"{T4}.deltacommit").exists()
    assert len(list(mdt.active.timeline.with_actions(Action.ROLLBACK))) == 1
    _listing_equals_storage(built)


def test_rollback_without_a_metadata_deltacommit_leaves_the_metadata_table_alone(built):
    built.write_data(T4, complete=False)
    before = sorted(os.listdir(built.mdt_root / ".hoodie"))
    rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    assert sorted(os.listdir(built.mdt_root / ".hoodie")) == before
    _listing_equals_storage(built)


def test_rollback_older_than_the_metadata_compaction_is_refused_untouched(built):
    older = "20240418172850000"
    built.write_data(older, complete=False)
    mdt = built.mdt()
    compaction = mdt.active.create_requested(T3 + "001", Action.COMPACTION)
    mdt.active.complete(mdt.active.transition_to_inflight(compaction), b"{}")
    snapshot = {p: sorted(os.listdir(p)) for p in (built.root / ".hoodie", built.root / "10")}
    with pytest.raises(UnsupportedOperationError, match=f"{older}.*compacted at {T3}001"):
        rollback_instant(
            built.data(), instant(built.data(), older), record=commit_rollback_to_metadata_table
        )
    assert {p: sorted(os.listdir(p)) for p in snapshot} == snapshot


def test_a_metadata_rollback_left_pending_by_a_dead_attempt_is_replaced(built):
    name = built.write_data(T4, complete=False)
    built.deltacommit(T4, {"10": {name: 1}}, complete=False)
    mdt = built.mdt()
    plan = {
        "instantToRollback": {"commitTime": T4, "action": "deltacommit"},
        "RollbackRequests": [],
        "version": 1,
    }
    dead = "20240418173100000006"
    mdt.active.create_requested(
        dead, Action.ROLLBACK, avro_schemas.encode_container("HoodieRollbackPlan", plan)
    )
    rollback_failed_writes(built.data(), record=commit_rollback_to_metadata_table)
    rollbacks = list(built.mdt().active.timeline.with_actions(Action.ROLLBACK))
    assert [r.state for r in rollbacks] == [State.COMPLETED] and rollbacks[0].time != dead
    _listing_equals_storage(built)
