"""A clean that died after deleting files but before it committed: the metadata table still lists
the deleted files (Hudi writes the clean's metadata deltacommit when the clean commits), and the
validator accepts exactly those files as planned deletions; re-running the clean completes it and
the metadata table drops them."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.builders import df_of, trips, trips_options

import pyhudi
from pyhudi.config.clean import CleanConfig
from pyhudi.metadata import MetadataTable, validate
from pyhudi.model.instant import Action
from pyhudi.services.clean.execute import schedule_clean
from pyhudi.table.context import TableContext

OPTIONS = {
    **trips_options(),
    "hoodie.metadata.enable": "true",
    "hoodie.clean.automatic": "false",
}
KEEP_ONE = {
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS",
    "hoodie.cleaner.fileversions.retained": "1",
}


def _listed(path: str) -> set[str]:
    mdt = MetadataTable.open(TableContext.open(path))
    return {name for files in mdt.all_files().values() for name in files}


def test_files_deleted_by_an_unfinished_clean_are_not_differences(spark, tmp_path):
    path = str(tmp_path / "t")
    for ts in (1, 2, 3):
        frame = df_of(spark, trips(0, 10, ts=ts, city="sf"))
        pyhudi.write(frame, path, {**OPTIONS, "hoodie.datasource.write.operation": "upsert"})
    ctx = TableContext.open(path)
    requested = schedule_clean(ctx, CleanConfig.from_options(KEEP_ONE))
    assert requested is not None
    planned = [
        name
        for name in _listed(path)
        if not any(name == b.file_name for b in ctx.view().latest_base_files(None))
    ]
    assert len(planned) == 2
    for name in planned:  # what the clean's executor had deleted when it was killed
        next(Path(path).rglob(name)).unlink()
    report = validate(path)
    assert report.ok, report.differences
    assert set(planned) <= _listed(path)

    pyhudi.HudiTable(path).clean({**OPTIONS, **KEEP_ONE})  # completes the pending clean
    assert TableContext.open(path).active.timeline.with_actions(Action.CLEAN).last.is_completed
    assert validate(path).ok and not set(planned) & _listed(path)

    stray = next(Path(path).rglob(next(iter(_listed(path) - set(planned)))))
    stray.unlink()  # a latest base file gone is still a difference
    assert any(d.subject == stray.name for d in validate(path).differences)
