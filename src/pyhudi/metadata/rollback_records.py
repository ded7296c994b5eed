"""`files` partition records of a data-table rollback (Hudi 0.14
`HoodieTableMetadataUtil.processRollbackMetadata`), pure code.

Hudi's metadata writer commits them as a deltacommit at the data rollback's own time, before it
rolls back the metadata table's deltacommit of the rolled-back instant (at `<rollback time>006`).
Per partition where the rollback appended ROLLBACK command blocks (`rollbackLogFiles`), one file
list record adding those log files and the failed commit's own log files (`logFilesFromFailedCommit`:
they stay on storage, their blocks now rolled back), each with its largest size. Files the
rollback deleted are not recorded: the rolled-back instant never reached the listing (its
deltacommit is rolled back too). pyhudi deletes a failed write's log files when the write created
the file group; those (in `successDeleteFiles`) are left out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from pyhudi.codec.metadata_hfile import file_list_record
from pyhudi.codec.metadata_records import MetadataRecord


def rollback_files_records(rollback_metadata: Mapping[str, Any]) -> list[MetadataRecord]:
    """The `files` records of one completed rollback (the decoded Avro `HoodieRollbackMetadata`)."""
    records: list[MetadataRecord] = []
    partitions = rollback_metadata.get("partitionMetadata") or {}
    for key in sorted(partitions):
        info = partitions[key]
        rollback_logs = info.get("rollbackLogFiles") or {}
        if not rollback_logs:
            continue
        deleted = {posixpath.basename(p) for p in info.get("successDeleteFiles") or ()}
        sizes: dict[str, int] = {}
        for path, size in [
            *rollback_logs.items(),
            *(info.get("logFilesFromFailedCommit") or {}).items(),
        ]:
            name = posixpath.basename(path)
            if name not in deleted:
                sizes[name] = max(sizes.get(name, 0), int(size))
        records.append(file_list_record(info.get("partitionPath", key), sizes))
    return records
