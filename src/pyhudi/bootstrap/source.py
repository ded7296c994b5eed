"""The existing table to bootstrap: its partitions (leaf folders with data files), files and schema."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
from pyspark.sql.types import StructField, StructType

from pyhudi.config import bootstrap as bootstrap_keys
from pyhudi.exceptions import ConfigError
from pyhudi.file_group.stitch import file_format_of, hive_folder_values
from pyhudi.spark_compat import from_arrow_schema
from pyhudi.storage import FileStatus, Storage
from pyhudi.writer.schema import arrow_data_schema, normalize_spark_type

_SPARK_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"


@dataclass(frozen=True)
class SourceJob:
    """One source file; for METADATA_ONLY also the skeleton file group it becomes."""

    source_path: str
    source_folder: str  # partition folder relative to the source base path
    partition_path: str  # the Hudi partition path (translated source folder)
    hive_values: dict[str, str]
    file_id: str = ""
    size_bytes: int = 0  # as listed: the bootstrap index records it, tasks are balanced by it
    modification_time_ms: int = 0


@dataclass(frozen=True)
class SourcePartition:
    relative_path: str  # folder relative to the source base path ("" for an unpartitioned source)
    files: tuple[FileStatus, ...]

    @property
    def hive_values(self) -> dict[str, str]:
        """`k=v` folder segments as (column, value)."""
        return hive_folder_values(self.relative_path)


@dataclass(frozen=True)
class Source:
    storage: Storage
    base_path: str
    partitions: tuple[SourcePartition, ...]
    file_format: str
    file_schema: pa.Schema  # columns stored in the files
    partition_columns: tuple[
        str, ...
    ]  # hive `k=v` columns not stored in the files (added as strings)

    @property
    def uri(self) -> str:
        return self.storage.uri(self.base_path)

    @property
    def data_schema(self) -> pa.Schema:
        extra = [pa.field(c, pa.string()) for c in self.partition_columns]
        return pa.schema([*self.file_schema, *extra])

    def file_uri(self, status: FileStatus) -> str:
        return self.storage.uri(status.path)


def discover(uri: str) -> Source:
    """List the source: every folder holding parquet/ORC files is a partition."""
    storage, base_path = Storage.for_uri(uri)
    if not storage.is_dir(base_path):
        raise ConfigError(f"hoodie.bootstrap.base.path {uri} is not a folder")
    by_folder: dict[str, list[FileStatus]] = {}
    formats = set()
    prefix = base_path.rstrip("/") + "/"
    for status in storage.walk_files(base_path):
        relative = status.path[len(prefix) :]
        folder, name = posixpath.split(relative)
        if name.startswith((".", "_")) or any(
            part.startswith((".", "_")) for part in folder.split("/") if part
        ):
            continue
        kind = file_format_of(name)
        if kind is None:
            continue
        formats.add(kind)
        by_folder.setdefault(folder, []).append(status)
    if not by_folder:
        raise ConfigError(f"no parquet or ORC files under hoodie.bootstrap.base.path {uri}")
    if len(formats) > 1:
        raise ConfigError(
            f"the source {uri} mixes file formats {sorted(formats)}; bootstrap one format at a time"
        )
    partitions = tuple(
        SourcePartition(f, tuple(sorted(fs, key=lambda s: s.path)))
        for f, fs in sorted(by_folder.items())
    )
    file_format = formats.pop()
    schema = read_schema(storage, partitions[0].files[0].path, file_format)
    hive = [k for k in partitions[0].hive_values if k not in schema.names]
    return Source(storage, base_path, partitions, file_format, schema, tuple(hive))


def read_schema(storage: Storage, path: str, file_format: str) -> pa.Schema:
    """The columns of a source file in the types a Spark reader sees and a Hudi table holds.

    Spark-written parquet carries Spark's own schema, which is taken as is. Otherwise INT96 columns
    (and ORC timestamps) are instants, as Spark reads them, not naive timestamps as Arrow would.
    """
    with storage.open_input(path) as handle:
        if file_format == "orc":
            arrow = orc.ORCFile(handle).schema
            spark_schema = from_arrow_schema(_as_instants(arrow, set(arrow.names)))
        else:
            parquet = pq.ParquetFile(handle)
            arrow = parquet.schema_arrow
            saved = (arrow.metadata or {}).get(_SPARK_ROW_METADATA)
            if saved is not None:
                spark_schema = StructType.fromJson(json.loads(saved))
            else:
                int96 = {
                    column.path
                    for column in parquet.schema
                    if column.physical_type == "INT96" and "." not in column.path
                }
                spark_schema = from_arrow_schema(_as_instants(arrow, int96))
    return arrow_data_schema(
        StructType(
            [StructField(f.name, normalize_spark_type(f.dataType), True) for f in spark_schema]
        )
    )


def _as_instants(schema: pa.Schema, names: set[str]) -> pa.Schema:
    fields = [
        f.with_type(pa.timestamp("us", "UTC"))
        if f.name in names and pa.types.is_timestamp(f.type) and f.type.tz is None
        else f
        for f in schema
    ]
    return pa.schema(fields)


def partition_translator(options: Mapping[str, str]) -> Callable[[str], str]:
    """`hoodie.bootstrap.partitionpath.translator.class`: source folder -> Hudi partition path."""
    name = (bootstrap_keys.PARTITION_PATH_TRANSLATOR.get(options) or "").strip().rsplit(".", 1)[-1]
    if name == "IdentityBootstrapPartitionPathTranslator":
        return lambda folder: folder
    if name == "DecodedBootstrapPartitionPathTranslator":
        return unescape_path_name
    raise ConfigError(
        f"unknown {bootstrap_keys.PARTITION_PATH_TRANSLATOR.key} {name!r}; use "
        "IdentityBootstrapPartitionPathTranslator or DecodedBootstrapPartitionPathTranslator"
    )


def unescape_path_name(path: str) -> str:
    """Undo Hive's path escaping: every `%XX` (two hex digits) becomes that character."""
    out, i = [], 0
    while i < len(path):
        code = path[i + 1 : i + 3]
        if path[i] == "%" and len(code) == 2 and all(c in "0123456789abcdefABCDEF" for c in code):
            out.append(chr(int(code, 16)))
            i += 3
        else:
            out.append(path[i])
            i += 1
    return "".join(out)
