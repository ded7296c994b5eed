"""A metadata-table compaction SIGKILLed at each of its steps (a real process, `fault_point`):
reads of the metadata table stay what they were, and the next services run completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from tests.helpers.mdt_builder import FILES_GROUP, MdtBuilder, disk_files

from pyhudi.metadata import MetadataTable, validate
from pyhudi.model.instant import Action
from pyhudi.services.metadata_table import run_metadata_table_services

TIMES = [f"2024041819{i:02d}00000" for i in range(1, 12)]
COMPACTION = TIMES[8] + "001"
SCRIPT = (
    "import sys\n"
    "from pyhudi.table.context import TableContext\n"
    "from pyhudi.config.metadata_services import MetadataServicesConfig\n"
    "from pyhudi.metadata.compaction import compact_if_necessary\n"
    "data = TableContext.open(sys.argv[1])\n"
    "mdt = TableContext.open(sys.argv[1] + '/.hoodie/metadata')\n"
    "compact_if_necessary(data, mdt, MetadataServicesConfig())\n"
    "print('done', flush=True)\n"
)
POINTS = [
    "metadata_compaction.after_requested",
    "metadata_compaction.after_inflight",
    "metadata_compaction.after_base_files",
    "metadata_compaction.after_commit",
]


def _files(builder: MdtBuilder) -> dict:
    return MetadataTable.open(builder.data()).all_files()


@pytest.mark.parametrize("point", POINTS)
def test_metadata_compaction_killed_at_each_step_is_finished_by_the_next_run(
    hudi_tables, tmp_path, point
):
    built = MdtBuilder(hudi_tables["cow__v6_simplekeygen_nonhivestyle"], tmp_path / "t")
    for i in range(9):
        built.commit(TIMES[i], ("10", "30")[i % 2])
    before = _files(built)
    mark = tmp_path / "mark"
    env = {**os.environ, "PYHUDI_FAULT_POINT": point, "PYHUDI_FAULT_MARK": str(mark)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(built.root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert mark.read_text().split()[0] == point
    assert _files(built) == before  # a pending (or just completed) compaction reads the same
    timeline = built.mdt().active.timeline
    assert [i.time for i in timeline if i.time == COMPACTION] == [COMPACTION]
    assert any(i.time == COMPACTION and i.is_completed for i in timeline) is point.endswith(
        "after_commit"
    )
    result = run_metadata_table_services(built.data())
    compaction = built.mdt().active.timeline.completed().with_actions(Action.COMMIT).last
    assert compaction is not None and compaction.time == COMPACTION
    assert result.compaction is None or result.compaction.time == COMPACTION
    assert (built.mdt_root / "files" / f"{FILES_GROUP}_0-0-0_{COMPACTION}.hfile").exists()
    assert _files(built) == before
    completed = set(built.data().active.timeline.completed().times())
    assert before == disk_files(built.root, completed)
    report = validate(built.data())
    assert report.ok, [str(d) for d in report.differences]
