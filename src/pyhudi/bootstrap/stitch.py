"""Reading a METADATA_ONLY bootstrapped base file: skeleton row i + source row i (by position)."""

from __future__ import annotations

import pyarrow as pa

from pyhudi.codec.schema import META_FIELDS
from pyhudi.exceptions import CorruptFileError
from pyhudi.storage import Storage


def stitch_rows(
    source_uri: str, skeleton: pa.Table, partition: str, schema: pa.Schema, skeleton_name: str
) -> pa.Table:
    """Meta columns from the skeleton, data columns from the source file, zipped by row position."""
    from pyhudi.bootstrap.source import (
        file_format_of,
        hive_folder_values,
        read_source_file,
        with_partition_columns,
    )

    storage, path = Storage.for_uri(source_uri)
    source = read_source_file(storage, path, file_format_of(source_uri) or "parquet")
    if source.num_rows != skeleton.num_rows:
        raise CorruptFileError(
            f"bootstrap skeleton {skeleton_name} has {skeleton.num_rows} rows but its source file "
            f"{source_uri} has {source.num_rows}: the source changed after the bootstrap"
        )
    missing = [
        f.name for f in schema if f.name not in META_FIELDS and f.name not in source.column_names
    ]
    if missing:  # hive-style source folders (`k=v`) hold columns the files do not store
        values = hive_folder_values(partition)
        source = with_partition_columns(source, values, tuple(m for m in missing if m in values))
    columns = {name: skeleton.column(name) for name in META_FIELDS if name in skeleton.column_names}
    for name in source.column_names:
        columns.setdefault(name, source.column(name))
    return pa.table(columns)


def stitch_bootstrap_rows(task, skeleton: pa.Table) -> pa.Table:  # type: ignore[no-untyped-def]
    """`stitch_rows` for a read task (`pyhudi.reader.slices.SliceTask`)."""
    return stitch_rows(
        task.bootstrap_source, skeleton, task.partition_path, task.file_schema, task.base_file
    )
