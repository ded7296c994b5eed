"""What the process tests assert about a table: both readers agree, no duplicates, no orphans."""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from tests.helpers.oracle import hudi_rs_table

import pyhudi
from pyhudi.codec.file_names import is_partition_metafile, parse_base_file, parse_log_file
from pyhudi.metadata import has_metadata_table, validate
from pyhudi.storage import Storage
from pyhudi.table.context import TableContext

#: Hudi's multi-writer options, as a Hudi user passes them.
OCC = {
    "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
    "hoodie.write.lock.provider": (
        "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
    ),
    "hoodie.cleaner.policy.failed.writes": "LAZY",
}
#: Heartbeats that expire one second after a writer dies, so a test need not wait 2 minutes.
FAST_HEARTBEAT = {
    "hoodie.client.heartbeat.interval_in_ms": "500",
    "hoodie.client.heartbeat.tolerable.misses": "2",
}
HEARTBEAT_EXPIRY_S = 1.0

State = dict[str, tuple[str, float]]


def _state_of(keys: list, cities: list, fares: list, reader: str) -> State:
    counts = Counter(keys)
    duplicates = sorted(k for k, n in counts.items() if n > 1)
    assert not duplicates, f"{reader} sees duplicate keys: {duplicates[:10]}"
    return {k: (c, float(f)) for k, c, f in zip(keys, cities, fares)}


def assert_metadata_table_valid(path: str | Path) -> None:
    """A table with a built metadata table: the validator finds no difference with storage."""
    ctx = TableContext.open(str(path))
    if not has_metadata_table(ctx) or "files" not in ctx.config.metadata_partitions:
        return  # none, or its initialisation never completed (readers list storage)
    report = validate(ctx)
    assert report.ok, f"metadata table of {path}: {report.differences}\n{timeline_summary(path)}"


def fault_marks(mark: Path) -> Counter[str]:
    """How often a crash process reached each fault point: its `PYHUDI_FAULT_MARK` file, a
    `<point> <pid>` line per arrival (none yet: empty)."""
    lines = mark.read_text().splitlines() if mark.exists() else []
    return Counter(line.split()[0] for line in lines if line.strip())


def table_state(spark, path: str | Path) -> State:  # type: ignore[no-untyped-def]
    """record key -> (city, fare), read by hudi-rs and by pyhudi, asserted equal and duplicate-free;
    a metadata table, when the table has one, validates clean."""
    assert_metadata_table_valid(path)
    theirs = hudi_rs_table(str(path))
    rs_state = (
        _state_of(
            theirs.column("uuid").to_pylist(),
            theirs.column("city").to_pylist(),
            theirs.column("fare").to_pylist(),
            "hudi-rs",
        )
        if theirs.num_rows
        else {}
    )
    ours = pyhudi.read(spark, str(path)).select("uuid", "city", "fare").toArrow()
    py_state = _state_of(
        ours.column("uuid").to_pylist(),
        ours.column("city").to_pylist(),
        ours.column("fare").to_pylist(),
        "pyhudi",
    )
    if rs_state != py_state:
        only_rs = sorted(set(rs_state) - set(py_state))[:5]
        only_py = sorted(set(py_state) - set(rs_state))[:5]
        raise AssertionError(
            f"hudi-rs and pyhudi disagree on {path}: {len(rs_state)} vs {len(py_state)} rows; "
            f"only hudi-rs {only_rs}, only pyhudi {only_py}\n{timeline_summary(path)}"
        )
    return py_state


def data_files_on_disk(path: str | Path) -> set[str]:
    """Relative paths of every base and log file of the table (partition metafiles excluded),
    on local disk or object storage (`s3://...`)."""
    storage, root = Storage.for_uri(str(path))
    found = set()
    for status in storage.walk_files(root):
        relative = posixpath.relpath(status.path, root)
        partition, name = posixpath.split(relative)
        if (
            relative.split("/")[0] == ".hoodie"
            or is_partition_metafile(name)
            or name.endswith(".crc")
        ):
            continue
        assert parse_base_file(partition, name) or parse_log_file(partition, name), (
            f"unexpected file {relative} in {path}"
        )
        found.add(relative)
    return found


def referenced_files(path: str | Path) -> set[str]:
    """Files of every committed slice of every file group (replaced groups included)."""
    view = TableContext.open(str(path)).view()
    found = set()
    for group in view.file_groups(include_replaced=True):
        for file_slice in group.slices:
            if file_slice.base_file is not None:
                found.add(file_slice.base_file.relative_path)
            found.update(log.relative_path for log in file_slice.log_files)
    return found


def assert_no_orphans(path: str | Path) -> None:
    orphans = sorted(data_files_on_disk(path) - referenced_files(path))
    assert not orphans, f"orphan data files in {path}: {orphans}\n{timeline_summary(path)}"


def timeline_summary(path: str | Path) -> str:
    storage, root = Storage.for_uri(str(path))
    files = storage.list_dir(posixpath.join(root, ".hoodie"))
    if not files:
        return "(no .hoodie)"
    names = sorted(
        name for f in files if not f.is_dir and (name := posixpath.basename(f.path))[0].isdigit()
    )
    return "timeline: " + " ".join(names)


def completed(path: str | Path) -> list[str]:
    """Completed instant times of commits, deltacommits and replacecommits, oldest first."""
    return [i.time for i in pyhudi.HudiTable(str(path)).commits()]


def apply_writes(
    base: Mapping[str, tuple[str, float]], writes: Iterable[Mapping[str, tuple[str, float]]]
) -> State:
    """The state after `writes` (upserts, in commit order) on top of `base`."""
    state = dict(base)
    for rows in writes:
        state.update(rows)
    return state
