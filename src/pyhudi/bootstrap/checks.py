"""Bootstrap inputs checked before a table is created: column names and partition folders.

Source columns (and hive `k=v` folder columns) must be valid Avro names (no sanitizing here:
METADATA_ONLY file groups keep reading the source files under their own names). The Hudi partition
path of every METADATA_ONLY source folder (after `hoodie.bootstrap.partitionpath.translator.class`,
which may decode `%2F`/`%2E`) must be a portable path below the table (`pyhudi.storage.segments`).
FULL_RECORD partitions come from the key generator and are checked per batch in the tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyhudi.bootstrap.source import Source, SourcePartition
from pyhudi.codec.avro_names import check_field_names
from pyhudi.exceptions import InvalidRecordError
from pyhudi.storage.segments import partition_path_problem


def check_source(
    source: Source, metadata_only: Sequence[SourcePartition], translate: Callable[[str], str]
) -> None:
    """`SchemaMismatchError` / `InvalidRecordError` naming the column or source folder."""
    check_field_names(source.data_schema)
    for partition in metadata_only:
        if not partition.relative_path:
            continue  # an unpartitioned source: files at the source root
        path = translate(partition.relative_path)
        problem = partition_path_problem(path)
        if problem is not None:
            raise InvalidRecordError(
                f"bootstrap source folder {partition.relative_path!r} becomes partition path "
                f"{path!r}, which has {problem}; rename the folder or bootstrap it as "
                "FULL_RECORD with a key generator (nothing was written)"
            )
