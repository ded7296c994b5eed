"""Reading a METADATA_ONLY bootstrapped base file: skeleton row i + source row i (by position),
and the source-file helpers the bootstrap shares with it (format, hive folder values)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

from pyhudi.codec.schema import META_FIELDS
from pyhudi.exceptions import CorruptFileError
from pyhudi.storage import Storage

_FORMATS = {".parquet": "parquet", ".orc": "orc"}


def hive_folder_values(path: str) -> dict[str, str]:
    """The `k=v` segments of a folder path as {column: value} (hive-style partition folders)."""
    return dict(segment.split("=", 1) for segment in path.split("/") if "=" in segment)


def file_format_of(name: str) -> str | None:
    for suffix, kind in _FORMATS.items():
        if name.endswith(suffix) or (kind == "parquet" and ".parquet" in name):
            return kind
    return None


def read_source_file(
    storage: Storage, path: str, file_format: str, columns: list[str] | None = None
) -> pa.Table:
    with storage.open_input(path) as handle:
        if file_format == "orc":
            return orc.ORCFile(handle).read(columns=columns)
        return pq.read_table(handle, columns=columns)


def with_partition_columns(
    table: pa.Table, values: dict[str, str], columns: tuple[str, ...]
) -> pa.Table:
    """Add the hive folder values of `columns` as constant string columns."""
    for column in columns:
        table = table.append_column(
            column, pa.repeat(values.get(column), table.num_rows).cast(pa.string())
        )
    return table


def stitch_rows(
    source_uri: str, skeleton: pa.Table, partition: str, schema: pa.Schema, skeleton_name: str
) -> pa.Table:
    """Meta columns from the skeleton, data columns from the source file, zipped by row position."""
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
    """`stitch_rows` for a read task (`pyhudi.file_group.slice_reader.SliceTask`)."""
    return stitch_rows(
        task.bootstrap_source, skeleton, task.partition_path, task.file_schema, task.base_file
    )
