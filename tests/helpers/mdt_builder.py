"""Hand-built metadata tables in Hudi 0.14's layout (table version 6) over a real v6 data table.

`MdtBuilder` copies the real table `cow__v6_simplekeygen_nonhivestyle` (two commits), gives it a
metadata table initialised at `00000000000000010` (base HFile `files-0000-0_0-0-0_<init>.hfile`
listing the files committed so far) and then adds data commits that write a real parquet file
(a copy of an existing one under a new file id) together with the metadata table's deltacommit
for them: one new log version per deltacommit (an HFILE_DATA_BLOCK of the commit's `files`
records), an APPEND marker in the metadata table's `.hoodie/.temp/<instant>`, and commit metadata
naming the log file - what pyhudi's metadata writer writes. Either side can be left pending.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pyhudi.codec.commit_metadata import encode_commit_metadata
from pyhudi.codec.file_names import log_file_name, marker_name, parse_base_file, parse_log_file
from pyhudi.codec.log.writer import encode_blocks, hfile_data_block
from pyhudi.codec.metadata_hfile import (
    file_list_record,
    metadata_schema_json,
    partition_list_record,
    write_metadata_hfile,
)
from pyhudi.config import table as keys
from pyhudi.metadata import MetadataTable
from pyhudi.model.commit import CommitMetadata, WriteStat
from pyhudi.model.enums import IOType, WriteOperationType
from pyhudi.model.instant import Action, Instant
from pyhudi.table.context import TableContext

INIT = "00000000000000010"
FILES_GROUP = "files-0000-0"
MDT_PROPS = {
    "hoodie.table.name": "v6_simplekeygen_nonhivestyle_metadata",
    "hoodie.table.type": "MERGE_ON_READ",
    "hoodie.table.version": "6",
    "hoodie.timeline.layout.version": "1",
    "hoodie.table.base.file.format": "HFILE",
    "hoodie.table.recordkey.fields": "key",
    "hoodie.populate.meta.fields": "false",
    "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
    "hoodie.archivelog.folder": "archived",
}
PARTITIONS = ("10", "20", "30")


def disk_files(root: Path, completed: set[str]) -> dict[str, dict[str, int]]:
    """Committed parquet files on disk by partition (their instant in `completed`)."""
    found: dict[str, dict[str, int]] = {}
    for partition in PARTITIONS:
        for name in sorted(os.listdir(root / partition)):
            base = parse_base_file(partition, name)
            if base is not None and base.instant_time in completed:
                found.setdefault(partition, {})[name] = (root / partition / name).stat().st_size
    return found


class MdtBuilder:
    def __init__(self, source: Path, root: Path) -> None:
        shutil.copytree(source, root)
        self.root = root
        self.mdt_root = root / ".hoodie" / "metadata"
        data = self.data()
        data.update_properties({keys.METADATA_PARTITIONS.key: "files"})
        mdt = TableContext.create(str(self.mdt_root), MDT_PROPS)
        listed = disk_files(root, set(data.active.timeline.completed().times()))
        records = [partition_list_record(listed)]
        records += [file_list_record(p, files) for p, files in listed.items()]
        name = f"{FILES_GROUP}_0-0-0_{INIT}.hfile"
        (self.mdt_root / "files").mkdir()
        (self.mdt_root / "files" / name).write_bytes(
            write_metadata_hfile(records, base_file_name=name)
        )
        requested = mdt.active.create_requested(INIT, Action.DELTA_COMMIT)
        inflight = mdt.active.transition_to_inflight(requested)
        stat = WriteStat(FILES_GROUP, f"files/{name}", "files", file_size_bytes=1)
        mdt.active.complete(inflight, _commit({"files": (stat,)}))
        self.count = 0

    def data(self) -> TableContext:
        return TableContext.open(str(self.root))

    def mdt(self) -> TableContext:
        return TableContext.open(str(self.mdt_root))

    # ---- the data side ---------------------------------------------------------------------
    def write_data(self, time: str, partition: str = "10", *, complete: bool = True) -> str:
        """A new parquet file in `partition` written by `time` (marker + instant); its name."""
        data = self.data()
        folder = self.root / partition
        source = sorted(n for n in os.listdir(folder) if n.endswith(".parquet"))[0]
        self.count += 1
        name = f"a{self.count:07d}-aaaa-bbbb-cccc-dddddddddddd-0_0-1-0_{time}.parquet"
        shutil.copyfile(folder / source, folder / name)
        marker = Path(data.marker_folder(time)) / partition / marker_name(name, IOType.CREATE)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_bytes(b"")
        inflight = data.active.transition_to_inflight(
            data.active.create_requested(time, Action.COMMIT)
        )
        if complete:
            stat = WriteStat(
                name.split("_")[0], f"{partition}/{name}", partition, file_size_bytes=1
            )
            data.active.complete(inflight, _commit({partition: (stat,)}))
            shutil.rmtree(data.marker_folder(time))
        return name

    # ---- the metadata side -----------------------------------------------------------------
    def deltacommit(
        self,
        time: str,
        added: dict[str, dict[str, int]] | None = None,
        deleted: dict[str, list[str]] | None = None,
        *,
        complete: bool = True,
    ) -> str:
        """The metadata table's deltacommit at `time`: a new log version of `files-0000-0` holding
        the `files` records; returns the log file name."""
        mdt = self.mdt()
        added, deleted = added or {}, deleted or {}
        records = []
        new_partitions = [p for p in added if p not in self.listed_partitions()]
        if new_partitions:
            records.append(partition_list_record(new_partitions))
        for partition in sorted(set(added) | set(deleted)):
            records.append(
                file_list_record(partition, added.get(partition), deleted.get(partition, ()))
            )
        base_instant = self.latest_base_instant()
        folder = self.mdt_root / "files"
        versions = [
            log.version
            for n in os.listdir(folder)
            if (log := parse_log_file("files", n)) and log.base_instant_time == base_instant
        ]
        name = log_file_name(FILES_GROUP, base_instant, max(versions, default=0) + 1, "0-1-0")
        requested = mdt.active.create_requested(time, Action.DELTA_COMMIT)
        inflight = mdt.active.transition_to_inflight(requested)
        marker = Path(mdt.marker_folder(time)) / "files"
        marker.mkdir(parents=True, exist_ok=True)
        base_name = f"{FILES_GROUP}_0-1-0_{base_instant}.hfile"
        (marker / marker_name(base_name, IOType.APPEND)).write_bytes(b"")
        block = hfile_data_block(time, metadata_schema_json(), write_metadata_hfile(records))
        (folder / name).write_bytes(encode_blocks([block]))
        if complete:
            stat = WriteStat(
                FILES_GROUP,
                f"files/{name}",
                "files",
                file_size_bytes=(folder / name).stat().st_size,
                base_file=base_name,
                log_files=(name,),
            )
            mdt.active.complete(inflight, _commit({"files": (stat,)}))
            shutil.rmtree(mdt.marker_folder(time))
        return name

    def commit(self, time: str, partition: str = "10", *, replaces: str | None = None) -> str:
        """A completed data commit and its completed metadata deltacommit; `replaces` names a file
        of the partition the commit deletes from storage (listed as deleted, a tombstone)."""
        name = self.write_data(time, partition)
        deleted = {}
        if replaces is not None:
            (self.root / partition / replaces).unlink()
            deleted[partition] = [replaces]
        size = (self.root / partition / name).stat().st_size
        self.deltacommit(time, {partition: {name: size}}, deleted)
        return name

    def listed_partitions(self) -> set[str]:
        return set(MetadataTable.open(self.data()).all_partitions())

    def latest_base_instant(self) -> str:
        bases = [
            b.instant_time
            for n in os.listdir(self.mdt_root / "files")
            if (b := parse_base_file("files", n)) is not None
        ]
        return max(bases)


def _commit(stats: dict[str, tuple[WriteStat, ...]]) -> bytes:
    return encode_commit_metadata(
        CommitMetadata(partition_to_write_stats=stats, operation_type=WriteOperationType.UPSERT)
    )


def instant(ctx: TableContext, time: str) -> Instant:
    (found,) = [i for i in ctx.active.timeline if i.time == time]
    return found
